// @ts-check
// The npm `undici` package (not Node's bundled one behind global fetch): its dispatchers (Agent,
// Pool, Client, the default one of request/stream/fetch) are separate from global fetch's, so the
// preloads reach them where every one of them passes: DispatcherBase.prototype.dispatch, patched
// when the package is loaded (require or import, seen through Module._load). Handlers are first
// unwrapped to undici's classic callbacks (onConnect/onHeaders/onData/onComplete/onError), as
// undici itself does, so one wrapper serves both handler styles.
import { AsyncLocalStorage } from 'node:async_hooks';
import Module, { createRequire } from 'node:module';

import path from 'node:path';

// Node's module internals (_load, _cache, _resolveFilename) are not in its types.
const ModuleInternals = /** @type {any} */ (Module);

const patched = new WeakSet();
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
/** Dispatches made by the package's own fetch (global fetch's belong to the fetch layer). */
const viaPackageFetch = new AsyncLocalStorage();

/**
 * Whether this dispatch is one the patch should take, once (not again when an Agent passes it to
 * its Pool and Client). The package's API (request, stream, pipeline…) dispatches with handler
 * objects of its own classes; fetch dispatches with a plain object — taken only from the
 * package's own fetch, never from global fetch (its interceptors and observers have it).
 */
const seen = new WeakSet();
export function ownDispatch(opts, handler) {
  // Upgrades (WebSocket) and CONNECT tunnels are not HTTP exchanges: they pass through.
  if (opts === null || typeof opts !== 'object' || handler === null || typeof handler !== 'object') return false;
  if (opts.upgrade || opts.method === 'CONNECT') return false;
  if (seen.has(opts)) return false;
  const plain = handler?.constructor === Object || handler?.constructor === undefined;
  if (plain && viaPackageFetch.getStore() !== true) return false;
  seen.add(opts);
  return true;
}

/** Marks a dispatch as recorded by another layer (the fetch layer's observed global dispatcher). */
export function claimDispatch(opts) {
  if (opts !== null && typeof opts === 'object') seen.add(opts);
}

const UNDICI_INDEX = /[\\/]node_modules[\\/]undici[\\/]index\.js$/;

/**
 * Calls `patch({ DispatcherBase, unwrap, undici })` once per undici installation the agent has
 * loaded or loads later. `patch` replaces DispatcherBase.prototype.dispatch as it needs. Returns
 * the undo: an in-process recorder installs this with its first run and removes it with its last
 * (the dispatch patches, the package fetch wrapper, the load hook).
 */
export function onUndiciLoad(patch) {
  const undo = [];
  const take = (DispatcherBase, unwrap, exports) => {
    if (!DispatcherBase || typeof DispatcherBase.dispatch !== 'function' || patched.has(DispatcherBase)) return;
    patched.add(DispatcherBase);
    const own = Object.hasOwn(DispatcherBase, 'dispatch');
    const before = DispatcherBase.dispatch;
    patch({ DispatcherBase, unwrap, undici: exports });
    undo.push(() => {
      if (own) DispatcherBase.dispatch = before;
      else delete DispatcherBase.dispatch;
      patched.delete(DispatcherBase);
    });
  };
  const found = (index, exports) => {
    const Agent = exports?.Agent;
    const DispatcherBase = typeof Agent === 'function' ? Object.getPrototypeOf(Agent.prototype) : undefined;
    if (!DispatcherBase || typeof DispatcherBase.dispatch !== 'function' || patched.has(DispatcherBase)) return;
    const local = createRequire(index);
    let unwrap = (handler) => handler;
    try {
      const UnwrapHandler = local(path.join(path.dirname(index), 'lib', 'handler', 'unwrap-handler.js'));
      if (typeof UnwrapHandler?.unwrap === 'function') unwrap = (handler) => UnwrapHandler.unwrap(handler);
    } catch {}
    take(DispatcherBase, unwrap, exports);
    const packageFetch = exports.fetch;
    if (typeof packageFetch === 'function') {
      const fetch = function fetch(...args) {
        return viaPackageFetch.run(true, () => packageFetch.apply(this, args));
      };
      exports.fetch = fetch;
      undo.push(() => {
        if (exports.fetch === fetch) exports.fetch = packageFetch;
      });
    }
    // Its request()/stream() use the global dispatcher, which may be Node's own (bundled)
    // undici's: that one is reached too (global fetch's own dispatches are told apart).
    const global = globalThis[GLOBAL_DISPATCHER];
    const bundled =
      global && !(global instanceof Agent) ? Object.getPrototypeOf(Object.getPrototypeOf(global)) : undefined;
    take(bundled, unwrap, exports);
  };
  // Copies loaded before (a server loads its modules before its first recorded request).
  for (const [file, mod] of Object.entries(ModuleInternals._cache ?? {})) {
    try {
      if (UNDICI_INDEX.test(file) && mod?.loaded) found(file, mod.exports);
    } catch {}
  }
  const load = ModuleInternals._load;
  let active = true;
  const tapedeckLoad = function tapedeckLoad(...args) {
    const [request, parent, isMain] = args;
    const exports = load.apply(this, args);
    if (!active) return exports;
    try {
      if (request === 'undici' || UNDICI_INDEX.test(String(request))) {
        found(
          request === 'undici' ? ModuleInternals._resolveFilename(request, parent, isMain) : String(request),
          exports,
        );
      }
    } catch {}
    return exports;
  };
  ModuleInternals._load = tapedeckLoad;
  undo.push(() => {
    active = false;
    if (ModuleInternals._load === tapedeckLoad) ModuleInternals._load = load;
  });
  return () => {
    for (const u of undo.reverse()) u();
  };
}

/** The origin a Pool or Client dispatches to when the options name none (its own URL). */
function ownOrigin(dispatcher) {
  if (!dispatcher || typeof dispatcher !== 'object') return '';
  for (const key of Object.getOwnPropertySymbols(dispatcher)) {
    const value = dispatcher[key];
    if (key.description === 'url' && value instanceof URL) return value.origin;
  }
  return '';
}

/** The request of a dispatch: method, absolute URL and headers as an object (repeats joined). */
export function dispatchRequest(opts, dispatcher) {
  const given = opts.origin;
  const origin =
    given === undefined || given === null || given === ''
      ? ownOrigin(dispatcher)
      : typeof given === 'string'
        ? given
        : String(given.origin ?? given);
  /** @type {Record<string, string>} */
  const headers = {};
  const add = (name, value) => {
    if (value === undefined || value === null) return;
    const key = String(name).toLowerCase();
    const v = Array.isArray(value) ? value.join(', ') : String(value);
    headers[key] = headers[key] === undefined ? v : `${headers[key]}, ${v}`;
  };
  const h = opts.headers;
  if (Array.isArray(h)) {
    if (Array.isArray(h[0])) for (const [n, v] of h) add(n, v);
    else for (let i = 0; i + 1 < h.length; i += 2) add(h[i], h[i + 1]);
  } else if (h && typeof h[Symbol.iterator] === 'function' && typeof h !== 'string') {
    for (const [n, v] of h) add(n, v);
  } else if (h && typeof h === 'object') {
    for (const [n, v] of Object.entries(h)) add(n, v);
  }
  return {
    method: String(opts.method ?? 'GET').toUpperCase(),
    url: `${origin.replace(/\/$/, '')}${opts.path ?? '/'}`,
    headers,
  };
}

/** The bytes of a dispatch body (string, bytes, a stream or an async iterable), read whole. */
export async function dispatchBody(body) {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (typeof body[Symbol.asyncIterator] === 'function' || typeof body[Symbol.iterator] === 'function') {
    const chunks = [];
    for await (const chunk of body) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk));
    return Buffer.concat(chunks);
  }
  if (typeof body.arrayBuffer === 'function') return Buffer.from(await body.arrayBuffer());
  return Buffer.from(String(body));
}
