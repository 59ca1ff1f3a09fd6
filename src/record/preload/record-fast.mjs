// The recorder's low-overhead HTTP observers, used when no world capture needs step barriers:
// node:http/https through Node's diagnostics channels (the request's write/end and the
// response's push are observed on the instance — nothing is re-implemented), and fetch at
// undici's global dispatcher (the handler's callbacks are observed on the way to fetch), or,
// where a call does not go through it, from a clone of the response. One message per exchange
// (streams: one per chunk), built lazily: the agent's path only keeps references and time
// stamps, and the message is built, encoded and written after the agent has moved on.
// Decoding (gzip, brotli) is left to the parent, except for streams fetch decodes itself.
// The fetch observer is record-fast-fetch.mjs; this file observes node:http and puts both in place.
// @ts-check
import dc from 'node:diagnostics_channel';
import http from 'node:http';
import {
  concat,
  failureOf,
  headerObject,
  isAbsoluteForm,
  STREAM_TYPES,
  toBytes,
} from '../../../sandbox/preload/shared-wire.mjs';
import { observeFetch } from './record-fast-fetch.mjs';

/** @typedef {import('../protocol.js').CaptureMessage} CaptureMessage */
/** @typedef {import('../protocol.js').WireBody} WireBody */
/**
 * What the capture layer gives the observers.
 * @typedef {object} CaptureContext
 * @property {(run: CaptureRun, message: CaptureMessage | (() => CaptureMessage)) => void} send
 * @property {(run: CaptureRun, bytes: Uint8Array | string) => WireBody | undefined} encodeBody
 * @property {() => number} nowMs
 * @property {() => boolean} suppressed
 * @property {() => CaptureRun | undefined} current
 * @property {number} pid
 * @property {string} origin what this thread's ids start with (shared-process.mjs threadOrigin)
 * @property {(run: CaptureRun, reading: Promise<unknown>) => void} track
 * @property {StepBarriers} [barriers] with world capture: the step barriers fetch waits at (record.mjs)
 * @property {(run: CaptureRun) => import('../protocol.js').MessageOf<'xchg'>['drawn']} [drawn] what the
 *   run has drawn so far: taken when a response's head reaches the agent, carried by its message
 */
/** @typedef {import('./record.mjs').CaptureRun} CaptureRun */
/**
 * Step barriers: `opening` before a call is made (the world drained before it), `closing` with
 * the message that ends it, before the agent sees the end (the world drained for it).
 * @typedef {object} StepBarriers
 * @property {(run: CaptureRun, id: string) => Promise<void>} opening
 * @property {(run: CaptureRun, message: CaptureMessage | (() => CaptureMessage), id: string) => Promise<void>} closing
 */
/** Subscribes a listener whose message shape the channel knows (diagnostics_channel types it as unknown). */
const subscribe = (/** @type {string} */ name, /** @type {(message: any) => void} */ listener) =>
  dc.subscribe(name, listener);
const unsubscribe = (/** @type {string} */ name, /** @type {(message: any) => void} */ listener) =>
  dc.unsubscribe(name, listener);

/**
 * Observes node:http/https client requests and global fetch.
 * ctx: { send(run, msg | () => msg), encodeBody(run, bytes), nowMs(), suppressed(), current(), pid,
 * track(run, promise) } — current() names the run an exchange belongs to, taken when it starts
 * (undefined: not recorded; the exchange passes through untouched); send() may be given a
 * function that builds the message, to be called later, in order; track() is told about
 * background stream readers so step boundaries can wait for them.
 * Returns dispose().
 * @param {CaptureContext} ctx
 */
export function installFastCapture(ctx) {
  const { send, encodeBody, nowMs, suppressed, current, pid, origin, drawn } = ctx;
  let seq = 0;
  const nextSeq = () => ++seq;

  // node:http / https (and everything built on ClientRequest: axios, got, node-fetch, …). Node 20
  // announces a request only once it is flushed, so the body is observed on write()/end().
  const kRec = Symbol('tapedeck.exchange');
  // Patched in place: typed loosely, as the methods are replaced by wrappers of any arity.
  const proto = /** @type {any} */ (http.ClientRequest.prototype);
  const own = { write: Object.hasOwn(proto, 'write'), end: Object.hasOwn(proto, 'end') };
  const { write: realWrite, end: realEnd } = proto;
  const recordOf = (request) => {
    let rec = request[kRec];
    if (rec === undefined) {
      const run = suppressed() ? undefined : current();
      rec =
        run === undefined
          ? null
          : { id: `${origin}-h${nextSeq()}`, run, ts: nowMs(), chunks: [], size: 0, done: false };
      request[kRec] = rec;
    }
    return rec;
  };
  const keep = (rec, chunk, encoding) => {
    const bytes = toBytes(chunk, encoding);
    if (rec !== null && bytes !== undefined && bytes.byteLength > 0) {
      rec.chunks.push(bytes);
      rec.size += bytes.byteLength;
    }
  };
  proto.write = function write(chunk, encoding, callback) {
    keep(recordOf(this), chunk, encoding);
    return realWrite.call(this, chunk, encoding, callback);
  };
  proto.end = function end(chunk, encoding, callback) {
    keep(recordOf(this), chunk, encoding);
    return realEnd.call(this, chunk, encoding, callback);
  };
  const onRequest = ({ request }) => {
    recordOf(request);
  };
  const onError = ({ request, error }) => {
    const rec = request[kRec];
    if (!rec || rec.done) return;
    rec.done = true;
    send(rec.run, {
      t: 'xchg',
      ...head(request, rec),
      end: nowMs(),
      error: failureOf(error),
    });
  };
  const head = (request, rec) => {
    const host = request.getHeader('host') ?? request.host;
    return {
      id: rec.id,
      pid,
      ts: rec.ts,
      method: request.method,
      // Absolute form (a client configured with HTTP_PROXY: axios): the path is the URL asked for.
      url: isAbsoluteForm(request.path) ? request.path : `${request.protocol}//${host}${request.path}`,
      headers: headerObject(request.getHeaders()),
      body: rec.size > 0 ? encodeBody(rec.run, concat(rec.chunks, rec.size)) : undefined,
      // Whether the agent's socket was a reused keep-alive one: a replay's socket says the same (a
      // new one connects), so clients that time their requests by its events (got) read the clock
      // as often as here.
      reusedSocket: request.reusedSocket === true,
    };
  };
  const onResponse = ({ request, response }) => {
    const rec = request[kRec];
    if (!rec || rec.done) return;
    const resTs = nowMs();
    // Published before the request emits 'response': what the agent drew before its head came
    // (got reads the clock on 'response', before the body ends and the message goes).
    const atHead = drawn?.(rec.run);
    const res = {
      status: response.statusCode,
      statusText: response.statusMessage,
      headers: headerObject(response.headers),
    };
    const streamed = STREAM_TYPES.test(response.headers['content-type'] ?? '');
    if (streamed) {
      rec.done = true;
      send(rec.run, { t: 'req', ...head(request, rec) });
      send(rec.run, { t: 'res', id: rec.id, ts: resTs, ...res, stream: true, drawn: atHead });
    }
    const chunks = [];
    let size = 0;
    const decoder = streamed ? new TextDecoder() : undefined;
    const push = response.push;
    response.push = function (chunk, encoding) {
      if (chunk === null) {
        if (streamed) send(rec.run, { t: 'end', id: rec.id, ts: nowMs() });
        else if (!rec.done) {
          rec.done = true;
          const end = nowMs();
          // Built and encoded later, off the agent's path (see send() in shared-ipc.mjs).
          send(rec.run, () => ({
            t: 'xchg',
            ...head(request, rec),
            res: { ts: resTs, ...res, body: encodeBody(rec.run, concat(chunks, size)) },
            end,
            drawn: atHead,
          }));
        }
      } else if (streamed) {
        send(rec.run, {
          t: 'chunk',
          id: rec.id,
          off: nowMs() - resTs,
          data: /** @type {TextDecoder} */ (decoder).decode(chunk, { stream: true }),
        });
      } else {
        chunks.push(chunk);
        size += chunk.byteLength;
      }
      return push.call(this, chunk, encoding);
    };
  };
  subscribe('http.client.request.start', onRequest);
  subscribe('http.client.request.error', onError);
  subscribe('http.client.response.finish', onResponse);

  const undoFetch = observeFetch(ctx, nextSeq);

  return function dispose() {
    unsubscribe('http.client.request.start', onRequest);
    unsubscribe('http.client.request.error', onError);
    unsubscribe('http.client.response.finish', onResponse);
    for (const [key, real] of [
      ['write', realWrite],
      ['end', realEnd],
    ]) {
      if (own[key]) proto[key] = real;
      else delete proto[key];
    }
    undoFetch();
  };
}
