// @ts-check
// The recorder's capture layer, loaded into the agent process with `node --import` (and inherited
// by node grandchildren through NODE_OPTIONS). It observes HTTP (fetch, http/https and the undici
// package), in-process tool() calls, file operations under the fs root and nondeterministic values,
// and streams them to the parent as newline-delimited JSON. It never changes what the agent sees:
// bodies are read from clones, and all encoding work beyond utf8/base64 is left to the parent.
// This file starts it (as a preload: the process's name, the IPC, the start gate, workers) and
// says what it offers; the patches are record-layer.mjs's, a run's book record-run.mjs's.
// Its layers: without world capture record-fast.mjs and record-fast-fetch.mjs; with it (step
// barriers) record-interceptors.mjs; in both record-undici.mjs; with an fs root the file steps of
// sandbox/preload/shared-file-ops.mjs.
// What they share about the wire is sandbox/preload/shared-wire.mjs.
import childProcess from 'node:child_process';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { reportUnwatchedPrograms, unwatchedProgram } from '../../../sandbox/preload/shared-commands.mjs';
import { connectIpc } from '../../../sandbox/preload/shared-ipc.mjs';
import {
  editChildEnv,
  flushBeforePosting,
  keepGivenEnv,
  loadInWorkers,
  nameChildren,
  processEnvForRedaction,
  processName,
  withGivenEnv,
} from '../../../sandbox/preload/shared-process.mjs';
import { reportUnhookedPython, unhookedPython } from '../../../sandbox/preload/shared-python.mjs';
import { installLayer, loadCaptureLayers, RECORDER_KEY } from './record-layer.mjs';
import { captureContext, createRun, currentTool } from './record-run.mjs';
import { flushWebSockets } from './record-websocket.mjs';

export { encodeBody } from '../../../sandbox/preload/shared-wire.mjs';
export { loadCaptureLayers, RECORDER_KEY } from './record-layer.mjs';
export { createRun } from './record-run.mjs';

/** @typedef {import('../protocol.js').CaptureMessage} CaptureMessage */
/**
 * Where captured messages go: the IPC client in a child, the recording session in-process.
 * `lazy`: send() may be given a function that builds the message when it is written.
 * @typedef {object} CaptureSink
 * @property {(message: CaptureMessage | (() => CaptureMessage)) => void} send
 * @property {(barrier: { reason: 'req' | 'res', id?: string, busy?: string[] }) => Promise<unknown>} sync
 * @property {boolean} [lazy]
 * @property {() => void} [flush] writes what is still pending (at exit)
 */

/** @typedef {ReturnType<typeof createRun>} CaptureRun */

/**
 * Installs the capture layers in this process for one run (a child under `tapedeck record`).
 * `sink` is { send(msg), sync(msg): Promise } — the IPC client in a child, a recording session
 * in-process. options: those of createRun, plus fsRoot? and capture = syncWorld ? 'interceptors' : 'fast'.
 * Returns dispose().
 * @param {CaptureSink} sink
 * processName: this process's name in the agent's tree (shared-process.mjs), carried by its values.
 * @param {{ maxBody?: number, syncWorld?: boolean, nondeterminism?: boolean, quietWorld?: { root: string, exclude: string[] }, fsRoot?: string, capture?: 'interceptors' | 'fast', processName?: string }} [options]
 */
export function installCapture(sink, options = {}) {
  const run = createRun(sink, options);
  // A process of the agent's tree may be ended by a signal (a server its client kills), which
  // runs no exit handler: the values it drew go out at the end of the turn that drew them.
  const layer = installLayer(() => run, { ...options, valuesEachTurn: true, dbReplies: true });
  // At exit no later turn comes: what is still pending is written now.
  const onExit = () => {
    flushWebSockets();
    layer.flushRun(run);
    sink.flush?.();
  };
  process.on('exit', onExit);
  // A worker thread's parent may end it (terminate(), process.exit()) as soon as it hears from
  // it, before the turn ends: what it recorded before the message is written first. (Its
  // WebSocket turns stay open: the one in progress goes on after the message.)
  const undoPosting = flushBeforePosting(() => {
    layer.flushRun(run);
    sink.flush?.();
  });
  return function dispose() {
    undoPosting();
    process.off('exit', onExit);
    run.quiet?.close();
    layer.dispose();
  };
}

/** The run of the current async context, if any. */
const currentRun = () => captureContext.getStore()?.run;

/**
 * The capture layers for in-process recording of any number of concurrent runs: every call,
 * tool() and clock/random draw goes to the run whose async context started it (the `run` of
 * record-run.mjs captureContext's store); work outside any run passes through unrecorded.
 * options: { nondeterminism = true, capture = 'fast' | 'interceptors', fsRoot?, childEnv?(run, env) }.
 * Returns { open(sink, runOptions) -> run, within(run, fn), current(), outside(fn), bind(fn), close(run), dispose() }.
 */
export function installSharedCapture(options = {}) {
  const layer = installLayer(currentRun, options);
  // The processes a run starts record into its recording: options.childEnv(run, env) gives the
  // variables that say where (src/record/child-door.ts). Work outside any run starts them as is,
  // and so does a tool() call of the run (its result is recorded, and a replay does not run it).
  const childEnv = options.childEnv;
  const undoChildren =
    typeof childEnv === 'function'
      ? editChildEnv((env, argv, cwd) => {
          const run = currentRun();
          if (run === undefined || run.closed || currentTool()?.run === run) return;
          // What the run's recording cannot hold of the program is said in it: calls no layer
          // sees (curl, psql), a Python run without the hook (-S).
          try {
            const where = { PATH: env.PATH, cwd };
            const unwatched = unwatchedProgram(argv, where);
            if (unwatched !== undefined) run.sink.send({ t: 'unwatched', program: unwatched });
            const unhooked = unhookedPython(argv, where);
            if (unhooked !== undefined) run.sink.send({ t: 'unhooked', ...unhooked });
          } catch {}
          // Outside the run: what the door draws to open (its socket's name) is not the run's.
          Object.assign(
            env,
            captureContext.exit(() => childEnv(run, env)),
          );
        })
      : () => {};
  return {
    open: (sink, runOptions) => createRun(sink, runOptions),
    within: (run, fn) => captureContext.run({ run }, fn),
    current: currentRun,
    /** Runs fn outside every run (the recorder's own work: its queries, timers and values). */
    outside: (fn) => captureContext.exit(fn),
    /**
     * fn, called later in this async context's run and tool() call (a callback another context
     * will call: a busy pool hands its client over from another session's release). Only the
     * capture's context: the agent's own async contexts stay as they would unrecorded.
     */
    bind(fn) {
      const store = captureContext.getStore();
      return function (...args) {
        return captureContext.run(store, () => fn.apply(this, args));
      };
    },
    /** The tool() call in progress here, if any: { run, db: [] }. */
    currentTool,
    /** Writes the run's pending values and stops taking its messages. */
    close(run) {
      layer.flushRun(run);
      run.closed = true;
    },
    dispose: () => {
      undoChildren();
      layer.dispose();
    },
  };
}

// Auto-start when loaded as a preload by `tapedeck record`.
const socketPath = process.env.TAPEDECK_RECORD_IPC;
if (socketPath && !globalThis[RECORDER_KEY]) {
  let options = {};
  try {
    options = JSON.parse(process.env.TAPEDECK_RECORD_OPTIONS ?? '{}');
  } catch {}
  // A worker thread's file writes are its process's world changes, found as any other thread's
  // are (the watcher, the drain at its process's next step): its own file layer would make each a
  // step of its own, and the steps after it would take the changes the process made later.
  if (!isMainThread) {
    const { fsRoot: _fsRoot, quietWorld: _quietWorld, ...rest } = options;
    options = rest;
  }
  // Which process of the agent's tree this is (its values are kept apart from the others'), and
  // what the processes it starts are called: claimed in the spool folder.
  const spool = process.env.TAPEDECK_RECORD_SPOOL;
  const name = processName(spool ? path.join(spool, 'process-') : undefined);
  nameChildren(name);
  // A process started with an env of its own (an MCP server over stdio) records into the run too.
  keepGivenEnv(import.meta.url);
  if (name !== undefined) options = { ...options, processName: name };
  // A preload's top-level await holds the agent's own code until it is done.
  await loadCaptureLayers(options);
  const ipc = connectIpc(socketPath, {
    spoolDir: process.env.TAPEDECK_RECORD_SPOOL,
    spoolKey: process.env.TAPEDECK_RECORD_SPOOL_KEY,
  });
  // A Python program it starts without tapedeck's hook (python -S): the recording says so.
  reportUnhookedPython((found) => ipc.send({ t: 'unhooked', pid: process.pid, ...found }));
  // A program whose calls only --isolate's proxy records (curl, psql): without it, the recording says so.
  // Inside a tool() call its result is recorded, and a replay does not run it.
  if (typeof options.proxy !== 'string')
    reportUnwatchedPrograms((program) => {
      if (currentTool() === undefined) ipc.send({ t: 'unwatched', pid: process.pid, program });
    });
  // Started by an in-process run (src/record/child-door.ts): the door hears this process for that run.
  const run = process.env.TAPEDECK_RECORD_RUN;
  ipc.send({
    t: 'hello',
    pid: process.pid,
    ppid: process.ppid,
    argv: process.argv,
    cwd: process.cwd(),
    env: processEnvForRedaction(),
    ...(run ? { run } : {}),
  });
  // On disk before this process can make a call: under --isolate the proxy records its calls in
  // the recorder, which must know this env's secrets by then (src/record/command.ts).
  ipc.flush();
  // Taken before the capture layers patch node:fs: it is not a file call of the agent's.
  const first = takeGateToken(process.env.TAPEDECK_RECORD_SPOOL, options.gate);
  if (first === 'gone' && name === undefined) {
    // The agent's own process (unnamed), and the recorder died and another tapedeck command
    // cleared its spool folder (the token with it) before this process got here. (A process the
    // agent started, named, may outlive a finished run, whose spool is gone too: it runs.)
    process.stderr.write('tapedeck: the recorder stopped before the run started; the agent did not run\n');
    process.exit(70);
  }
  installCapture(ipc, options);
  flushBeforeBlockingSpawns(ipc.flush);
  // Worker threads record too (Node runs --import preloads in the main thread only): their own
  // connection and spool file, ids of their own (threadOrigin), their values named after the thread.
  loadInWorkers(import.meta.url, (env) => withGivenEnv({ ...env }, import.meta.url));
  // The agent's first process: the recorder takes the world's first snapshot while this process
  // starts, and its own code waits for it here. The first process is the one that takes the
  // recorder's token (its processes start after its code runs; a parent pid would not tell, once
  // a dead recorder's child is re-parented). A recorder gone before it answers leaves nothing to
  // record into: the agent does not run.
  if (first === true) {
    const answer = await ipc.sync({ reason: 'start' });
    if (typeof answer?.ack !== 'number' || answer.ack < 0) {
      process.stderr.write('tapedeck: the recorder stopped before the run started; the agent did not run\n');
      process.exit(70);
    }
  }
}

/**
 * Removes the start gate's token (a file named `name` in the spool folder): true for the one
 * process that did, false for the others, 'gone' when the spool folder itself is gone (a dead
 * recorder's leftovers, cleared by another tapedeck process).
 * @returns {boolean | 'gone'}
 */
function takeGateToken(spoolDir, name) {
  if (typeof spoolDir !== 'string' || spoolDir === '' || typeof name !== 'string' || !/^[\w.-]+$/.test(name))
    return false;
  try {
    fs.unlinkSync(path.join(spoolDir, name));
    return true;
  } catch {
    return fs.existsSync(spoolDir) ? false : 'gone';
  }
}

/**
 * Events are written at the end of the agent's turn of the event loop; a synchronous spawn
 * (execSync, spawnSync, execFileSync) blocks that turn while the child it runs records its own.
 * Writing ours first keeps the recording in the order things happened across processes.
 */
function flushBeforeBlockingSpawns(flush) {
  for (const name of ['spawnSync', 'execSync', 'execFileSync']) {
    const real = childProcess[name];
    if (typeof real !== 'function') continue;
    const patched = function (...args) {
      flush();
      return real.apply(this, args);
    };
    Object.defineProperties(patched, Object.getOwnPropertyDescriptors(real));
    childProcess[name] = patched;
  }
  syncBuiltinESMExports();
}
