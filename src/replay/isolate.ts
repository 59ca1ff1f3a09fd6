// The replay's OS sandbox (sandbox/os): the agent's whole process tree in namespaces, with three
// doors, all served here from outside:
//   - the preload's IPC (loopback inside; Unix sockets are closed there),
//   - the HTTP(S) proxy (sandbox/proxy): every HTTP call of a program that is not answered
//     in-process (curl, Python, wget, a Go binary, npm undici) goes to the SAME decision as the
//     preload's calls (session.answer → answerCall), with the run's CA trusted inside,
//   - the sandbox database: the sandbox URL's port and the recorded database's own host:port
//     inside lead to a Postgres relay that admits the sandbox database only;
//   - a recorded address of another machine (a database at 10.0.3.7, a service at
//     http://10.0.3.7:8080) is the sandbox's own inside (sandbox/os/netns.ts), served there: the
//     database's by the relay, a service's by the proxy as if the client had asked it for that
//     address — psql -h 10.0.3.7 and curl with NO_PROXY reach the sandbox, never the real machine;
//   - a recorded service at a host name (http://api.internal:8080) resolves inside to a loopback
//     address of its own (OsSandbox.named), served there by the proxy the same way.
// With bubblewrap the recorded fs root is a writable copy of the pre-snapshot (WorldCopy), read
// back at every call. Refused attempts (strace) and refused proxy traffic become divergences.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { DbSandbox } from '../../sandbox/db.js';
import { describeIsolation, type Isolation } from '../../sandbox/os/detect.js';
import { OtherMachineDoors, openNamedDoors, pipeConnections } from '../../sandbox/os/doors.js';
import { pathsIn } from '../../sandbox/os/launcher.js';
import { nonLoopback, otherMachines } from '../../sandbox/os/netns.js';
import { describeTree } from '../../sandbox/os/process-tree.mjs';
import { type OsSandbox, openOsSandbox } from '../../sandbox/os/sandbox.js';
import { nameServiceProbes, type OsAttempt } from '../../sandbox/os/trace.js';
import { pgTargetOf, startPgRelay } from '../../sandbox/pg-relay.js';
import { PYTHON_COVERED_ENV } from '../../sandbox/preload/shared-python.mjs';
import { type ReplayQuestion, type ReplayReply, wireBytes, wireOf } from '../../sandbox/protocol.js';
import type { RunCa } from '../../sandbox/proxy/ca.js';
import {
  createSandboxProxy,
  type HeaderPairs,
  type ProxyAttempt,
  type ProxyRequest,
  type ProxyResponse,
  type SandboxProxy,
} from '../../sandbox/proxy/server.js';
import { proxyEnv, type Trust, writeTrust } from '../../sandbox/proxy/trust.js';
import { isolatedSites, pythonsOf } from '../../sandbox/python/hook.js';
import { databaseSockets, loopbackPgEnv } from '../postgres/connect.js';
import { chunkBytes } from '../providers/index.js';
import { type Manifest, type Recording, TapedeckError } from '../recording/index.js';
import { recordedDbAddress } from './chain/index.js';
import type { AgentExit, AgentWatch, Teardown } from './setup.js';
import { WorldCopy } from './world-copy.js';

/** A refused attempt to leave the sandbox, with who made it when known. */
export interface SideChannel {
  target: string;
  how: string;
  process?: string;
}

export interface ReplaySandbox {
  readonly isolation: Isolation;
  readonly box: OsSandbox;
  /** The preload's IPC listener inside, and the address the preload connects to. */
  readonly ipcListener: net.Server;
  readonly ipcAddress: string;
  /** Loopback ports inside the preload may connect to (the proxy, the database ports). */
  readonly allow: Array<{ host: string; port: number }>;
  /** The recorded fs root as a copy on disk (bubblewrap), or undefined (the preload's memfs). */
  readonly world?: WorldCopy;
  /** Adds the proxy and CA variables to the agent's environment. */
  env(base: Record<string, string>): Record<string, string>;
  /** Opens `port` on loopback inside, each connection piped to `to` outside (a relay, a route's target). */
  expose(port: number, to: { host: string; port: number }): Promise<void>;
  /** What the replay should say: a recorded address of another machine the sandbox could not serve at that address. */
  readonly notes: string[];
  /** Gives the proxy its decision maker (the session), once it exists. */
  answerWith(answer: (message: ReplayQuestion) => Promise<ReplayReply>): void;
  run(
    command: string[],
    options: { cwd: string; env: Record<string, string>; stdio: 'inherit' | 'pipe' | 'ignore' },
    output: { stdout: string; stderr: string },
    watch: AgentWatch,
  ): Promise<AgentExit>;
  /** Everything refused so far: below the process (strace) and at the proxy; not name-service probes. */
  sideChannels(): SideChannel[];
  /** One line for the refused Unix sockets that look like glibc's name-service probe, if any. */
  probesNote(): string | undefined;
  /** Ends the agent's tree now (until K reached where no call of its own was asked: a WebSocket turn). */
  stopAgent(): void;
  /** Takes the world copy's changes, applies a reply's recorded effects to it (the preload must not). */
  withWorld(message: ReplayQuestion): Promise<ReplayQuestion>;
  settle(reply: ReplayReply): Promise<ReplayReply>;
}

const SET_COOKIE_SEPARATOR = '\n';

/** Recorded response headers as pairs; values a recorder kept apart with newlines stay apart. */
export function headerPairs(headers: Record<string, string> | undefined): HeaderPairs {
  const out: HeaderPairs = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    for (const v of String(value).split(SET_COOKIE_SEPARATOR)) out.push([name, v]);
  }
  return out;
}

function headerObject(pairs: HeaderPairs): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    out[key] = out[key] === undefined ? value : `${out[key]}, ${value}`;
  }
  return out;
}

function describeAttempt(a: OsAttempt): SideChannel {
  const how =
    a.kind === 'connect'
      ? `connect (${a.error})`
      : a.kind === 'send'
        ? `send (${a.error})`
        : a.kind === 'signal'
          ? `signal (${a.error})`
          : a.kind === 'write'
            ? `write (${a.error})`
            : `Unix socket (${a.error})`;
  return { target: a.target, how, process: `pid ${a.pid}${a.command ? ` (${a.command.slice(0, 120)})` : ''}` };
}

/** A replay's answer as an HTTP response for the proxy. */
function responseOf(reply: ReplayReply, timing: { kind: string; factor?: number }, signal: AbortSignal): ProxyResponse {
  if (reply.error) return { status: 0, headers: [], error: reply.error };
  const headers = headerPairs(reply.headers);
  if (reply.chunks) {
    const chunks = reply.chunks;
    const factor = timing.kind === 'none' ? 0 : timing.kind === 'scaled' ? (timing.factor ?? 1) : 1;
    return {
      status: reply.status ?? 200,
      ...(reply.statusText ? { statusText: reply.statusText } : {}),
      headers,
      body: (async function* () {
        const start = performance.now();
        for (const chunk of chunks) {
          const wait = factor > 0 ? start + chunk.offsetMs * factor - performance.now() : 0;
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          yield chunkBytes(chunk);
        }
        // Recorded as left by its client: it stays open, as it was then, until the client leaves.
        if (reply.open === true && reply.closeAfterStep === undefined && !signal.aborted)
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      })(),
    };
  }
  const bytes = wireBytes(reply.body);
  return {
    status: reply.status ?? 200,
    ...(reply.statusText ? { statusText: reply.statusText } : {}),
    headers,
    ...(bytes ? { body: bytes } : {}),
  };
}

/** The sandbox's first half, which needs only the manifest: the run's CA and the box (bwrap and its init). */
export interface StartedSandbox {
  isolation: Isolation;
  box: OsSandbox;
  ca: RunCa;
  trust: Trust;
  /** Where the world copy goes (bound read-write at the recorded fs root); filled by openReplaySandbox. */
  worldDir?: string;
  /** Why there is no world copy though the recording has an fs root (a warning of the replay). */
  worldNote?: string;
  /** In the OS sandbox, the interpreters (real paths) whose own sitecustomize is covered: -I/-E start the hook in them. */
  pythonsCovered?: string[];
}

/**
 * Starts the OS sandbox for one replay: the run's CA, then bubblewrap (or unshare) and its init.
 * It needs only the manifest, so a replay starts it while the recording's events are read; the
 * world copy, the database relay and the doors come after (openReplaySandbox).
 */
export async function startReplaySandbox(input: {
  isolation: Isolation;
  manifest: Manifest;
  tmp: string;
  cwd: string;
  command: string[];
  /** The agent's env as far as it says where programs are found (PATH, PYTHONPATH…: never the recording's). */
  env: NodeJS.ProcessEnv;
  /** Told once the sandbox's launcher is spawned (OsSandboxOptions.onLaunch). */
  onLaunch?: () => void;
}): Promise<StartedSandbox> {
  const { isolation, manifest, tmp, cwd } = input;
  // asn1js loads with it: only a replay in the OS sandbox needs a CA.
  const { createRunCa } = await import('../../sandbox/proxy/ca.js');
  const ca = await createRunCa();
  const trust = await writeTrust(tmp, ca);
  // The world copy: bubblewrap only (without a mount namespace the real root cannot be replaced).
  // Its folder is bound now and filled before the agent starts.
  const fsRoot = manifest.world?.fsRoot;
  const writable: Array<{ source: string; target?: string }> = [{ source: tmp }];
  let worldDir: string | undefined;
  // A recorded root that does not exist here cannot be a mount point in the read-only root (nor in
  // a private folder whose parent is bound back), and the real folder is never made: the replay
  // preload keeps its files in memory, as without the OS sandbox; a program that is not Node does
  // not see them.
  const inMemory = fsRoot !== undefined && isolation.level === 'bwrap' && !existsSync(fsRoot);
  if (fsRoot && isolation.level === 'bwrap' && !inMemory) {
    worldDir = path.join(tmp, 'world');
    await mkdir(worldDir, { recursive: true });
    writable.push({ source: worldDir, target: fsRoot });
  }
  const recordedDb = recordedDbAddress({ manifest });
  // Python processes started with -I or -E start the hook too (sandbox/python/hook.ts).
  const sites = await isolatedSites(pythonsOf(input.command, [input.env.PATH], cwd), tmp);
  const box = await openOsSandbox({
    isolation,
    cwd,
    writable,
    over: sites.over,
    visible: pathsIn(input.command, cwd, input.env),
    hosts: recordedDb && net.isIP(recordedDb.host) === 0 && recordedDb.host !== 'localhost' ? [recordedDb.host] : [],
    caPem: ca.certPem,
    ...(input.onLaunch ? { onLaunch: input.onLaunch } : {}),
  });
  const worldNote = inMemory
    ? `the recorded fs root ${fsRoot} does not exist on this machine: its files are the replay preload's, in memory (Node processes see them; other programs do not)`
    : undefined;
  return {
    isolation,
    box,
    ca,
    trust,
    ...(isolation.level === 'bwrap' ? { pythonsCovered: sites.covered } : {}),
    ...(worldDir ? { worldDir } : {}),
    ...(worldNote ? { worldNote } : {}),
  };
}

/** Opens the rest of the sandbox for one replay (not yet the agent): the world copy and the doors. */
export async function openReplaySandbox(input: {
  started: StartedSandbox;
  recording: Recording;
  fsRoot: string | undefined;
  db: DbSandbox | undefined;
  timing: { kind: string; factor?: number };
  teardown: Teardown;
  /**
   * An HTTP upgrade through the proxy (a client behind HTTPS_PROXY): a socket to what answers it
   * (the replay's WebSocket answerer, src/replay/websocket.ts), or undefined to refuse it.
   */
  upgrade?: (target: { host: string; port: number }) => Promise<net.Socket | undefined>;
  /** The recorded calls' URLs: those at another machine's IP address are served at it inside. */
  urls?: Iterable<string>;
}): Promise<ReplaySandbox> {
  const { started, recording, fsRoot, db, teardown } = input;
  const { isolation, box, ca, trust } = started;
  let world: WorldCopy | undefined;
  if (fsRoot && started.worldDir) {
    world = await WorldCopy.create(started.worldDir, fsRoot, recording.pre.fs, recording.readBlob);
    const copy = world;
    teardown.add(async () => copy.close());
  }
  const recordedDb = recordedDbAddress(recording);
  const recordedSockets = db ? databaseSockets([recording.manifest.world?.db?.url]) : [];

  const refused: SideChannel[] = [];
  let answer: ((message: ReplayQuestion) => Promise<ReplayReply>) | undefined;
  let agentKill: (() => void) | undefined;
  const withWorld = async (message: ReplayQuestion): Promise<ReplayQuestion> => {
    if (!world) return message;
    return { ...message, fs: [...(message.fs ?? []), ...(await world.take())] };
  };
  const settle = async (reply: ReplayReply): Promise<ReplayReply> => {
    if (!world || !reply.effects?.length) return reply;
    await world.apply(reply.effects);
    const { effects: _applied, ...rest } = reply;
    return rest;
  };
  const proxy: SandboxProxy = createSandboxProxy({
    ca,
    ...(input.upgrade === undefined
      ? {}
      : {
          passThrough: (target: { host: string; port: number }, kind: 'tunnel' | 'upgrade') =>
            kind === 'upgrade' ? (input.upgrade?.(target) ?? Promise.resolve(undefined)) : Promise.resolve(undefined),
        }),
    answer: async (request: ProxyRequest) => {
      if (!answer) throw new Error('the replay is not ready');
      // Notices of calls the preload answered itself, written just before this program started,
      // are read first (one turn of the loop), so the call is decided in recorded order.
      await new Promise((resolve) => setImmediate(resolve));
      const reply = await settle(
        await answer(
          await withWorld({
            kind: 'http',
            method: request.method,
            url: request.url,
            headers: headerObject(request.headers),
            body: wireOf(request.body),
          }),
        ),
      );
      if (reply.stop) {
        // until K: the agent's tree stops before the call that would be step K+1.
        agentKill?.();
        return { status: 503, headers: [['x-tapedeck-stopped', '1']], body: '' };
      }
      return responseOf(reply, input.timing, request.signal);
    },
    onRefused: (attempt: ProxyAttempt) =>
      refused.push({
        target: attempt.target,
        how: `through the proxy: ${attempt.reason}`,
        ...(attempt.pid ? { process: `pid ${attempt.pid}` } : {}),
      }),
  });
  teardown.add(() => proxy.close());
  const allow: Array<{ host: string; port: number }> = [];
  const exposed = new Set<number>();
  const expose = async (port: number, to: { host: string; port: number }) => {
    if (exposed.has(port)) return;
    exposed.add(port);
    const listener = await box.listen(port).catch((error: Error) => {
      throw new TapedeckError('SANDBOX_FAILED', `Cannot open port ${port} inside the sandbox: ${error.message}`);
    });
    allow.push({ host: '127.0.0.1', port });
    teardown.add(async () => {
      listener.close();
    });
    pipeConnections(listener, to);
  };
  const notes: string[] = [];
  // At another machine's IP address, that address inside (sandbox/os/doors.ts).
  const doors = new OtherMachineDoors(box, (door, at) => {
    allow.push(at);
    teardown.add(async () => {
      door.close();
    });
  });
  if (db) {
    // Every database connection inside goes to a relay that takes it to the sandbox database,
    // whatever database it names: the sandbox URL's own port, and the recorded address (at
    // another machine's IP address, that address too).
    const relay = await startPgRelay(pgTargetOf(db.url));
    teardown.add(() => relay.close());
    await expose(db.port, relay);
    if (recordedDb) await expose(recordedDb.port, relay);
    if (recordedDb && nonLoopback(recordedDb.host)) {
      const listener = await doors.open(recordedDb.host, recordedDb.port, 'the recorded database');
      if (listener) pipeConnections(listener, relay);
    }
  }
  // A recorded service at another machine's address: a program that reaches it directly (curl with
  // NO_PROXY naming it, a client that ignores the proxy variables) is answered as through the proxy.
  for (const target of otherMachines(input.urls ?? [])) {
    const listener = await doors.open(target.host, target.port, 'a recorded service');
    if (listener) proxy.serveAs(listener, target);
  }
  // A recorded service at a host name (http://api.internal:8080, https://billing.svc.cluster.local):
  // the name resolves inside to an address of its own, where the proxy answers as it would have
  // (a certificate for the name, from the run's CA) a client that skips the proxy (NO_PROXY naming
  // it, python's trust_env=False, a script that unsets HTTP_PROXY).
  const named = await openNamedDoors(box, input.urls ?? [], (listener, target) => proxy.serveAs(listener, target));
  named.listeners.forEach((listener, i) => {
    allow.push({ host: named.addresses[i] as string, port: listener.insidePort });
    teardown.add(async () => {
      listener.close();
    });
  });
  notes.push(...doors.notes);
  if (named.unserved.length > 0)
    notes.push(
      `recorded services cannot be served at their host names inside the sandbox on this machine, for programs that skip the proxy: ${named.unserved.join(', ')}`,
    );
  // The ports chosen inside come after the fixed ones: an ephemeral port the kernel picked for
  // one of them could be the recorded database's port (a replay failed so: EADDRINUSE).
  const proxyListener = await box.listen();
  proxy.serve(proxyListener);
  const ipcListener = await box.listen();
  allow.push(
    { host: '127.0.0.1', port: proxyListener.insidePort },
    { host: '127.0.0.1', port: ipcListener.insidePort },
  );

  const proxyUrl = `http://127.0.0.1:${proxyListener.insidePort}`;
  return {
    isolation,
    box,
    ipcListener,
    ipcAddress: `tcp:127.0.0.1:${ipcListener.insidePort}`,
    allow,
    ...(world ? { world } : {}),
    notes,
    withWorld,
    settle,
    env(base) {
      return {
        ...proxyEnv(base, proxyUrl, trust),
        ...loopbackPgEnv(base, recordedSockets),
        TAPEDECK_PROXY: proxyUrl,
        ...(started.pythonsCovered ? { [PYTHON_COVERED_ENV]: started.pythonsCovered.join(path.delimiter) } : {}),
      };
    },
    expose,
    answerWith(fn) {
      answer = fn;
    },
    stopAgent: () => agentKill?.(),
    async run(command, options, output, watch) {
      const out = box.child.stdout;
      const err = box.child.stderr;
      const sink = (stream: NodeJS.ReadableStream | null, key: 'stdout' | 'stderr') => {
        if (!stream) return;
        stream.on('data', (d: Buffer) => {
          watch.output();
          if (options.stdio === 'pipe') output[key] += d.toString('utf8');
          else if (options.stdio === 'inherit') (key === 'stdout' ? process.stdout : process.stderr).write(d);
        });
        stream.resume();
      };
      sink(out, 'stdout');
      sink(err, 'stderr');
      const proc = box.spawn(command, { env: options.env, cwd: options.cwd, stdio: 'inherit', trace: true });
      agentKill = () => proc.kill('SIGKILL', { tree: true });
      const launcher = box.child.pid;
      watch.started({
        stop: () => proc.kill('SIGKILL', { tree: true }),
        // Seen from here, the sandbox's processes under its launcher, less the launcher, init and strace.
        describe: async () =>
          launcher === undefined ? 'inside the OS sandbox' : describeTree(launcher, { hide: SANDBOX_OWN }),
      });
      const exit = await proc.exit;
      if (exit.error) {
        throw exit.error.code === 'ENOENT'
          ? new TapedeckError(
              'COMMAND_NOT_FOUND',
              `Cannot run the agent: "${command[0]}" was not found (cwd ${options.cwd}).`,
            )
          : new TapedeckError('COMMAND_FAILED', `Cannot run the agent "${command.join(' ')}": ${exit.error.message}`);
      }
      // The agent's last output may still be unread in the pipes when its exit is reported: it is in
      // them (its writes ended before it did, and init reports the exit after that), so one more
      // poll of the loop reads it (a pipe holds 64 KiB: one read).
      await new Promise((r) => setImmediate(() => setImmediate(r)));
      return { code: exit.code, signal: exit.signal };
    },
    sideChannels: () => [...nameServiceProbes(box.attempts).ways.map(describeAttempt), ...refused],
    probesNote: () => nameServiceProbes(box.attempts).note,
  };
}

/** The OS sandbox's own processes, not the agent's: bubblewrap or unshare, init, strace. */
const SANDBOX_OWN = /^(\S*\/)?(bwrap|unshare|strace)(\s|$)|sandbox\/os\/init\.mjs/;

export { describeIsolation };
