// Recording the npm undici package's dispatches (its Agent, Pool, Client and the default
// dispatcher of request/stream/fetch — none of them global fetch's): every dispatch's handler is
// wrapped in an observer that passes each callback on and records the exchange. With world capture
// the dispatch waits at a step barrier first, and the answer reaches the agent after the closing
// barrier, as the interceptors do for fetch and node:http.

import { failureOf, rawHeaderObject, STREAM_TYPES, toBytes } from '../../../sandbox/preload/shared-wire.mjs';
import { dispatchRequest, onUndiciLoad, ownDispatch } from '../../../sandbox/preload/undici-hook.mjs';

/** The header the proxy reads the real URL from (sandbox/proxy/server.ts TARGET_HEADER). */
const TARGET_HEADER = 'x-tapedeck-target';

/**
 * ctx: { send(run, msg), encodeBody(run, bytes), nowMs(), current(), pid, origin (what ids start with),
 * drawn(run) (what the run has drawn so far: taken as the head reaches the agent, which it does at
 * once, barriers or not), barrier(run, reason): Promise, proxy? }.
 * With `proxy` (record --isolate: the process has no other way out) every dispatch is handed to the
 * recording proxy, which makes and records it; this layer records nothing itself.
 * Returns the undo.
 */
export function recordUndici(ctx) {
  const { send, encodeBody, nowMs, current, pid, origin, drawn, barrier, proxy } = ctx;
  let seq = 0;
  return onUndiciLoad(({ DispatcherBase, unwrap, undici }) => {
    const real = DispatcherBase.dispatch;
    if (proxy !== undefined) {
      DispatcherBase.dispatch = throughProxy({ real, unwrap, undici, proxy, pid });
      return;
    }
    DispatcherBase.dispatch = function tapedeckRecordDispatch(opts, handler) {
      const run = current();
      if (run === undefined || !ownDispatch(opts, handler)) return real.call(this, opts, handler);
      const h = unwrap(handler);
      const id = `${origin}-n${++seq}`;
      const ts = nowMs();
      const request = dispatchRequest(opts, this);
      const known = toBytes(opts.body);
      const sent = known ? [known] : [];
      let res;
      let resTs = 0;
      let atHead;
      const chunks = [];
      let stream = false;
      let decoder;
      const head = () => ({
        id,
        pid,
        ts,
        ...request,
        body: sent.length > 0 ? encodeBody(run, Buffer.concat(sent)) : undefined,
      });
      const observer = {
        onConnect: (abort, context) => h.onConnect?.(abort, context),
        onUpgrade: (...args) => h.onUpgrade?.(...args),
        onResponseStarted: () => h.onResponseStarted?.(),
        onRequestSent: () => h.onRequestSent?.(),
        onBodySent(chunk) {
          if (!known) {
            const bytes = toBytes(chunk);
            if (bytes && bytes.length > 0) sent.push(bytes);
          }
          return h.onBodySent?.(chunk);
        },
        onHeaders(status, raw, resume, statusText) {
          if (status >= 200 && res === undefined) {
            resTs = nowMs();
            atHead = drawn?.(run);
            res = { status, statusText: statusText ?? '', headers: rawHeaderObject(raw, 'utf8') };
            stream = STREAM_TYPES.test(res.headers['content-type'] ?? '');
            if (stream) {
              decoder = new TextDecoder();
              send(run, { t: 'req', ...head() });
              send(run, { t: 'res', id, ts: resTs, ...res, stream: true, drawn: atHead });
            }
          }
          return h.onHeaders(status, raw, resume, statusText);
        },
        onData(chunk) {
          if (res !== undefined) {
            if (stream)
              send(run, { t: 'chunk', id, off: nowMs() - resTs, data: decoder.decode(chunk, { stream: true }) });
            else chunks.push(Buffer.from(chunk));
          }
          return h.onData(chunk);
        },
        onComplete(trailers) {
          const end = nowMs();
          if (stream) send(run, { t: 'end', id, ts: end });
          else if (res !== undefined) {
            send(run, {
              t: 'xchg',
              ...head(),
              res: { ts: resTs, ...res, body: encodeBody(run, Buffer.concat(chunks)) },
              end,
              drawn: atHead,
            });
          }
          if (!run.syncWorld) return h.onComplete(trailers);
          void barrier(run, 'res').then(() => h.onComplete(trailers));
        },
        onError(error) {
          const failure = failureOf(error);
          if (stream) send(run, { t: 'end', id, ts: nowMs(), error: failure });
          else send(run, { t: 'xchg', ...head(), end: nowMs(), error: failure });
          return h.onError(error);
        },
      };
      if (!run.syncWorld) return real.call(this, opts, observer);
      void barrier(run, 'req').then(() => real.call(this, opts, observer));
      return true;
    };
  });
}

/**
 * The dispatch of record --isolate: an HTTP exchange goes to the proxy as the preload hands it
 * fetch's and node:http's (the real URL in x-tapedeck-target, the pid in Proxy-Authorization),
 * through an Agent of the agent's own undici installation (a Pool or Client is bound to its
 * origin). A refusal from the proxy (x-tapedeck-proxy-error) reaches the agent as an error.
 * Upgrades and CONNECT go their own way (refused by the sandbox, and reported).
 */
function throughProxy({ real, unwrap, undici, proxy, pid }) {
  const proxyOrigin = new URL(proxy).origin;
  const auth = `Basic ${Buffer.from(`pid:${pid}`).toString('base64')}`;
  let agent;
  return function tapedeckProxyDispatch(opts, handler) {
    if (
      opts === null ||
      typeof opts !== 'object' ||
      handler === null ||
      typeof handler !== 'object' ||
      opts.upgrade ||
      opts.method === 'CONNECT'
    )
      return real.call(this, opts, handler);
    const request = dispatchRequest(opts, this);
    if (new URL(request.url).origin === proxyOrigin || typeof undici?.Agent !== 'function')
      return real.call(this, opts, handler);
    const headers = [];
    for (const [name, value] of Object.entries(request.headers)) {
      if (name === TARGET_HEADER || name === 'proxy-authorization') continue;
      headers.push(name, value);
    }
    headers.push(TARGET_HEADER, request.url, 'proxy-authorization', auth);
    agent ??= new undici.Agent();
    return agent.dispatch({ ...opts, origin: proxyOrigin, path: '/', headers }, refusalAsError(unwrap(handler)));
  };
}

/** A handler that turns the proxy's refusal (an answer marked x-tapedeck-proxy-error) into an error. */
function refusalAsError(h) {
  let refused;
  return {
    onConnect: (abort, context) => h.onConnect?.(abort, context),
    onUpgrade: (...args) => h.onUpgrade?.(...args),
    onResponseStarted: () => h.onResponseStarted?.(),
    onRequestSent: () => h.onRequestSent?.(),
    onBodySent: (chunk) => h.onBodySent?.(chunk),
    onHeaders(status, raw, resume, statusText) {
      const headers = rawHeaderObject(raw, 'utf8');
      if (headers['x-tapedeck-proxy-error'] === '1') {
        refused = [];
        return true;
      }
      return h.onHeaders(status, raw, resume, statusText);
    },
    onData(chunk) {
      if (refused !== undefined) {
        refused.push(Buffer.from(chunk));
        return true;
      }
      return h.onData(chunk);
    },
    onComplete(trailers) {
      if (refused !== undefined) return h.onError(new TypeError(Buffer.concat(refused).toString('utf8')));
      return h.onComplete(trailers);
    },
    onError: (error) => h.onError(error),
  };
}
