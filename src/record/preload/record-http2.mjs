// @ts-check
// Recording node:http2 client requests (http2.connect, and what is built on it: @grpc/grpc-js,
// Google Cloud SDKs): every ClientHttp2Session's request() stream is observed without changing
// what the agent sees — the request's headers (pseudo-headers included) and body as it writes
// them, the response's headers, its data as Node pushes it, its trailers (a gRPC call's status)
// and how it ended (an RST_STREAM, a refused stream) — and sent as the same exchange messages the
// other HTTP layers send. A gRPC or SSE answer is a stream (chunk by chunk, with offsets; binary
// chunks as base64), anything else one exchange. With world capture the answer's end ('end', and
// the 'close' after it) reaches the agent after the closing step barrier; the opening one is not held (request() returns its stream
// at once, so there is nothing to wait on): changes made before the request land in the step
// before it only when the recorder drains then.

import http2 from 'node:http2';
import { syncBuiltinESMExports } from 'node:module';
import { failureOf, headerObject, STREAM_TYPES, toBytes } from '../../../sandbox/preload/shared-wire.mjs';

/** Answers recorded as streams: SSE and friends, and gRPC (each message a chunk). */
// Binary streams too, chunk by chunk (base64 where not utf8): gRPC, and the AWS event stream the
// Bedrock client reads over HTTP/2 (its chunks' offsets give a model call's time to first token).
const STREAMED = (/** @type {string} */ type) =>
  STREAM_TYPES.test(type) || /^application\/(?:grpc|vnd\.amazon\.eventstream)/i.test(type);
const utf8 = new TextDecoder('utf-8', { fatal: true });
/** A session already watched (http2.connect may be reached twice through wrappers). */
const kWatched = Symbol('tapedeck.http2.watched');

/** A chunk as the wire keeps it: utf8 text, else base64 marked so. @param {Uint8Array} bytes */
export function wireChunk(bytes) {
  try {
    return { data: utf8.decode(bytes) };
  } catch {
    return {
      data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'),
      encoding: 'base64',
    };
  }
}

/** Headers as the recording keeps them (pseudo-headers kept, `:status` aside), from Node's header object. */
function headersOf(raw, drop) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const [name, value] of Object.entries(headerObject(raw ?? {}))) if (name !== drop) out[name] = value;
  return out;
}

/** The name of an RST_STREAM code (NGHTTP2_REFUSED_STREAM…), as Node names it in its errors. */
function rstName(code) {
  for (const [name, value] of Object.entries(http2.constants))
    if (value === code && name.startsWith('NGHTTP2_') && !name.startsWith('NGHTTP2_SESSION_')) return name;
  return `code ${code}`;
}

/**
 * ctx: { send(run, msg), encodeBody(run, bytes), nowMs(), current(), pid, origin, drawn(run),
 * barrier(run, 'res'): Promise } (as record-undici.mjs takes them). Returns the undo.
 */
export function recordHttp2(ctx) {
  const { send, encodeBody, nowMs, current, pid, origin, drawn, barrier } = ctx;
  let seq = 0;
  const realConnect = http2.connect;

  /** One request() stream of a run: observed from the headers it sent to its close. */
  const observe = (run, stream, protocol) => {
    const id = `${origin}-h${++seq}`;
    const ts = nowMs();
    const sentHeaders = stream.sentHeaders ?? {};
    const scheme = sentHeaders[':scheme'] ?? (protocol === 'h2' ? 'https' : 'http');
    const url = `${scheme}://${sentHeaders[':authority']}${sentHeaders[':path'] ?? '/'}`;
    const request = {
      method: String(sentHeaders[':method'] ?? 'GET'),
      url,
      headers: headersOf(sentHeaders),
      protocol,
    };
    /** @type {Uint8Array[]} */
    const sent = [];
    /** @type {{ status: number, headers: Record<string, string> } | undefined} */
    let res;
    let resTs = 0;
    let atHead;
    let streamed = false;
    /** @type {Buffer[]} */
    const chunks = [];
    /** @type {Record<string, string> | undefined} */
    let trailers;
    let failure;
    let done = false;
    const head = () => ({
      id,
      pid,
      ts,
      ...request,
      body: sent.length > 0 ? encodeBody(run, Buffer.concat(sent)) : undefined,
    });
    const finish = () => {
      if (done) return;
      done = true;
      const end = nowMs();
      if (streamed) {
        send(run, { t: 'end', id, ts: end, ...(failure ? { error: failure } : {}), ...(trailers ? { trailers } : {}) });
        return;
      }
      send(run, {
        t: 'xchg',
        ...head(),
        ...(res === undefined
          ? {}
          : {
              res: {
                ts: resTs,
                ...res,
                body: encodeBody(run, Buffer.concat(chunks)),
                ...(trailers ? { trailers } : {}),
              },
            }),
        end,
        ...(failure ? { error: failure } : {}),
        drawn: atHead,
      });
    };

    const { write, end, emit, push } = stream;
    const take = (chunk, encoding) => {
      const bytes = toBytes(chunk, encoding);
      if (bytes && bytes.byteLength > 0) sent.push(Buffer.from(bytes));
    };
    stream.write = function (...args) {
      take(args[0], args[1]);
      return Reflect.apply(write, this, args);
    };
    stream.end = function (...args) {
      if (typeof args[0] !== 'function') take(args[0], args[1]);
      return Reflect.apply(end, this, args);
    };
    stream.push = function (...args) {
      const [chunk, encoding] = args;
      if (chunk !== null && res !== undefined && !done) {
        const bytes = Buffer.from(toBytes(chunk, encoding) ?? []);
        if (streamed) send(run, { t: 'chunk', id, off: nowMs() - resTs, ...wireChunk(bytes) });
        else chunks.push(bytes);
      }
      return Reflect.apply(push, this, args);
    };
    /** With world capture: the agent's 'end' (and the 'close' after it) once the recorder has drained. */
    let held;
    stream.emit = function (name, ...args) {
      const real = () => Reflect.apply(emit, this, [name, ...args]);
      if (name === 'response' && res === undefined && !done) {
        const status = Number(args[0]?.[':status']);
        if (status >= 200) {
          resTs = nowMs();
          atHead = drawn?.(run);
          res = { status, headers: headersOf(args[0], ':status') };
          streamed = STREAMED(res.headers['content-type'] ?? '');
          if (streamed) {
            send(run, { t: 'req', ...head() });
            send(run, { t: 'res', id, ts: resTs, ...res, stream: true, drawn: atHead });
          }
        }
      } else if (name === 'trailers' && !done) trailers = headersOf(args[0]);
      else if (name === 'error' && failure === undefined && !done) failure = failureOf(args[0]);
      else if (name === 'end' && !done) {
        // The answer's end, its trailers read: with world capture the agent sees it after the barrier.
        finish();
        if (run.syncWorld) {
          held = barrier(run, 'res').then(real, real);
          return true;
        }
      } else if (name === 'close') {
        const code = stream.rstCode;
        if (!done && failure === undefined && typeof code === 'number' && code !== http2.constants.NGHTTP2_NO_ERROR) {
          // Reset without an error to the agent: the agent closed it itself (an abort), else the server did.
          failure =
            res !== undefined && code === http2.constants.NGHTTP2_CANCEL
              ? { code: 'AbortError', message: `the stream was closed (${rstName(code)})` }
              : { code: 'ERR_HTTP2_STREAM_ERROR', message: `Stream closed with error code ${rstName(code)}` };
        }
        finish();
        if (held !== undefined) {
          void held.then(real);
          return true;
        }
      }
      return real();
    };
  };

  /** Watches one session's request() calls, each for the run that makes it. */
  const watch = (session, protocol) => {
    if (session === null || typeof session !== 'object' || session[kWatched]) return;
    session[kWatched] = true;
    const realRequest = session.request;
    if (typeof realRequest !== 'function') return;
    session.request = function request(...args) {
      const stream = Reflect.apply(realRequest, this, args);
      const run = current();
      if (run !== undefined && stream !== null && typeof stream === 'object') {
        try {
          observe(run, stream, protocol);
        } catch {}
      }
      return stream;
    };
  };

  /** @type {any} */
  const connect = function connect(/** @type {any[]} */ ...args) {
    const session = Reflect.apply(realConnect, this, args);
    let protocol = 'h2c';
    try {
      protocol = new URL(String(args[0])).protocol === 'https:' ? 'h2' : 'h2c';
    } catch {}
    watch(session, protocol);
    return session;
  };
  http2.connect = connect;
  syncBuiltinESMExports();
  return function undo() {
    if (http2.connect === connect) http2.connect = realConnect;
    syncBuiltinESMExports();
  };
}
