// Node processes that an in-process run starts (a tool run as `node tool.js`, an MCP server over
// stdio, a shell that runs Node) record into the run's recording, as `tapedeck record`'s agent
// processes do: each gets the record preload (NODE_OPTIONS), this process's child door (a Unix
// socket, made at the first such start) and the run's token in its environment, and its name in
// the run's tree (TAPEDECK_PROCESS: the run's n-th start, as in the run's replay, whose program
// starts them again). The door hands what each sends to the recording of the run whose token it
// said first; a run that has ended takes nothing more. The messages are the preload's, checked by
// the session as every capture message is, and redacted before any byte is written.
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { noteLeftover } from '../../sandbox/leftovers.js';
import { onLines } from '../../sandbox/ndjson.js';
import { withPythonHook } from '../../sandbox/python/hook.js';
import { withRecordPreload } from './command.js';

/** Where a run's children's messages go: its recording. */
export interface ChildSink {
  send(message: unknown): void;
  sync(message: Record<string, unknown>): Promise<unknown>;
}

/** One run's side of the door. */
export interface ChildRun {
  /** The variables of a process the run starts, given its environment as it would start. */
  env(env: Record<string, string | undefined>): Record<string, string>;
  /** The run has ended: what its children sent before is taken, their later messages dropped. */
  close(): Promise<void>;
}

interface Door {
  path: string;
  server: net.Server;
  sockets: Set<net.Socket>;
  forget: () => void;
  /** Connections taken and reads done so far: what a closing run waits to see settle. */
  activity: number;
}

let door: Door | undefined;
const runs = new Map<string, ChildSink>();

/** Registers a run; its children record through `sink` with `options` (the preload's). */
export function openChildRun(sink: ChildSink, options: { maxBody: number; nondeterminism: boolean }): ChildRun {
  const token = randomBytes(16).toString('hex');
  runs.set(token, sink);
  let started = 0;
  return {
    env(env) {
      const at = openDoor();
      return {
        NODE_OPTIONS: withRecordPreload(env.NODE_OPTIONS),
        TAPEDECK_RECORD_IPC: at,
        TAPEDECK_RECORD_RUN: token,
        TAPEDECK_RECORD_OPTIONS: JSON.stringify(options),
        TAPEDECK_PROCESS: String(++started),
        // A Python process records its values into the run too, and names the connections it
        // opens (sandbox/python/hook.ts: its hello says the run's token).
        ...withPythonHook({ PYTHONPATH: env.PYTHONPATH ?? '' }),
        // What the run's processes start with an env of their own keeps (keepGivenEnv).
        TAPEDECK_KEEP_ENV:
          'PYTHONPATH,TAPEDECK_PYTHON_HOOK,TAPEDECK_RECORD_IPC,TAPEDECK_RECORD_OPTIONS,TAPEDECK_RECORD_RUN',
      };
    },
    async close() {
      // A child that has just ended wrote its last events before it did: they may wait in this
      // turn's events still, behind the one that ended the run's wait for it, or, for a child
      // started synchronously (execFileSync, spawnSync: this thread was blocked while it ran), in
      // the door's backlog, taken at the loop's next poll and read at the one after.
      if (started > 0) await settled();
      runs.delete(token);
    },
  };
}

/** Loop turns a closing run waits at most for the door's connections and reads to settle. */
const SETTLE_TURNS = 20;

/** Returns once a whole turn of the event loop (its poll included) took no connection or read at the door. */
async function settled(): Promise<void> {
  for (let turn = 0; turn < SETTLE_TURNS && door !== undefined; turn++) {
    const before = door.activity;
    await new Promise((resolve) => setTimeout(resolve, 1));
    await new Promise((resolve) => setImmediate(resolve));
    if (door === undefined || door.activity === before) return;
  }
}

/** Closes the door (no run is recorded any more): its socket file goes with it. */
export function closeChildDoor(): void {
  const open = door;
  if (open === undefined || runs.size > 0) return;
  door = undefined;
  open.server.close();
  for (const socket of open.sockets) socket.destroy();
  rmSync(open.path, { force: true });
  open.forget();
}

/** The door's socket path, made now if it is not open (the bind is done before this returns). */
function openDoor(): string {
  if (door !== undefined) return door.path;
  const at = path.join(os.tmpdir(), `tapedeck-children-${process.pid}-${randomBytes(4).toString('hex')}.sock`);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    if (door !== undefined) door.activity++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let sink: ChildSink | undefined;
    let token: string | undefined;
    onLines(socket, (lines) => {
      if (door !== undefined) door.activity++;
      for (const line of lines) {
        let message: { t?: unknown; run?: unknown; n?: unknown } & Record<string, unknown>;
        try {
          message = JSON.parse(line);
        } catch {
          continue;
        }
        if (message === null || typeof message !== 'object') continue;
        if (token === undefined) {
          // The first message says whose run this process is of; one that does not is not heard.
          if (message.t !== 'hello' || typeof message.run !== 'string' || !runs.has(message.run)) {
            socket.destroy();
            return;
          }
          token = message.run;
          sink = runs.get(token);
          continue;
        }
        if (sink === undefined || runs.get(token) !== sink) continue;
        if (message.t === 'sync') {
          const n = message.n;
          void sink.sync(message).then(
            (answer) => {
              if (!socket.destroyed) socket.write(`${JSON.stringify(answer ?? { ack: n })}\n`);
            },
            () => {
              if (!socket.destroyed) socket.write(`${JSON.stringify({ ack: -1 })}\n`);
            },
          );
        } else sink.send(message);
      }
    });
  });
  server.on('error', () => {});
  server.unref();
  server.listen(at);
  // A killed process cannot remove its socket: the next tapedeck command does.
  const forget = noteLeftover({ kind: 'path', path: at });
  door = { path: at, server, sockets, forget, activity: 0 };
  return at;
}

/** Whether the door's socket exists (tests). */
export function childDoorOpen(): boolean {
  return door !== undefined && existsSync(door.path);
}
