// @ts-check
// The recorder's capture layer, loaded into the agent process with `node --import` (and inherited
// by node grandchildren through NODE_OPTIONS). It observes HTTP (fetch and http/https through
// @mswjs/interceptors), in-process tool() calls and nondeterministic values, and streams them to
// the parent as newline-delimited JSON. It never changes what the agent sees: bodies are read
// from clones, and all encoding work beyond utf8/base64 is left to the parent.

import { AsyncLocalStorage } from 'node:async_hooks';
import childProcess from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { BatchInterceptor } from '@mswjs/interceptors';
import { ClientRequestInterceptor } from '@mswjs/interceptors/ClientRequest';
import { FetchInterceptor } from '@mswjs/interceptors/fetch';
import { connectIpc } from '../../../sandbox/preload/shared-ipc.mjs';
import { bytesToHex, patchNondeterminism, wrapSuppressed } from '../../../sandbox/preload/shared-nondeterminism.mjs';
import { installFastCapture } from './record-fast.mjs';
import { recordUndici } from './record-undici.mjs';

/** @typedef {import('../protocol.js').CaptureMessage} CaptureMessage */
/** @typedef {import('../../../sandbox/protocol.js').NdBatch} NdBatch */
/**
 * Where captured messages go: the IPC client in a child, the recording session in-process.
 * `lazy`: send() may be given a function that builds the message when it is written.
 * @typedef {object} CaptureSink
 * @property {(message: CaptureMessage | (() => CaptureMessage)) => void} send
 * @property {(barrier: { reason: 'req' | 'res', id?: string }) => Promise<unknown>} sync
 * @property {boolean} [lazy]
 * @property {() => void} [flush] writes what is still pending (at exit)
 */

/** @typedef {ReturnType<typeof createRun>} CaptureRun */

export const RECORDER_KEY = Symbol.for('tapedeck.recorder');
const utf8 = new TextDecoder('utf-8', { fatal: true });
const origin = performance.timeOrigin;
const nowMs = () => origin + performance.now();
const STREAM_TYPES = /text\/event-stream|application\/x-ndjson|application\/jsonl/i;

/**
 * Encodes a captured body (bytes or a string) for the wire: utf8 text when valid, else base64; cut at maxBody.
 * @param {Uint8Array | string | undefined} bytes
 * @param {number} maxBody
 * @returns {import('../../../sandbox/protocol.js').WireBody | undefined}
 */
export function encodeBody(bytes, maxBody) {
  if (typeof bytes === 'string') {
    const size = Buffer.byteLength(bytes);
    if (size === 0) return undefined;
    if (maxBody < 0 || size <= maxBody) return { size, text: bytes };
    bytes = Buffer.from(bytes, 'utf8');
  }
  if (!bytes || bytes.byteLength === 0) return undefined;
  let view = bytes;
  let truncated = false;
  if (maxBody >= 0 && view.byteLength > maxBody) {
    view = view.subarray(0, maxBody);
    truncated = true;
  }
  /** @type {import('../../../sandbox/protocol.js').WireBody} */
  const body = { size: bytes.byteLength };
  try {
    body.text = utf8.decode(view);
  } catch {
    body.b64 = Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('base64');
  }
  if (truncated) body.truncated = true;
  return body;
}

function headersObject(headers) {
  /** @type {Record<string, string>} */
  const out = {};
  // Headers#forEach/iteration hands each Set-Cookie on its own: kept apart with a newline (see record-fast.mjs).
  for (const [name, value] of headers)
    out[name] = out[name] === undefined ? value : `${out[name]}${name === 'set-cookie' ? '\n' : ', '}${value}`;
  return out;
}

/**
 * One recorded run's state in the capture layer: where its messages go, the nondeterministic
 * values drawn since its last message, its background stream readers. A child process has one;
 * an in-process recorder has one per concurrent record() (see installSharedCapture).
 * options: { maxBody = -1 (no cap), syncWorld = false, nondeterminism = true }.
 * @param {CaptureSink} sink
 * @param {{ maxBody?: number, syncWorld?: boolean, nondeterminism?: boolean }} [options]
 */
export function createRun(sink, options = {}) {
  return {
    sink,
    lazy: sink.lazy === true,
    maxBody: typeof options.maxBody === 'number' ? options.maxBody : -1,
    syncWorld: options.syncWorld === true,
    nondeterminism: options.nondeterminism !== false,
    nd: { clock: [], random: [], uuid: [], randomBytes: [] },
    ndCount: 0,
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
 * @param {{ maxBody?: number, syncWorld?: boolean, nondeterminism?: boolean, fsRoot?: string, capture?: 'interceptors' | 'fast' }} [options]
 */
export function installCapture(sink, options = {}) {
  const run = createRun(sink, options);
  const layer = installLayer(() => run, options);
  // At exit no later turn comes: what is still pending is written now.
  const onExit = () => {
    layer.flushRun(run);
    sink.flush?.();
  };
  process.on('exit', onExit);
  return function dispose() {
    process.off('exit', onExit);
    layer.dispose();
  };
}

const runs = new AsyncLocalStorage();
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
 * options: { nondeterminism = true, capture = 'fast' | 'interceptors', fsRoot? }.
 * Returns { open(sink, runOptions) -> run, within(run, fn), current(), outside(fn), close(run), dispose() }.
 */
export function installSharedCapture(options = {}) {
  const layer = installLayer(() => runs.getStore(), options);
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
    dispose: () => layer.dispose(),
  };
}

/** Installs the patches; `current()` names the run a call, draw or tool belongs to (undefined: none). */
function installLayer(current, options) {
  const pid = process.pid;
  let depth = 0;
  const suppressed = () => depth > 0;

  const send = (run, message) => {
    if (run.closed) return;
    depth++;
    try {
      run.sink.send(typeof message === 'function' && !run.lazy ? message() : message);
    } finally {
      depth--;
    }
  };

  const flushRun = (run) => {
    if (run.ndCount === 0) return;
    /** @type {NdBatch} */
    const batches = {};
    for (const kind of Object.keys(run.nd)) {
      if (run.nd[kind].length > 0) {
        batches[kind] = run.nd[kind];
        run.nd[kind] = [];
      }
    }
    run.ndCount = 0;
    send(run, { t: 'nd', pid, ts: nowMs(), batches });
  };

  const restoreNondeterminism =
    options.nondeterminism === false
      ? () => {}
      : patchNondeterminism(
          (kind, value) => {
            const run = current();
            if (run === undefined || !run.nondeterminism || run.closed) return value;
            if (tools.getStore()?.run === run) return value;
            run.nd[kind].push(kind === 'randomBytes' ? bytesToHex(value) : value);
            if (++run.ndCount >= 1000) flushRun(run);
            return value;
          },
          // Outside any run (or in one that does not record values) a draw costs one lookup.
          () => depth > 0 || current()?.nondeterminism !== true,
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

  // World capture needs step barriers (the agent waits while the world is drained), which only
  // the interceptors can provide; plain traffic capture uses the low-overhead observers.
  // record --isolate: the process has no network but the recording proxy; its calls are handed
  // to the proxy, which makes them, records them (as it does every other process's) and keeps
  // the step barriers. This layer then records nothing of HTTP itself.
  const proxy = typeof options.proxy === 'string' ? options.proxy : undefined;
  const mode = proxy ? 'interceptors' : (options.capture ?? (options.syncWorld === true ? 'interceptors' : 'fast'));
  const directFetch = globalThis.fetch;
  const interceptor = new BatchInterceptor({
    name: 'tapedeck-record',
    interceptors: mode === 'interceptors' ? [new ClientRequestInterceptor(), new FetchInterceptor()] : [],
  });
  const open = new Map();

  interceptor.on('request', async ({ request, requestId, controller }) => {
    if (proxy) {
      // Through the proxy (the original fetch, which the interceptors do not see); the answer
      // streams back to the agent as it comes.
      const headers = new Headers(request.headers);
      headers.set('x-tapedeck-target', request.url);
      headers.set('proxy-authorization', `Basic ${Buffer.from(`pid:${pid}`).toString('base64')}`);
      const hasBody = request.body !== null && request.method !== 'GET' && request.method !== 'HEAD';
      try {
        const response = await directFetch(proxy, {
          method: request.method,
          headers,
          ...(hasBody ? { body: await request.arrayBuffer() } : {}),
          redirect: 'manual',
        });
        if (response.headers.get('x-tapedeck-proxy-error') === '1') {
          controller.errorWith(new TypeError(await response.text()));
          return;
        }
        controller.respondWith(response);
      } catch (error) {
        controller.errorWith(error);
      }
      return;
    }
    const run = current();
    if (run === undefined || run.closed) return;
    await settleStreams(run);
    const id = `${pid}-${requestId}`;
    const ts = nowMs();
    open.set(requestId, { id, run });
    flushRun(run);
    let body;
    if (request.body !== null && request.method !== 'GET' && request.method !== 'HEAD') {
      body = encodeBody(new Uint8Array(await request.clone().arrayBuffer()), run.maxBody);
    }
    send(run, {
      t: 'req',
      id,
      pid,
      ts,
      method: request.method,
      url: request.url,
      headers: headersObject(request.headers),
      body,
    });
    if (run.syncWorld) await run.sink.sync({ reason: 'req', id });
  });

  interceptor.on('response', async ({ response, requestId }) => {
    if (proxy) return;
    const entry = open.get(requestId);
    if (entry === undefined) return;
    const { id, run } = entry;
    open.delete(requestId);
    const ts = nowMs();
    const head = {
      id,
      ts,
      status: response.status,
      statusText: response.statusText,
      headers: headersObject(response.headers),
    };
    const contentType = response.headers.get('content-type') ?? '';
    const clone = response.body === null ? null : response.clone();
    if (clone !== null && STREAM_TYPES.test(contentType)) {
      send(run, { t: 'res', ...head, stream: true });
      // Streamed bodies are read in the background: the agent gets each chunk when it arrives.
      const reading = (async () => {
        const decoder = new TextDecoder();
        const reader = /** @type {ReadableStream<Uint8Array>} */ (clone.body).getReader();
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            send(run, { t: 'chunk', id, off: nowMs() - ts, data: decoder.decode(value, { stream: true }) });
          }
          send(run, { t: 'end', id, ts: nowMs() });
        } catch (/** @type {any} */ error) {
          send(run, {
            t: 'end',
            id,
            ts: nowMs(),
            error: { code: error?.name ?? 'Error', message: String(error?.message) },
          });
        }
      })();
      track(run, reading);
      return;
    }
    let body;
    let error;
    if (clone !== null) {
      try {
        body = encodeBody(new Uint8Array(await clone.arrayBuffer()), run.maxBody);
      } catch (/** @type {any} */ cause) {
        error = { code: cause?.name ?? 'Error', message: String(cause?.message) };
      }
    }
    send(run, { t: 'res', ...head, body, end: nowMs(), error });
    if (run.syncWorld) await run.sink.sync({ reason: 'res', id });
  });

  // The interceptors' own randomness (request ids) must not count as the agent's.
  const wrapped = [];
  const suppressDuring = (target, key) => {
    const undo = wrapSuppressed(
      target,
      key,
      () => depth++,
      () => depth--,
    );
    if (undo) wrapped.push(undo);
  };

  if (mode === 'interceptors') {
    interceptor.apply();
    suppressDuring(globalThis, 'fetch');
    for (const mod of [http, https]) {
      suppressDuring(mod, 'request');
      suppressDuring(mod, 'get');
    }
  } else {
    wrapped.push(
      installFastCapture({
        send: (run, message) => {
          if (typeof message === 'function' || message.t === 'xchg' || message.t === 'req') flushRun(run);
          send(run, message);
        },
        encodeBody: (run, bytes) => encodeBody(bytes, run.maxBody),
        nowMs,
        suppressed,
        current: () => {
          const run = current();
          return run === undefined || run.closed ? undefined : run;
        },
        pid,
        track,
      }),
    );
  }

  // The npm undici package, in both modes (its dispatchers are neither fetch's nor node:http's).
  // Undone before the fetch layer: it wraps the fetch that layer installed.
  const undoUndici = recordUndici({
    send: (run, message) => {
      if (message.t === 'xchg' || message.t === 'req') flushRun(run);
      send(run, message);
    },
    encodeBody: (run, bytes) => encodeBody(bytes, run.maxBody),
    nowMs,
    current: () => {
      const run = current();
      return run === undefined || run.closed ? undefined : run;
    },
    pid,
    barrier: async (run, reason) => {
      if (reason === 'req') {
        await settleStreams(run);
        flushRun(run);
      }
      await run.sink.sync({ reason });
    },
  });
  wrapped.push(undoUndici);

  const recorder = {
    /** Runs one file operation as a step boundary-aware call; report(ts, value, error) sends the step. */
    async fileOp(run, fileRun, report) {
      await settleStreams(run);
      flushRun(run);
      if (run.syncWorld) await run.sink.sync({ reason: 'req' });
      const ts = nowMs();
      let value;
      try {
        value = await fileRun();
      } catch (error) {
        report(ts, undefined, error);
        if (run.syncWorld) await run.sink.sync({ reason: 'res' });
        throw error;
      }
      report(ts, value, undefined);
      if (run.syncWorld) await run.sink.sync({ reason: 'res' });
      return value;
    },
    /** Records one in-process tool call as a step (see src/record/tool.ts); outside a run, just calls fn. */
    async tool(name, fn, args, toolOptions = {}) {
      const run = current();
      if (run === undefined || run.closed) return await fn(...args);
      await settleStreams(run);
      flushRun(run);
      const id = `${pid}-tool-${++run.toolSeq}`;
      const ts = nowMs();
      if (run.syncWorld) await run.sink.sync({ reason: 'req', id });
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
      send(run, message);
      if (run.syncWorld) await run.sink.sync({ reason: 'res', id });
      if (failure !== undefined) throw failure;
      return result;
    },
  };
  globalThis[RECORDER_KEY] = recorder;
  if (typeof options.fsRoot === 'string')
    wrapped.push(patchFiles(path.resolve(options.fsRoot), recorder, current, send, () => depth > 0));

  return {
    flushRun,
    dispose() {
      if (globalThis[RECORDER_KEY] === recorder) delete globalThis[RECORDER_KEY];
      for (const undo of wrapped.reverse()) undo();
      interceptor.dispose();
      restoreNondeterminism();
    },
  };
}

const FILE_OPS = {
  readFile: ['read_file', 'FILE_READ'],
  writeFile: ['write_file', 'FILE_WRITE'],
  appendFile: ['append_file', 'FILE_WRITE'],
  rm: ['delete_file', 'FILE_WRITE'],
  unlink: ['delete_file', 'FILE_WRITE'],
  rename: ['rename_file', 'FILE_WRITE'],
};

/**
 * Reads and writes of files under the fs root become FILE_READ / FILE_WRITE steps (fs and
 * fs/promises, sync, callback and promise forms). Returns the undo function.
 */
function patchFiles(root, recorder, current, send, suppressed) {
  const relative = (target) => {
    try {
      const file = typeof target === 'string' ? target : target instanceof URL ? fileURLToPath(target) : null;
      if (file === null) return undefined;
      const abs = path.resolve(file);
      if (abs !== root && !abs.startsWith(root + path.sep)) return undefined;
      return path.relative(root, abs).split(path.sep).join('/');
    } catch {
      return undefined;
    }
  };
  const sizeOf = (value) => (typeof value === 'string' ? Buffer.byteLength(value) : (value?.byteLength ?? undefined));
  const report = (run, op, rel, ts, value, error, dataArg) => {
    const [name, stateType] = FILE_OPS[op];
    const bytes = stateType === 'FILE_READ' ? sizeOf(value) : sizeOf(dataArg);
    const message = {
      t: 'tool',
      id: `${process.pid}-fs-${++fileSeq}`,
      pid: process.pid,
      name,
      ts,
      end: nowMs(),
      args: { path: rel },
      stateType,
      mutating: stateType === 'FILE_WRITE',
    };
    if (error) message.error = { code: error.code ?? error.name ?? 'Error', message: String(error.message) };
    else message.result = bytes === undefined ? { ok: true } : { ok: true, bytes };
    send(run, message);
  };
  let fileSeq = 0;
  // fs calls itself (appendFileSync -> writeFileSync, rm -> unlink): only the outermost call is a step.
  const inside = new AsyncLocalStorage();
  let insideSync = 0;
  const nested = () => insideSync > 0 || inside.getStore() === true;
  const undo = [];
  const replace = (target, key, make) => {
    const real = target[key];
    if (typeof real !== 'function') return;
    target[key] = make(real);
    undo.push(() => {
      target[key] = real;
    });
  };
  for (const op of Object.keys(FILE_OPS)) {
    replace(
      fs.promises,
      op,
      (real) =>
        async function (target, ...rest) {
          const run = current();
          const rel = run === undefined || suppressed() || nested() ? undefined : relative(target);
          if (rel === undefined) return real.call(this, target, ...rest);
          return inside.run(true, () =>
            recorder.fileOp(
              run,
              () => real.call(this, target, ...rest),
              (ts, value, error) => report(run, op, rel, ts, value, error, rest[0]),
            ),
          );
        },
    );
    replace(
      fs,
      `${op}Sync`,
      (real) =>
        function (target, ...rest) {
          const run = current();
          const rel = run === undefined || suppressed() || nested() ? undefined : relative(target);
          if (rel === undefined) return real.call(this, target, ...rest);
          const ts = nowMs();
          let value;
          insideSync++;
          try {
            value = real.call(this, target, ...rest);
          } catch (error) {
            insideSync--;
            report(run, op, rel, ts, undefined, error, rest[0]);
            throw error;
          }
          insideSync--;
          report(run, op, rel, ts, value, undefined, rest[0]);
          return value;
        },
    );
    replace(
      fs,
      op,
      (real) =>
        function (target, ...rest) {
          const run = current();
          const rel = run === undefined || suppressed() || nested() ? undefined : relative(target);
          const callback = rest.at(-1);
          if (rel === undefined || typeof callback !== 'function') return real.call(this, target, ...rest);
          const ts = nowMs();
          const args = rest.slice(0, -1);
          return inside.run(true, () =>
            real.call(this, target, ...args, (error, value) => {
              report(run, op, rel, ts, value, error, args[0]);
              callback(error, value);
            }),
          );
        },
    );
  }
  syncBuiltinESMExports();
  return () => {
    for (const u of undo.reverse()) u();
    syncBuiltinESMExports();
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
  const ipc = connectIpc(socketPath, {
    spoolDir: process.env.TAPEDECK_RECORD_SPOOL,
    spoolKey: process.env.TAPEDECK_RECORD_SPOOL_KEY,
  });
  ipc.send({ t: 'hello', pid: process.pid, ppid: process.ppid, argv: process.argv, cwd: process.cwd() });
  installCapture(ipc, options);
  flushBeforeBlockingSpawns(ipc.flush);
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
