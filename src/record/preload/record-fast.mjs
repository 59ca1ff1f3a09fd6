// The recorder's low-overhead HTTP observers, used when no world capture needs step barriers:
// node:http/https through Node's diagnostics channels (the request's write/end and the
// response's push are observed on the instance — nothing is re-implemented), and fetch at
// undici's global dispatcher (the handler's callbacks are observed on the way to fetch), or,
// where a call does not go through it, from a clone of the response. One message per exchange
// (streams: one per chunk), built lazily: the agent's path only keeps references and time
// stamps, and the message is built, encoded and written after the agent has moved on.
// Decoding (gzip, brotli) is left to the parent, except for streams fetch decodes itself.
// @ts-check
import dc from 'node:diagnostics_channel';
import http from 'node:http';
import zlib from 'node:zlib';
import { claimDispatch } from '../../../sandbox/preload/undici-hook.mjs';

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
 * @property {(run: CaptureRun, reading: Promise<unknown>) => void} track
 */
/** @typedef {import('./record.mjs').CaptureRun} CaptureRun */
/**
 * A streamed fetch answer in progress: its text decoder, the decompressor if any, the last offset.
 * @typedef {{ text: TextDecoder, inflate: import('node:zlib').Gunzip | undefined, off: number, finished: Promise<unknown> | undefined }} StreamState
 */
/** Subscribes a listener whose message shape the channel knows (diagnostics_channel types it as unknown). */
const subscribe = (/** @type {string} */ name, /** @type {(message: any) => void} */ listener) =>
  dc.subscribe(name, listener);
const unsubscribe = (/** @type {string} */ name, /** @type {(message: any) => void} */ listener) =>
  dc.unsubscribe(name, listener);

const STREAM_TYPES = /text\/event-stream|application\/x-ndjson|application\/jsonl/i;
// Where undici (Node's fetch, and the undici package) keeps the dispatcher fetch uses by default.
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

function concat(chunks, size) {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

function toBytes(chunk, encoding) {
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return undefined;
  if (typeof chunk === 'string')
    return Buffer.from(chunk, /** @type {BufferEncoding} */ (typeof encoding === 'string' ? encoding : 'utf8'));
  if (chunk instanceof Uint8Array) return chunk;
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return undefined;
}

function headerObject(headers) {
  /** @type {Record<string, string>} */
  const out = {};
  if (!headers) return out;
  if (typeof headers.forEach === 'function' && !Array.isArray(headers)) {
    // fetch's Headers hands each Set-Cookie on its own.
    headers.forEach((value, name) => {
      addHeader(out, name, value);
    });
    return out;
  }
  if (Array.isArray(headers)) {
    for (const [name, value] of headers) addHeader(out, String(name).toLowerCase(), String(value));
    return out;
  }
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) addHeader(out, name.toLowerCase(), String(v));
  }
  return out;
}

/** Request headers as undici's dispatch options carry them: an object, pairs, or a flat [name, value, …] list. */
function dispatchHeaders(headers) {
  if (!Array.isArray(headers) || headers.length === 0 || Array.isArray(headers[0])) return headerObject(headers);
  /** @type {Record<string, string>} */
  const out = {};
  for (let i = 0; i + 1 < headers.length; i += 2)
    addHeader(out, String(headers[i]).toLowerCase(), String(headers[i + 1]));
  return out;
}

/** Response headers as undici hands them to a handler: [name, value, …] as Buffers (HTTP/1.1), or an object. */
function rawHeaderObject(raw) {
  if (!Array.isArray(raw)) return headerObject(raw);
  /** @type {Record<string, string>} */
  const out = {};
  for (let i = 0; i + 1 < raw.length; i += 2)
    addHeader(out, raw[i].toString('latin1').toLowerCase(), raw[i + 1].toString('latin1'));
  return out;
}

/** A failure as the recording keeps it: a string code (a system error's, else the error's name) and the message. */
function failureOf(error) {
  const code = [error?.cause?.code, error?.code, error?.name].find((c) => typeof c === 'string' && c !== '');
  return { code: code ?? 'Error', message: String(error?.message ?? error) };
}

/** The content-type of undici's raw response headers, without building them all. */
function contentTypeOf(raw) {
  if (!Array.isArray(raw)) return String(headerObject(raw)['content-type'] ?? '');
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 12 && name.toString('latin1').toLowerCase() === 'content-type')
      return raw[i + 1].toString('latin1');
  }
  return '';
}

/** { status, statusText, raw } as the recording keeps it: headers as an object. */
function responseHead({ status, statusText, raw }) {
  return { status, statusText, headers: rawHeaderObject(raw) };
}

/**
 * Repeated headers are joined as HTTP joins them (", "), except Set-Cookie, whose values may hold
 * commas (Expires=…): they are kept apart with a newline (no header value can hold one), and a
 * replay hands them out as separate headers again.
 */
function addHeader(out, name, value) {
  if (out[name] === undefined) out[name] = value;
  else out[name] = `${out[name]}${name === 'set-cookie' ? '\n' : ', '}${value}`;
}

/** A streaming decoder for a content coding fetch undoes itself, or undefined. */
function decompressor(coding) {
  const sync = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  if (coding === 'gzip' || coding === 'x-gzip') return zlib.createGunzip(sync);
  if (coding === 'br') return zlib.createBrotliDecompress();
  if (coding === 'deflate') return zlib.createInflate(sync);
  return undefined;
}

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
  const { send, encodeBody, nowMs, suppressed, current, pid, track } = ctx;
  let seq = 0;

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
      rec = run === undefined ? null : { id: `${pid}-h${++seq}`, run, ts: nowMs(), chunks: [], size: 0, done: false };
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
      url: `${request.protocol}//${host}${request.path}`,
      headers: headerObject(request.getHeaders()),
      body: rec.size > 0 ? encodeBody(rec.run, concat(rec.chunks, rec.size)) : undefined,
    };
  };
  const onResponse = ({ request, response }) => {
    const rec = request[kRec];
    if (!rec || rec.done) return;
    const resTs = nowMs();
    const res = {
      status: response.statusCode,
      statusText: response.statusMessage,
      headers: headerObject(response.headers),
    };
    const streamed = STREAM_TYPES.test(response.headers['content-type'] ?? '');
    if (streamed) {
      rec.done = true;
      send(rec.run, { t: 'req', ...head(request, rec) });
      send(rec.run, { t: 'res', id: rec.id, ts: resTs, ...res, stream: true });
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

  // fetch (undici). A request through the dispatcher fetch uses by default is observed there:
  // the handler's callbacks see the bytes as they arrive, before the agent does, and no copy of
  // the response stream is made. Any other (an explicit dispatcher, a Request made before the
  // hook was in place) is read from a clone of the response, never from the agent's own.
  const observed = new WeakSet();
  let hook; // { proxy, inner }: the dispatcher installed as the global one, and the one it wraps
  const hookDispatcher = () => {
    const current = globalThis[GLOBAL_DISPATCHER];
    if (hook !== undefined && current === hook.proxy) return true;
    if (current === undefined || current === null || typeof current.dispatch !== 'function') return false;
    const proxy = observeDispatcher(current);
    try {
      globalThis[GLOBAL_DISPATCHER] = proxy;
    } catch {
      return false;
    }
    if (globalThis[GLOBAL_DISPATCHER] !== proxy) return false;
    hook = { proxy, inner: current };
    return true;
  };

  // The dispatcher with dispatch() observed; everything else is the wrapped one's own.
  function observeDispatcher(inner) {
    function dispatch(options, handler) {
      // Only fetch's kind of handler (the callbacks undici has always had) is observed; upgrades
      // (WebSocket) and CONNECT tunnels are not HTTP exchanges and pass through.
      if (
        handler === null ||
        typeof handler !== 'object' ||
        typeof handler.onHeaders !== 'function' ||
        typeof handler.onData !== 'function' ||
        typeof handler.onComplete !== 'function' ||
        options === null ||
        typeof options !== 'object' ||
        options.upgrade ||
        options.method === 'CONNECT'
      )
        return inner.dispatch(options, handler);
      const run = current();
      if (run === undefined) return inner.dispatch(options, handler);
      // Recorded here: the npm undici layer (record-undici.mjs) must not record it again below.
      claimDispatch(options);
      return inner.dispatch(options, new Observed(options, handler, run));
    }
    const proxy = new Proxy(inner, {
      get(target, key) {
        if (key === 'dispatch') return dispatch;
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    observed.add(proxy);
    return proxy;
  }

  /** One request through the observed dispatcher: passes every callback on, recording as it goes. */
  class Observed {
    constructor(options, handler, run) {
      this.handler = handler;
      this.run = run;
      this.options = options;
      this.id = `${pid}-u${++seq}`;
      this.ts = nowMs();
      const body = options.body;
      // A string or bytes body is known now; fetch's own (a stream) is seen as it is sent.
      this.sent = typeof body === 'string' || body instanceof Uint8Array ? [body] : [];
      this.bodyKnown = this.sent.length > 0;
      this.resTs = 0;
      /** @type {any} */
      this.res = undefined;
      this.chunks = [];
      this.size = 0;
      /** @type {StreamState | undefined} */
      this.stream = undefined;
      this.done = false;
    }
    request() {
      const { options } = this;
      const origin = typeof options.origin === 'string' ? options.origin : String(options.origin?.origin ?? '');
      let body;
      if (this.sent.length === 1 && typeof this.sent[0] === 'string') body = encodeBody(this.run, this.sent[0]);
      else if (this.sent.length > 0) {
        const parts = this.sent.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : part));
        body = encodeBody(
          this.run,
          concat(
            parts,
            parts.reduce((n, part) => n + part.byteLength, 0),
          ),
        );
      }
      return {
        id: this.id,
        pid,
        ts: this.ts,
        method: String(options.method ?? 'GET').toUpperCase(),
        url: `${origin.replace(/\/$/, '')}${options.path ?? ''}`,
        headers: dispatchHeaders(options.headers),
        body,
      };
    }
    onConnect(abort, context) {
      return this.handler.onConnect(abort, context);
    }
    onUpgrade(statusCode, headers, socket) {
      return this.handler.onUpgrade(statusCode, headers, socket);
    }
    onResponseStarted() {
      return this.handler.onResponseStarted?.();
    }
    onRequestSent() {
      return this.handler.onRequestSent?.();
    }
    onBodySent(chunk) {
      if (!this.bodyKnown) {
        const bytes = typeof chunk === 'string' ? chunk : toBytes(chunk);
        if (bytes !== undefined && (typeof bytes === 'string' || bytes.byteLength > 0)) this.sent.push(bytes);
      }
      return this.handler.onBodySent?.(chunk);
    }
    onHeaders(statusCode, rawHeaders, resume, statusText) {
      // 1xx (informational) answers are not the response.
      if (statusCode >= 200 && !this.done) {
        this.resTs = nowMs();
        // The headers object is built when the event is, unless the answer is a stream.
        this.res = { status: statusCode, statusText: statusText ?? '', raw: rawHeaders };
        if (STREAM_TYPES.test(contentTypeOf(rawHeaders))) this.startStream();
      }
      return this.handler.onHeaders(statusCode, rawHeaders, resume, statusText);
    }
    onData(chunk) {
      if (!this.done) {
        if (this.stream !== undefined) this.streamChunk(chunk);
        else if (this.res !== undefined) {
          this.chunks.push(chunk);
          this.size += chunk.byteLength;
        }
      }
      return this.handler.onData(chunk);
    }
    onComplete(trailers) {
      if (!this.done && this.res !== undefined) {
        this.done = true;
        const end = nowMs();
        if (this.stream !== undefined) this.endStream(end);
        else {
          const { res, resTs, chunks, size } = this;
          // Built and encoded later, off the agent's path (see send() in shared-ipc.mjs).
          send(this.run, () => ({
            t: 'xchg',
            ...this.request(),
            res: {
              ts: resTs,
              ...responseHead(res),
              body: size > 0 ? encodeBody(this.run, concat(chunks, size)) : undefined,
            },
            end,
          }));
        }
      }
      return this.handler.onComplete(trailers);
    }
    onError(error) {
      if (!this.done) {
        this.done = true;
        const failure = failureOf(error);
        if (this.stream !== undefined) this.endStream(nowMs(), failure);
        else {
          send(this.run, {
            t: 'xchg',
            ...this.request(),
            end: nowMs(),
            error: failure,
            ...(this.res === undefined ? {} : { res: { ts: this.resTs, ...responseHead(this.res) } }),
          });
        }
      }
      return this.handler.onError(error);
    }
    // A streamed answer (SSE, NDJSON) is recorded chunk by chunk as text, with each chunk's offset.
    startStream() {
      const { resTs, id } = this;
      const res = responseHead(this.res);
      send(this.run, { t: 'req', ...this.request() });
      send(this.run, { t: 'res', id, ts: resTs, ...res, stream: true });
      const text = new TextDecoder();
      const coding = (res.headers['content-encoding'] ?? '').trim().toLowerCase();
      const inflate = coding === '' || coding === 'identity' ? undefined : decompressor(coding);
      /** @type {StreamState} */
      const stream = { text, inflate, off: 0, finished: undefined };
      if (inflate !== undefined) {
        // fetch undoes the content coding for the agent; the recording keeps what the agent read.
        inflate.on('data', (data) =>
          send(this.run, { t: 'chunk', id, off: stream.off, data: text.decode(data, { stream: true }) }),
        );
        stream.finished = new Promise((resolve) => {
          inflate.once('end', () => resolve(undefined));
          inflate.once('error', (error) => resolve(failureOf(error)));
        });
        track(this.run, stream.finished);
      }
      this.stream = stream;
    }
    streamChunk(chunk) {
      const stream = /** @type {StreamState} */ (this.stream);
      stream.off = nowMs() - this.resTs;
      if (stream.inflate === undefined)
        send(this.run, {
          t: 'chunk',
          id: this.id,
          off: stream.off,
          data: stream.text.decode(chunk, { stream: true }),
        });
      else stream.inflate.write(Buffer.from(chunk));
    }
    endStream(end, failure) {
      const { id } = this;
      const stream = /** @type {StreamState} */ (this.stream);
      if (stream.inflate === undefined) {
        send(this.run, failure === undefined ? { t: 'end', id, ts: end } : { t: 'end', id, ts: end, error: failure });
        return;
      }
      void stream.finished?.then((inflateError) => {
        const error = failure ?? inflateError;
        send(this.run, error === undefined ? { t: 'end', id, ts: end } : { t: 'end', id, ts: end, error });
      });
      stream.inflate.end();
    }
  }

  // Where a fetch call will be dispatched: its own dispatcher option, the Request's, or the global one.
  let requestDispatcherKey;
  const dispatcherOf = (input, init) => {
    if (init !== undefined && init !== null && init.dispatcher !== undefined) return init.dispatcher;
    if (typeof Request === 'function' && input instanceof Request) {
      requestDispatcherKey ??= Object.getOwnPropertySymbols(input).find((key) => key.description === 'dispatcher');
      return requestDispatcherKey === undefined ? undefined : input[requestDispatcherKey];
    }
    return hookDispatcher() ? hook.proxy : undefined;
  };

  const realFetch = globalThis.fetch;
  function fetch(input, init) {
    const run = current();
    if (run === undefined) return realFetch.call(this, input, init);
    // Loads Node's undici (as fetch itself would), which puts the global dispatcher in place.
    if (hook === undefined) void globalThis.Headers;
    if (observed.has(dispatcherOf(input, init))) return realFetch.call(this, input, init);
    return cloneFetch.call(this, run, input, init);
  }
  async function cloneFetch(run, input, init) {
    const id = `${pid}-f${++seq}`;
    const ts = nowMs();
    const isRequest = typeof Request !== 'undefined' && input instanceof Request;
    const method = (init?.method ?? (isRequest ? input.method : 'GET')).toUpperCase();
    const url = isRequest ? input.url : input instanceof URL ? input.href : String(input);
    const headers = { ...(isRequest ? headerObject(input.headers) : {}), ...headerObject(init?.headers) };
    let bodyBytes;
    const rawBody = init?.body;
    if (rawBody !== undefined && rawBody !== null) {
      if (typeof rawBody === 'string') bodyBytes = rawBody;
      else if (rawBody instanceof URLSearchParams) bodyBytes = rawBody.toString();
      else if (typeof Blob !== 'undefined' && rawBody instanceof Blob)
        bodyBytes = new Uint8Array(await rawBody.arrayBuffer());
      // FormData and stream bodies are sent as they are and not recorded (reading them would consume them).
      else bodyBytes = toBytes(rawBody)?.slice(); // a copy: the agent may reuse its buffer
    } else if (isRequest && input.body !== null) {
      bodyBytes = new Uint8Array(await input.clone().arrayBuffer());
    }
    // The request's body is encoded when the exchange is written, not before it is sent.
    const request = () => ({
      id,
      pid,
      ts,
      method,
      url,
      headers,
      body: bodyBytes ? encodeBody(run, bodyBytes) : undefined,
    });
    let response;
    try {
      response = await realFetch.call(this, input, init);
    } catch (error) {
      send(run, {
        t: 'xchg',
        ...request(),
        end: nowMs(),
        error: failureOf(error),
      });
      throw error;
    }
    const resTs = nowMs();
    const res = { status: response.status, statusText: response.statusText, headers: headerObject(response.headers) };
    if (response.body === null) {
      send(run, { t: 'xchg', ...request(), res: { ts: resTs, ...res }, end: resTs });
      return response;
    }
    const reader = /** @type {ReadableStream<Uint8Array>} */ (response.clone().body).getReader();
    const streamed = STREAM_TYPES.test(res.headers['content-type'] ?? '');
    if (streamed) {
      send(run, { t: 'req', ...request() });
      send(run, { t: 'res', id, ts: resTs, ...res, stream: true });
    }
    const reading = (async () => {
      const chunks = [];
      let size = 0;
      const decoder = streamed ? new TextDecoder() : undefined;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (decoder)
            send(run, { t: 'chunk', id, off: nowMs() - resTs, data: decoder.decode(value, { stream: true }) });
          else {
            chunks.push(value);
            size += value.byteLength;
          }
        }
        if (streamed) send(run, { t: 'end', id, ts: nowMs() });
        else {
          const end = nowMs();
          send(run, () => ({
            t: 'xchg',
            ...request(),
            res: { ts: resTs, ...res, body: encodeBody(run, concat(chunks, size)) },
            end,
          }));
        }
      } catch (error) {
        const failure = failureOf(error);
        if (streamed) send(run, { t: 'end', id, ts: nowMs(), error: failure });
        else send(run, { t: 'xchg', ...request(), res: { ts: resTs, ...res }, end: nowMs(), error: failure });
      }
    })();
    if (streamed) track(run, reading);
    return response;
  }
  if (typeof realFetch === 'function') {
    Object.defineProperties(fetch, Object.getOwnPropertyDescriptors(realFetch));
    globalThis.fetch = fetch;
  }

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
    if (globalThis.fetch === fetch) globalThis.fetch = realFetch;
    if (hook !== undefined && globalThis[GLOBAL_DISPATCHER] === hook.proxy) globalThis[GLOBAL_DISPATCHER] = hook.inner;
  };
}
