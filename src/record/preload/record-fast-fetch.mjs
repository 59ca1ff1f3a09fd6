// @ts-check
// The recorder's low-overhead fetch observer (see record-fast.mjs): at undici's global dispatcher,
// whose handler's callbacks see the bytes as they arrive, before the agent does, with no copy of
// the response stream; a call that does not go through it (an explicit dispatcher, a Request made
// before the hook was in place) is read from a clone of the response, never from the agent's own.

import {
  concat,
  contentTypeOf,
  decompressor,
  dispatchHeaders,
  failureOf,
  headerObject,
  responseHead,
  STREAM_TYPES,
  toBytes,
} from '../../../sandbox/preload/shared-wire.mjs';
import { claimDispatch } from '../../../sandbox/preload/undici-hook.mjs';

/** @typedef {import('./record-fast.mjs').CaptureContext} CaptureContext */
/** @typedef {import('./record.mjs').CaptureRun} CaptureRun */
/**
 * A streamed fetch answer in progress: its text decoder, the decompressor if any, the last offset.
 * @typedef {{ text: TextDecoder, inflate: import('node:zlib').Gunzip | undefined, off: number, finished: Promise<unknown> | undefined }} StreamState
 */

// Where undici (Node's fetch, and the undici package) keeps the dispatcher fetch uses by default.
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/**
 * Observes global fetch for the fast capture layer; `nextSeq` numbers its exchanges among the
 * layer's others. With `ctx.barriers` (world capture) a call waits at a step barrier before it is
 * made, and its end reaches the agent after the closing barrier. Returns dispose().
 * @param {CaptureContext} ctx
 * @param {() => number} nextSeq
 */
export function observeFetch(ctx, nextSeq) {
  const { send, encodeBody, nowMs, current, pid, origin, track, barriers, drawn } = ctx;
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
      const observed = new Observed(options, handler, run);
      if (barriers === undefined) return inner.dispatch(options, observed);
      // Made once the world is drained (fetch does not read dispatch's answer).
      barriers
        .opening(run, observed.id)
        .then(() => inner.dispatch(options, observed))
        .catch((error) => observed.onError(error))
        .catch(() => {});
      return true;
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
      this.id = `${origin}-u${nextSeq()}`;
      this.ts = nowMs();
      const body = options.body;
      // A string or bytes body is known now; fetch's own (a stream) is seen as it is sent.
      this.sent = typeof body === 'string' || body instanceof Uint8Array ? [body] : [];
      this.bodyKnown = this.sent.length > 0;
      this.resTs = 0;
      /** @type {any} */
      this.res = undefined;
      /** What the agent had drawn when the head came (fetch resolves with it, barriers or not). */
      this.drawn = undefined;
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
        this.drawn = drawn?.(this.run);
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
          const message = () => ({
            t: /** @type {const} */ ('xchg'),
            ...this.request(),
            res: {
              ts: resTs,
              ...responseHead(res),
              body: size > 0 ? encodeBody(this.run, concat(chunks, size)) : undefined,
            },
            end,
            drawn: this.drawn,
          });
          if (barriers !== undefined) {
            // The agent sees the end once the world is drained for this call.
            barriers.closing(this.run, message, this.id).then(
              () => this.handler.onComplete(trailers),
              (error) => this.handler.onError(error),
            );
            return;
          }
          send(this.run, message);
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
          /** @type {import('../protocol.js').MessageOf<'xchg'>} */
          const message = {
            t: 'xchg',
            ...this.request(),
            end: nowMs(),
            error: failure,
            ...(this.res === undefined
              ? {}
              : { res: { ts: this.resTs, ...responseHead(this.res) }, drawn: this.drawn }),
          };
          if (barriers !== undefined) {
            barriers.closing(this.run, message, this.id).then(
              () => this.handler.onError(error),
              () => this.handler.onError(error),
            );
            return;
          }
          send(this.run, message);
        }
      }
      return this.handler.onError(error);
    }
    // A streamed answer (SSE, NDJSON) is recorded chunk by chunk as text, with each chunk's offset.
    startStream() {
      const { resTs, id } = this;
      const res = responseHead(this.res);
      send(this.run, { t: 'req', ...this.request() });
      send(this.run, { t: 'res', id, ts: resTs, ...res, stream: true, drawn: this.drawn });
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
      const own = requestDispatcherKey === undefined ? undefined : input[requestDispatcherKey];
      // A Request with no dispatcher of its own goes through the global one (observed there:
      // read from a copy too, it was recorded twice).
      if (own !== undefined || requestDispatcherKey === undefined) return own;
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
    const id = `${origin}-f${nextSeq()}`;
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
    // With world capture: made once the world is drained, and its exchange closed by a barrier.
    if (barriers !== undefined) await barriers.opening(run, id);
    const finish = (message) => (barriers === undefined ? send(run, message) : barriers.closing(run, message, id));
    let response;
    try {
      response = await realFetch.call(this, input, init);
    } catch (error) {
      await finish({
        t: 'xchg',
        ...request(),
        end: nowMs(),
        error: failureOf(error),
      });
      throw error;
    }
    const resTs = nowMs();
    // Returned to the agent now; with barriers only once its message is written (the order says it).
    const atHead = barriers === undefined ? drawn?.(run) : undefined;
    const res = { status: response.status, statusText: response.statusText, headers: headerObject(response.headers) };
    if (response.body === null) {
      await finish({ t: 'xchg', ...request(), res: { ts: resTs, ...res }, end: resTs, drawn: atHead });
      return response;
    }
    const reader = /** @type {ReadableStream<Uint8Array>} */ (response.clone().body).getReader();
    const streamed = STREAM_TYPES.test(res.headers['content-type'] ?? '');
    if (streamed) {
      send(run, { t: 'req', ...request() });
      send(run, { t: 'res', id, ts: resTs, ...res, stream: true, drawn: atHead });
    }
    /** @type {Promise<import('../protocol.js').CaptureMessage | (() => import('../protocol.js').CaptureMessage) | undefined>} */
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
          return () => ({
            t: /** @type {const} */ ('xchg'),
            ...request(),
            res: { ts: resTs, ...res, body: encodeBody(run, concat(chunks, size)) },
            end,
            drawn: atHead,
          });
        }
      } catch (error) {
        const failure = failureOf(error);
        if (streamed) send(run, { t: 'end', id, ts: nowMs(), error: failure });
        else
          return { t: 'xchg', ...request(), res: { ts: resTs, ...res }, end: nowMs(), error: failure, drawn: atHead };
      }
      return undefined;
    })();
    if (streamed) track(run, reading);
    else if (barriers !== undefined) {
      // The agent gets the response once its copy is read and the world drained for the call.
      const message = await reading;
      if (message !== undefined) await barriers.closing(run, message, id);
    } else void reading.then((message) => message !== undefined && send(run, message));
    return response;
  }
  if (typeof realFetch === 'function') {
    Object.defineProperties(fetch, Object.getOwnPropertyDescriptors(realFetch));
    globalThis.fetch = fetch;
  }

  return function dispose() {
    if (globalThis.fetch === fetch) globalThis.fetch = realFetch;
    if (hook !== undefined && globalThis[GLOBAL_DISPATCHER] === hook.proxy) globalThis[GLOBAL_DISPATCHER] = hook.inner;
  };
}
