// @ts-check
// The capture layer's patches, for one process's run (record.mjs installCapture) or shared by the
// in-process runs (installSharedCapture): HTTP through the observers (record-fast.mjs,
// record-fast-fetch.mjs) or, with step barriers, the interceptors (record-interceptors.mjs); the
// npm undici package (record-undici.mjs); MCP over stdio; the connections no layer records and
// WebSockets (record-sockets.mjs, record-websocket.mjs), or under --isolate the proxy door
// (record-proxy-door.mjs); tool() calls and the file steps (sandbox/preload/shared-file-ops.mjs).
// What it keeps of each run (messages, barriers, values) is record-run.mjs's.
import path from 'node:path';
import { patchFileOps } from '../../../sandbox/preload/shared-file-ops.mjs';
import { watchMcpStdio } from '../../../sandbox/preload/shared-mcp-stdio.mjs';
import { watchPgConnections } from '../../../sandbox/preload/shared-pg-replies.mjs';
import { installUnixOverLoopback, installUnixRoutes } from '../../../sandbox/preload/shared-unix-sockets.mjs';
import { encodeBody, nowMs } from '../../../sandbox/preload/shared-wire.mjs';
import { installFastCapture } from './record-fast.mjs';
import { observeFetch } from './record-fast-fetch.mjs';
import { recordHttp2 } from './record-http2.mjs';
import { installProxyDoor } from './record-proxy-door.mjs';
import { createRunBook, currentTool, withinTool } from './record-run.mjs';
import { watchSockets } from './record-sockets.mjs';
import { recordUndici } from './record-undici.mjs';
import { flushWebSockets, followWebSocket } from './record-websocket.mjs';

export const RECORDER_KEY = Symbol.for('tapedeck.recorder');

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
export function installLayer(current, options) {
  const {
    pid,
    origin,
    enter,
    leave,
    suppressed,
    hold,
    release,
    othersBusy,
    send,
    roundTrip,
    flushRun,
    drawnNow,
    noteDbReply,
    restoreNondeterminism,
    track,
    settleStreams,
    opening,
    closing,
  } = createRunBook(current, options);

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
  // What every HTTP capture layer (fast, undici, http2) is handed to write an exchange.
  const exchanges = {
    send: sendExchange,
    encodeBody: (/** @type {{ maxBody: number }} */ run, /** @type {Uint8Array | string} */ bytes) =>
      encodeBody(bytes, run.maxBody),
    nowMs,
    current: openRun,
    pid,
    origin,
    drawn: drawnNow,
  };
  /** @type {import('./record-fast.mjs').CaptureContext} */
  const fastContext = {
    ...exchanges,
    suppressed,
    track,
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
        enter,
        leave,
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
    ...exchanges,
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
    wrapped.push(
      recordHttp2({
        ...exchanges,
        barrier: (run) => roundTrip(run, { reason: 'res' }),
      }),
    );
  }
  // MCP servers a run starts over stdio: each request and its answer (a process started inside a
  // tool() call is the tool's).
  let rpcSeq = 0;
  wrapped.push(
    watchMcpStdio({
      current: openRun,
      ignore: (run) => currentTool()?.run === run,
      emit: (run, rpc) => sendExchange(run, { t: 'rpc', id: `${origin}-rpc-${++rpcSeq}`, pid, ...rpc }),
      nowMs,
    }),
  );

  // Connections no layer records (an upgrade but a WebSocket's, Redis, a database not
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
  } else {
    // record --isolate: a connection no door leads to goes through the proxy, which records it.
    wrapped.push(installProxyDoor({ proxy, doors: options.doors ?? [], pid, suppressed }));
    // The OS sandbox refuses Unix sockets: the tree's own (tsx's CLI and its child) go over its loopback.
    wrapped.push(installUnixOverLoopback(), installUnixRoutes(options.dbSockets ?? []));
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
        result = await withinTool(state, () => fn(...args));
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
    wrapped.push(patchFileOps(path.resolve(options.fsRoot), recorder, current, suppressed));
  // The replies of the process's Postgres connections, each with what it had drawn when it came
  // (a replay holds them back as it holds HTTP answers). Last: it sees the connect the agent made.
  if (options.dbReplies === true)
    wrapped.push(
      watchPgConnections({
        skip: () => suppressed() || openRun() === undefined,
        connection: (name, socket, reader) => {
          const run = openRun();
          if (run === undefined) return;
          socket.prependListener('data', (chunk) => {
            for (let n = reader.server(chunk).length; n > 0; n--) noteDbReply(run, name);
          });
        },
      }),
    );

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
