// @ts-check
// The recorder's interceptor capture (@mswjs/interceptors over fetch and node:http/https), used
// when world capture needs step barriers: the agent's request waits at a barrier while the world
// is drained, and so does its answer. Under record --isolate every call is handed to the recording
// proxy instead, which makes and records it; this layer then records nothing of HTTP itself.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { BatchInterceptor } from '@mswjs/interceptors';
import { ClientRequestInterceptor } from '@mswjs/interceptors/ClientRequest';
import { FetchInterceptor } from '@mswjs/interceptors/fetch';
import { quietRequestSockets, wrapSuppressed } from '../../../sandbox/preload/shared-nondeterminism.mjs';
import {
  encodeBody,
  headerObject,
  nowMs,
  plainFromAbsoluteForm,
  STREAM_TYPES,
} from '../../../sandbox/preload/shared-wire.mjs';

/**
 * Installs the interceptors. ctx: { proxy?, current(), send(run, msg), opening(run, reason, id),
 * closing(run, msg, id), flushRun(run), settleStreams(run), track(run, reading), pid, enter(),
 * leave(), fetch? } — opening/closing are the step barriers before a call and after its answer
 * (record.mjs); enter/leave bracket work whose values are not the agent's (the interceptors' own
 * request ids); fetch: false leaves fetch to the fast observer (record-fast-fetch.mjs, with the
 * same barriers). Returns dispose().
 * @param {any} ctx
 */
export function installInterceptors(ctx) {
  const { proxy, current, send, opening, closing, flushRun, settleStreams, track, pid, origin, enter, leave } = ctx;
  const withFetch = ctx.fetch !== false;
  const directFetch = globalThis.fetch;
  const interceptor = new BatchInterceptor({
    name: 'tapedeck-record',
    interceptors: withFetch
      ? [new ClientRequestInterceptor(), new FetchInterceptor()]
      : [new ClientRequestInterceptor()],
  });
  const open = new Map();

  interceptor.on('request', async ({ request, requestId, controller }) => {
    // An upgrade (a WebSocket) is not an exchange: what goes over the connection after it is not
    // HTTP. It goes on to its socket: the socket watcher (record-sockets.mjs) follows it, or under
    // --isolate the proxy door (record-proxy-door.mjs) takes it to the proxy, which records it.
    if (request.headers.has('upgrade')) return;
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
    const id = `${origin}-${requestId}`;
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
      headers: headerObject(request.headers),
      body,
    });
    await opening(run, 'req', id);
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
      headers: headerObject(response.headers),
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
    await closing(run, { t: 'res', ...head, body, end: nowMs(), error }, id);
  });

  // The interceptors' own randomness (request ids) must not count as the agent's.
  /** @type {Array<() => void>} */
  const wrapped = [];
  const suppressDuring = (target, key) => {
    const undo = wrapSuppressed(target, key, enter, leave);
    if (undo) wrapped.push(undo);
  };
  interceptor.apply();
  if (withFetch) suppressDuring(globalThis, 'fetch');
  for (const mod of [http, https]) {
    suppressDuring(mod, 'request');
    suppressDuring(mod, 'get');
  }
  wrapped.push(quietRequestSockets(http, net, suppressDuring));
  wrapped.push(plainAbsoluteForm());
  return function dispose() {
    for (const undo of wrapped.reverse()) undo();
    interceptor.dispose();
  };
}

/**
 * The interceptor cannot read a request in absolute form (`path: 'http://host/x'`, what a client
 * configured with HTTP_PROXY sends its proxy: axios under --isolate, whose HTTP_PROXY is the
 * recording proxy) and fails it with "Invalid URL": such a call is made as the same request for
 * that URL, through http or https as the URL says. Under --isolate it is handed to the recording
 * proxy as any call is; without, it goes to the URL directly, not through the agent's own proxy.
 * Returns the undo.
 */
function plainAbsoluteForm() {
  /** @typedef {{ request: Function, get: Function }} Calls */
  const mods = /** @type {Array<[any, Calls]>} */ ([
    [http, { request: http.request, get: http.get }],
    [https, { request: https.request, get: https.get }],
  ]);
  /** @type {(url: URL) => Calls} */
  const targetOf = (url) => /** @type {[any, Calls]} */ (mods[url.protocol === 'https:' ? 1 : 0])[1];
  for (const [mod, own] of mods) {
    mod.request = function request(/** @type {unknown[]} */ ...args) {
      const plain = plainFromAbsoluteForm(args);
      return plain ? targetOf(plain.url).request.apply(this, plain.args) : own.request.apply(this, args);
    };
    mod.get = function get(/** @type {unknown[]} */ ...args) {
      const plain = plainFromAbsoluteForm(args);
      return plain ? targetOf(plain.url).get.apply(this, plain.args) : own.get.apply(this, args);
    };
  }
  return () => {
    for (const [mod, own] of mods) {
      mod.request = own.request;
      mod.get = own.get;
    }
  };
}
