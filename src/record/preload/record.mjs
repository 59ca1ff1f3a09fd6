// @ts-check
// The recorder's capture layer, loaded into the agent process with `node --import` (and inherited
// by node grandchildren through NODE_OPTIONS). It observes HTTP (fetch, http/https and the undici
// package), in-process tool() calls, file operations under the fs root and nondeterministic values,
// and streams them to the parent as newline-delimited JSON. It never changes what the agent sees:
// bodies are read from clones, and all encoding work beyond utf8/base64 is left to the parent.
// Its layers: without world capture record-fast.mjs and record-fast-fetch.mjs; with it (step
// barriers) record-interceptors.mjs; in both record-undici.mjs; with an fs root the file steps of
// sandbox/preload/shared-file-ops.mjs.
// What they share about the wire is sandbox/preload/shared-wire.mjs.

import { AsyncLocalStorage } from 'node:async_hooks';
import childProcess from 'node:child_process';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { patchFileOps } from '../../../sandbox/preload/shared-file-ops.mjs';
import { connectIpc } from '../../../sandbox/preload/shared-ipc.mjs';
import { watchMcpStdio } from '../../../sandbox/preload/shared-mcp-stdio.mjs';
import { bytesToHex, patchNondeterminism } from '../../../sandbox/preload/shared-nondeterminism.mjs';
import {
  editChildEnv,
  keepGivenEnv,
  loadInWorkers,
  nameChildren,
  processName,
  threadOrigin,
  withGivenEnv,
} from '../../../sandbox/preload/shared-process.mjs';
import { encodeBody, nowMs } from '../../../sandbox/preload/shared-wire.mjs';
import { installFastCapture } from './record-fast.mjs';
import { observeFetch } from './record-fast-fetch.mjs';
import { recordHttp2 } from './record-http2.mjs';
import { createQuietWorld } from './record-quiet.mjs';
import { watchSockets } from './record-sockets.mjs';
import { recordUndici } from './record-undici.mjs';
import { flushWebSockets, followWebSocket } from './record-websocket.mjs';

export { encodeBody } from '../../../sandbox/preload/shared-wire.mjs';

/** @typedef {import('../protocol.js').CaptureMessage} CaptureMessage */
/** @typedef {import('../../../sandbox/protocol.js').NdBatch} NdBatch */
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

export const RECORDER_KEY = Symbol.for('tapedeck.recorder');

/** Messages whose handling drains the world in the recorder (src/record/session.ts): they carry `busy`. */
const DRAINING = new Set(['res', 'xchg', 'end', 'tool', 'rpc']);

/**
 * One recorded run's state in the capture layer: where its messages go, the nondeterministic
 * values drawn since its last message, its background stream readers. A child process has one;
 * an in-process recorder has one per concurrent record() (see installSharedCapture).
 * options: { maxBody = -1 (no cap), syncWorld = false, nondeterminism = true, quietWorld? }:
 * quietWorld (with syncWorld, when the world is an fs root alone) skips the round trip of a step
 * barrier when nothing under the root changed since the last one (record-quiet.mjs).
 * @param {CaptureSink} sink
 * @param {{ maxBody?: number, syncWorld?: boolean, nondeterminism?: boolean, quietWorld?: { root: string, exclude: string[] } }} [options]
 */
export function createRun(sink, options = {}) {
  const quietWorld = options.syncWorld === true ? options.quietWorld : undefined;
  return {
    sink,
    lazy: sink.lazy === true,
    maxBody: typeof options.maxBody === 'number' ? options.maxBody : -1,
    syncWorld: options.syncWorld === true,
    nondeterminism: options.nondeterminism !== false,
    quiet: quietWorld === undefined ? undefined : createQuietWorld(quietWorld.root, quietWorld.exclude ?? []),
    /** The files this run's own file calls in flight are changing (absolute path -> how many calls). */
    busy: new Map(),
    /** The step barriers' round trips not answered yet: the recorder has not drained for them. */
    roundTrips: new Set(),
    nd: { clock: [], random: [], uuid: [], randomBytes: [], hrtime: [] },
    ndCount: 0,
    /** The values already written, by kind: with those in `nd`, what the run has drawn (drawnNow). */
    written: { clock: 0, random: 0, uuid: 0, randomBytes: 0, hrtime: 0 },
    toolSeq: 0,
    streams: new Set(),
    closed: false,
  };
}

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
  const layer = installLayer(() => run, { ...options, valuesEachTurn: true });
  // At exit no later turn comes: what is still pending is written now.
  const onExit = () => {
    flushWebSockets();
    layer.flushRun(run);
    sink.flush?.();
  };
  process.on('exit', onExit);
  return function dispose() {
    process.off('exit', onExit);
    run.quiet?.close();
    layer.dispose();
  };
}

const runs = new AsyncLocalStorage();
// Taken at load: an agent's fake timers do not hold the recorder's own turn-end writes.
const realSetImmediate = setImmediate;
/**
 * The tool() call in progress in the current async context: values drawn inside it are the
 * tool's (a replay serves the tool without running it), and row changes its own database
 * statements commit are its effects (observed world capture).
 */
const tools = new AsyncLocalStorage();

/**
 * The capture layers for in-process recording of any number of concurrent runs: every call,
 * tool() and clock/random draw goes to the run whose async context started it (an
 * AsyncLocalStorage store); work outside any run passes through unrecorded.
 * options: { nondeterminism = true, capture = 'fast' | 'interceptors', fsRoot?, childEnv?(run, env) }.
 * Returns { open(sink, runOptions) -> run, within(run, fn), current(), outside(fn), close(run), dispose() }.
 */
export function installSharedCapture(options = {}) {
  const layer = installLayer(() => runs.getStore(), options);
  // The processes a run starts record into its recording: options.childEnv(run, env) gives the
  // variables that say where (src/record/child-door.ts). Work outside any run starts them as is,
  // and so does a tool() call of the run (its result is recorded, and a replay does not run it).
  const childEnv = options.childEnv;
  const undoChildren =
    typeof childEnv === 'function'
      ? editChildEnv((env) => {
          const run = runs.getStore();
          if (run === undefined || run.closed || tools.getStore()?.run === run) return;
          // Outside the run: what the door draws to open (its socket's name) is not the run's.
          Object.assign(
            env,
            runs.exit(() => childEnv(run, env)),
          );
        })
      : () => {};
  return {
    open: (sink, runOptions) => createRun(sink, runOptions),
    within: (run, fn) => runs.run(run, fn),
    /** The run of the current async context, if any. */
    current: () => runs.getStore(),
    /** Runs fn outside every run (the recorder's own work: its queries, timers and values). */
    outside: (fn) => runs.exit(fn),
    /** The tool() call in progress here, if any: { run, db: [] }. */
    currentTool: () => tools.getStore(),
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

/**
 * How a layer captures HTTP: world capture needs step barriers (the agent waits while the world
 * is drained), which only the interceptors can provide; plain traffic capture uses the
 * low-overhead observers. record --isolate: the process has no network but the recording proxy;
 * its calls are handed to the proxy, which makes them, records them (as it does every other
 * process's) and keeps the step barriers.
 * @param {{ syncWorld?: boolean, proxy?: unknown, capture?: 'interceptors' | 'fast' }} options
 */
function captureMode(options) {
  if (typeof options.proxy === 'string') return 'interceptors';
  return options.capture ?? (options.syncWorld === true ? 'interceptors' : 'fast');
}

/** @type {typeof import('./record-interceptors.mjs') | undefined} */
let interceptorsLayer;
/**
 * Loads what a layer with these options needs beyond the observers, before installCapture or
 * installSharedCapture: the interceptors (@mswjs/interceptors) take ~100 ms of CPU to load,
 * which every process of an agent recorded without world capture would pay at its start.
 * @param {{ syncWorld?: boolean, proxy?: unknown, capture?: 'interceptors' | 'fast' }} [options]
 */
export async function loadCaptureLayers(options = {}) {
  if (captureMode(options) === 'interceptors') interceptorsLayer ??= await import('./record-interceptors.mjs');
}

/** Installs the patches; `current()` names the run a call, draw or tool belongs to (undefined: none). */
function installLayer(current, options) {
  const pid = process.pid;
  // What ids of this thread's calls start with: a worker thread's are not its process's.
  const origin = threadOrigin();
  const named = typeof options.processName === 'string' ? { process: options.processName } : {};
  const valuesEachTurn = options.valuesEachTurn === true;
  /** The values a turn drew, written as it ends (not a turn later, with the batch they join). */
  const flushTurn = (run) => {
    flushRun(run);
    run.sink.flush?.();
  };
  let depth = 0;
  const suppressed = () => depth > 0;

  // The run's own file calls in flight (sandbox/preload/shared-file-ops.mjs) and the drains of the world: calls that
  // overlap (a model's tool calls run at once) each have their own barriers, and a drain at one
  // call's boundary would find on disk what another file call wrote before its message arrived.
  // A file call holds the paths it changes from before its opening barrier until its message is
  // sent; every barrier and every message whose handling drains carries them (`busy`), and the
  // recorder leaves those files to the file call's own message (src/record/world/fs.ts).
  const fsRoot = typeof options.fsRoot === 'string' ? path.resolve(options.fsRoot) : undefined;
  /**
   * A file call of the run starts changing `paths` (absolute); its token, given back to release().
   * @returns {{ paths: string[], held: boolean }}
   */
  const hold = (run, paths) => {
    for (const abs of paths) run.busy.set(abs, (run.busy.get(abs) ?? 0) + 1);
    return { paths, held: paths.length > 0 };
  };
  /** The file call's message is sent: its paths are its message's to carry, not held any more. */
  const release = (run, mine) => {
    if (mine === undefined || !mine.held) return;
    mine.held = false;
    for (const abs of mine.paths) {
      const n = (run.busy.get(abs) ?? 1) - 1;
      if (n > 0) run.busy.set(abs, n);
      else run.busy.delete(abs);
    }
  };
  /** Whether another file call of the run in flight holds `abs` (`mine`: the asking call, whose own hold does not count). */
  const heldByOthers = (run, mine, abs) =>
    (run.busy.get(abs) ?? 0) > (mine?.held === true && mine.paths.includes(abs) ? 1 : 0);
  /** The same, asked when it is used (a quiet world's look comes a few turns after the boundary starts). */
  const othersBusy = (run, mine) => ({ has: (abs) => heldByOthers(run, mine, abs) });
  /** The paths the run's other file calls in flight hold, relative to the fs root as the recorder names files. */
  const busyOf = (run, mine) => {
    if (fsRoot === undefined || run.busy.size === 0) return undefined;
    const out = [];
    for (const abs of run.busy.keys())
      if (heldByOthers(run, mine, abs)) out.push(path.relative(fsRoot, abs).split(path.sep).join('/'));
    return out.length === 0 ? undefined : out;
  };
  /** A message whose handling drains the world, with the paths held by the run's file calls in flight. */
  const withBusy = (message, busy) => {
    const add = (m) => (DRAINING.has(m?.t) ? { ...m, busy } : m);
    return typeof message === 'function' ? () => add(message()) : add(message);
  };

  /** `counted`: a quiet world is told of it (false: a barrier's own closing message); `mine`: the file call sending it. */
  const send = (run, message, counted = true, mine = undefined) => {
    if (run.closed) return;
    // A call's end: the run's WebSocket turns so far are written first (their steps come before it).
    if (typeof message === 'function' || DRAINING.has(message?.t)) flushWebSockets(run);
    if (counted) run.quiet?.sent(message);
    const busy = run.busy.size === 0 ? undefined : busyOf(run, mine);
    const out = busy === undefined ? message : withBusy(message, busy);
    depth++;
    try {
      run.sink.send(typeof out === 'function' && !run.lazy ? out() : out);
    } finally {
      depth--;
    }
  };

  /**
   * A step barrier's round trip: the recorder drains the world (leaving the files the run's file
   * calls in flight hold) and answers. Kept until answered: a boundary that skips its own round
   * trip meanwhile waits for it (see opening).
   */
  const roundTrip = (run, barrier, mine) => {
    const busy = busyOf(run, mine);
    const answer = run.sink.sync(busy === undefined ? barrier : { ...barrier, busy });
    run.roundTrips.add(answer);
    const done = () => run.roundTrips.delete(answer);
    answer.then(done, done);
    return answer;
  };

  const flushRun = (run) => {
    if (run.ndCount === 0) return;
    /** @type {NdBatch} */
    const batches = { ...named };
    for (const kind of Object.keys(run.nd)) {
      if (run.nd[kind].length > 0) {
        batches[kind] = run.nd[kind];
        run.written[kind] += run.nd[kind].length;
        run.nd[kind] = [];
      }
    }
    run.ndCount = 0;
    send(run, { t: 'nd', pid, ts: nowMs(), batches });
  };
  /**
   * What the run has drawn so far, by kind (the kinds it drew any of), named after this process:
   * taken when a response's head reaches the agent, carried by the exchange's message (`drawn`,
   * src/record/protocol.ts), which goes once the body has ended. A few additions, no message.
   * @returns {import('../protocol.js').MessageOf<'xchg'>['drawn']}
   */
  const drawnNow = (run) => {
    if (!run.nondeterminism) return undefined;
    /** @type {Record<string, number>} */
    const counts = {};
    for (const kind in run.written) {
      const n = run.written[kind] + run.nd[kind].length;
      if (n > 0) counts[kind] = n;
    }
    return { ...named, counts };
  };

  const restoreNondeterminism =
    options.nondeterminism === false
      ? () => {}
      : patchNondeterminism(
          (kind, value) => {
            const run = current();
            if (run === undefined || !run.nondeterminism || run.closed) return value;
            run.nd[kind].push(kind === 'randomBytes' ? bytesToHex(value) : value);
            if (++run.ndCount >= 1000) flushRun(run);
            else if (valuesEachTurn && run.ndCount === 1) realSetImmediate(flushTurn, run);
            return value;
          },
          // Outside any run, in one that does not record values, or inside one of its tool() calls
          // (the tool's result is recorded, not the values it drew), a draw costs a lookup or two:
          // the clock's stack check (~15 us of CPU a read in a busy server) is skipped too.
          () => {
            if (depth > 0) return true;
            const run = current();
            return run === undefined || run.nondeterminism !== true || run.closed || tools.getStore()?.run === run;
          },
        );

  const track = (run, reading) => {
    run.streams.add(reading);
    void reading.finally(() => run.streams.delete(reading));
  };
  // A stream the agent has just finished reading ends on our side a few microtasks later: let
  // it, so the model step is complete before the next call (the agent's tool call) starts.
  const settleStreams = (run) =>
    run.streams.size === 0
      ? undefined
      : Promise.race([Promise.all(run.streams), new Promise((resolve) => setTimeout(resolve, 20))]);

  // Step barriers (world capture): the agent waits while the recorder drains the world, before a
  // call (`opening`) and after it, once the message that ends it is sent (`closing`). With a quiet
  // world (record-quiet.mjs) a boundary at which nothing changed skips its round trip, and the
  // closing message says so (`quiet`): the recorder then does not drain for it (the agent has moved
  // on). When a few files changed, the agent reads them itself and the boundary's message carries
  // them (`files`, with `quiet`): before a call a message of their own, after it the call's end.
  // `mine`: the file call at the boundary (its held paths are its own, not another call's).
  const opening = async (run, reason, id, mine) => {
    if (!run.syncWorld) return;
    if (run.quiet !== undefined) {
      const seen = await run.quiet.check(othersBusy(run, mine));
      if (seen !== false) {
        if (seen !== true) send(run, { t: 'files', ts: nowMs(), files: seen, quiet: true });
        // Another call's round trip not answered yet: the recorder drains for it later, and would
        // find what this call does. Nothing to wait for when calls do not overlap.
        if (run.roundTrips.size > 0) await Promise.allSettled(run.roundTrips);
        return;
      }
    }
    await roundTrip(run, id === undefined ? { reason } : { reason, id }, mine);
  };
  const closing = async (run, message, id, mine) => {
    if (!run.syncWorld) {
      send(run, message, true, mine);
      release(run, mine);
      return;
    }
    const seen = run.quiet === undefined ? false : await run.quiet.check(othersBusy(run, mine));
    // Not counted as a message that drains: the round trip that follows (or its skipping) settles it.
    let marked = message;
    if (seen !== false) {
      const mark = (m) => {
        const files = [...(m.files ?? []), ...(seen === true ? [] : seen)];
        return { ...m, quiet: true, ...(files.length > 0 ? { files } : {}) };
      };
      marked = typeof message === 'function' ? () => mark(message()) : mark(message);
    }
    send(run, marked, false, mine);
    release(run, mine);
    if (seen === false) await roundTrip(run, id === undefined ? { reason: 'res' } : { reason: 'res', id });
  };

  // With the proxy (record --isolate) this layer records nothing of HTTP itself.
  const proxy = typeof options.proxy === 'string' ? options.proxy : undefined;
  // The observers' run (none once it is closed), and their messages: the values drawn before a
  // request started are written before it.
  const openRun = () => {
    const run = current();
    return run === undefined || run.closed ? undefined : run;
  };
  const sendExchange = (run, message) => {
    if (
      typeof message === 'function' ||
      message.t === 'xchg' ||
      message.t === 'req' ||
      message.t === 'rpc' ||
      message.t === 'ws'
    )
      flushRun(run);
    send(run, message);
  };
  const mode = captureMode(options);
  /** @type {import('./record-fast.mjs').CaptureContext} */
  const fastContext = {
    send: sendExchange,
    encodeBody: (run, bytes) => encodeBody(bytes, run.maxBody),
    nowMs,
    suppressed,
    current: openRun,
    pid,
    origin,
    track,
    drawn: drawnNow,
  };
  const wrapped = [];
  if (mode === 'interceptors') {
    if (interceptorsLayer === undefined)
      throw new Error('tapedeck: loadCaptureLayers() must come before installing this layer');
    // fetch is observed at undici's dispatcher with the same barriers (the interceptors' Request
    // and Response copies cost ~1 ms of the agent's CPU a call); node:http keeps the interceptors,
    // which can hold a request before it is written. With the proxy they take both.
    const fetchBarriers = proxy === undefined;
    wrapped.push(
      interceptorsLayer.installInterceptors({
        proxy,
        current,
        send,
        opening,
        closing,
        flushRun,
        settleStreams,
        track,
        pid,
        origin,
        enter: () => depth++,
        leave: () => depth--,
        fetch: !fetchBarriers,
      }),
    );
    if (fetchBarriers) {
      let seq = 0;
      wrapped.push(
        observeFetch(
          {
            ...fastContext,
            barriers: {
              async opening(run, id) {
                await settleStreams(run);
                flushRun(run);
                await opening(run, 'req', id);
              },
              closing,
            },
          },
          () => ++seq,
        ),
      );
    }
  } else {
    wrapped.push(installFastCapture(fastContext));
  }

  // The npm undici package, in both modes (its dispatchers are neither fetch's nor node:http's).
  // Undone before the fetch layer: it wraps the fetch that layer installed.
  const undoUndici = recordUndici({
    send: sendExchange,
    encodeBody: (run, bytes) => encodeBody(bytes, run.maxBody),
    nowMs,
    current: openRun,
    pid,
    origin,
    drawn: drawnNow,
    proxy,
    barrier: async (run, reason) => {
      if (reason === 'req') {
        await settleStreams(run);
        flushRun(run);
      }
      await roundTrip(run, { reason });
    },
  });
  wrapped.push(undoUndici);
  // node:http2 client sessions (gRPC…), in both modes; under --isolate the OS sandbox refuses them.
  if (proxy === undefined) {
    const barrier = (run) => roundTrip(run, { reason: 'res' });
    const encode = (run, bytes) => encodeBody(bytes, run.maxBody);
    wrapped.push(
      recordHttp2({
        send: sendExchange,
        encodeBody: encode,
        nowMs,
        current: openRun,
        pid,
        origin,
        drawn: drawnNow,
        barrier,
      }),
    );
  }
  // MCP servers a run starts over stdio: each request and its answer (a process started inside a
  // tool() call is the tool's).
  let rpcSeq = 0;
  wrapped.push(
    watchMcpStdio({
      current: openRun,
      ignore: (run) => tools.getStore()?.run === run,
      emit: (run, rpc) => sendExchange(run, { t: 'rpc', id: `${origin}-rpc-${++rpcSeq}`, pid, ...rpc }),
      nowMs,
    }),
  );

  // Connections no layer records (an upgrade but a WebSocket's, Redis, HTTP/2, a database not
  // given): reported, so the recording says what it lacks; a WebSocket's conversation is followed
  // and recorded (record-websocket.mjs). Under --isolate the OS sandbox refuses and names them.
  /** @type {import('./record-websocket.mjs').WebSocketContext} */
  const webSockets = {
    send: (run, message) => sendExchange(run, message),
    encode: (run, bytes) => encodeBody(bytes, run.maxBody),
    nowMs,
    drawn: drawnNow,
    unrecorded: (run, url) =>
      send(run, { t: 'socket', pid, ts: nowMs(), kind: 'upgrade', protocol: 'websocket', target: url }),
    pid,
    origin,
  };
  if (proxy === undefined) {
    const ipc = process.env.TAPEDECK_RECORD_IPC;
    wrapped.push(
      watchSockets({
        current: openRun,
        suppressed,
        ignore: (target) => ipc !== undefined && (target === ipc || path.resolve(target) === ipc),
        http2: true,
        report: (run, socket) => send(run, { t: 'socket', pid, ts: nowMs(), ...socket }),
        websocket: (socket, run, url, head, encoding) => followWebSocket(webSockets, socket, run, url, head, encoding),
      }),
    );
    wrapped.push(flushWebSockets);
  }

  /** A file call's message with the files it changed under the root (`paths`, absolute), when the agent can read them itself. */
  const withOwnFiles = (run, message, paths, mine) => {
    const files = paths === undefined || paths.length === 0 ? undefined : run.quiet?.own(paths, othersBusy(run, mine));
    return files === undefined ? message : { ...message, files };
  };

  const recorder = {
    /**
     * Runs one file operation as a step boundary-aware call; report(ts, value, error) builds its
     * step message. `paths`: the files it changes (absolute), held from before its opening barrier
     * until its message is sent.
     */
    async fileOp(run, fileRun, report, paths) {
      const mine = hold(run, paths);
      try {
        await settleStreams(run);
        flushRun(run);
        await opening(run, 'req', undefined, mine);
        const ts = nowMs();
        let value;
        try {
          value = await fileRun();
        } catch (error) {
          await closing(run, withOwnFiles(run, report(ts, undefined, error), paths, mine), undefined, mine);
          throw error;
        }
        await closing(run, withOwnFiles(run, report(ts, value, undefined), paths, mine), undefined, mine);
        return value;
      } finally {
        release(run, mine);
      }
    },
    /**
     * A file call made without barriers (callback form) starts changing `paths`: held until its
     * message is sent (fileDone). `ready`: when it may touch the disk, once the run's round trips
     * not answered yet are (their drains must not find its change); undefined: now.
     */
    fileStart(run, paths) {
      const mine = hold(run, paths);
      const ready = run.syncWorld && run.roundTrips.size > 0 ? Promise.allSettled(run.roundTrips) : undefined;
      return { mine, ready };
    },
    /**
     * The message of a file call made without barriers (sync and callback forms; `mine`: what
     * fileStart gave). With the files it changed, read here, it is quiet: the recorder applies
     * them rather than draining later.
     */
    fileDone(run, message, paths, mine) {
      const own = withOwnFiles(run, message, paths, mine);
      send(run, own === message ? message : { ...own, quiet: true }, true, mine);
      release(run, mine);
    },
    /** Records one in-process tool call as a step (see src/record/tool.ts); outside a run, just calls fn. */
    async tool(name, fn, args, toolOptions = {}) {
      const run = current();
      if (run === undefined || run.closed) return await fn(...args);
      await settleStreams(run);
      flushRun(run);
      const id = `${origin}-tool-${++run.toolSeq}`;
      const ts = nowMs();
      await opening(run, 'req', id);
      let result;
      let failure;
      const state = { run, db: [] };
      try {
        result = await tools.run(state, () => fn(...args));
      } catch (error) {
        failure = error;
      }
      /** @type {import('../protocol.js').MessageOf<'tool'>} */
      const message = {
        t: 'tool',
        id,
        pid,
        name,
        ts,
        end: nowMs(),
        args: args.length === 1 ? safeJson(args[0]) : safeJson(args),
        stateType: toolOptions.stateType,
        mutating: toolOptions.mutating,
      };
      if (failure === undefined) message.result = safeJson(result);
      else {
        const f = /** @type {any} */ (failure);
        message.error = { code: f?.name ?? 'Error', message: String(f?.message ?? f) };
      }
      if (state.db.length > 0) message.db = state.db;
      // What the agent's other branches drew while the tool ran comes before its step: a replay
      // hands the tool's result back once they have drawn as many (src/replay/drawn.ts).
      flushRun(run);
      await closing(run, message, id);
      if (failure !== undefined) throw failure;
      return result;
    },
  };
  globalThis[RECORDER_KEY] = recorder;
  if (typeof options.fsRoot === 'string')
    wrapped.push(patchFileOps(path.resolve(options.fsRoot), recorder, current, () => depth > 0));

  return {
    flushRun,
    dispose() {
      if (globalThis[RECORDER_KEY] === recorder) delete globalThis[RECORDER_KEY];
      for (const undo of wrapped.reverse()) undo();
      restoreNondeterminism();
    },
  };
}

function safeJson(value) {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value));
  } catch {
    return String(value);
  }
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
  // Started by an in-process run (src/record/child-door.ts): the door hears this process for that run.
  const run = process.env.TAPEDECK_RECORD_RUN;
  ipc.send({
    t: 'hello',
    pid: process.pid,
    ppid: process.ppid,
    argv: process.argv,
    cwd: process.cwd(),
    ...(run ? { run } : {}),
  });
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
