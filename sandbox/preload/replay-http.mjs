// @ts-check
// The replay preload's fast path for node:http and node:https (and what is built on them: axios,
// got, node-fetch…). In exact mode, a request whose method and path are the next recorded call's
// gets a light ClientRequest stand-in: its body is collected, and at end() the recorded answer
// is handed over as an IncomingMessage, with no HTTP written or parsed and no Request/Response
// objects built (the interceptor's way costs ~10x more per call). Its socket is a stand-in too:
// reused when the recorded request's was (a kept-alive socket), else new, with a new one's
// 'lookup', 'connect' and 'secureConnect': a client that times its requests by them (got) reads
// the clock as often as when recorded, so each answer waits for no value it would never draw. Anything
// else — another call, a body that differs, streams, upgrades — goes to the interceptor as
// before, and so does the stand-in itself when its body turns out not to match.
//
// A request in absolute form (`path: 'http://host/x'`, what a client configured with HTTP_PROXY
// sends to the proxy, e.g. axios inside the OS sandbox) is taken as a request for that URL: the
// preload answers every request itself, and the interceptor cannot read that form.
import { EventEmitter } from 'node:events';
import http from 'node:http';
import { isIP } from 'node:net';
import { Writable } from 'node:stream';
import { HOP_HEADERS } from './shared-wire.mjs';

/**
 * The parts of a request call that matter here, or undefined when the call is one the fast path
 * leaves alone (a socket path, a custom connection, headers as an array, an upgrade).
 */
function requestOf(defaultProtocol, args) {
  let url;
  let options;
  let callback;
  if (typeof args[0] === 'string' || args[0] instanceof URL) {
    url = new URL(String(args[0]));
    if (typeof args[1] === 'function') callback = args[1];
    else {
      options = args[1];
      callback = args[2];
    }
  } else {
    options = args[0];
    callback = args[1];
  }
  if (options !== undefined && (options === null || typeof options !== 'object')) return undefined;
  const o = options ?? {};
  if (o.socketPath || o.createConnection || o.setHost === false || Array.isArray(o.headers)) return undefined;
  if (typeof callback !== 'function') callback = undefined;
  const protocol = o.protocol ?? url?.protocol ?? defaultProtocol;
  const hostname = String(o.hostname ?? o.host ?? url?.hostname ?? 'localhost').replace(/^\[(.*)\]$/, '$1');
  const defaultPort = protocol === 'https:' ? 443 : 80;
  const port = Number(o.port ?? (url?.port || o.defaultPort || defaultPort));
  const path = o.path ?? (url ? `${url.pathname}${url.search}` : '/');
  const method = String(o.method ?? 'GET').toUpperCase();
  /** @type {Record<string, string | string[]>} */
  const headers = {};
  for (const [name, value] of Object.entries(o.headers ?? {})) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.map(String) : String(value);
  }
  if (o.auth && headers.authorization === undefined) {
    headers.authorization = `Basic ${Buffer.from(String(o.auth)).toString('base64')}`;
  } else if (url && (url.username || url.password) && headers.authorization === undefined) {
    const auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(auth).toString('base64')}`;
  }
  const host = hostname.includes(':') ? `[${hostname}]` : hostname;
  // Absolute form (a proxy request): the URL asked for is the path.
  const absolute = /^https?:\/\//i.test(path);
  const target = new URL(absolute ? path : `${protocol}//${host}${port === defaultPort ? '' : `:${port}`}${path}`);
  // Path and query as the URL reads them, once: every check below compares this.
  const pq = `${target.pathname}${target.search}`;
  return { method, url: target, pq, headers, callback, options: o, absolute };
}

/** What a request call would be given in the plain form, for the interceptor's path. */
function plainArgs(req) {
  const { agent, host: _h, hostname: _n, port: _p, path: _x, protocol: _o, ...rest } = req.options;
  // A proxy's agent is left behind with the proxy.
  const options = { ...rest, ...(req.absolute ? {} : { agent }), method: req.method, headers: req.headers };
  return [req.url, options, ...(req.callback ? [req.callback] : [])];
}

/**
 * A request's socket and its answer's: nothing to read from, nothing to close. Made connecting:
 * `connect()` then says what a real one says as it connects. Only a TLS one has `encrypted` (a
 * client tells TLS sockets by the property being there: got's timings wait for 'secureConnect').
 */
class AnsweredSocket extends EventEmitter {
  constructor(url) {
    super();
    this.readable = false;
    this.writable = false;
    this.destroyed = false;
    this.connecting = true;
    if (url.protocol === 'https:') {
      this.encrypted = true;
      this.authorized = false;
    }
    this.remoteAddress = url.hostname;
    this.remotePort = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    this.remoteFamily = url.hostname.includes(':') ? 'IPv6' : 'IPv4';
  }
  setKeepAlive() {
    return this;
  }
  setNoDelay() {
    return this;
  }
  setTimeout() {
    return this;
  }
  ref() {
    return this;
  }
  unref() {
    return this;
  }
  resume() {
    return this;
  }
  pause() {
    return this;
  }
  destroy() {
    this.destroyed = true;
    return this;
  }
  destroySoon() {
    this.destroyed = true;
  }
  address() {
    return { address: '127.0.0.1', family: 'IPv4', port: 0 };
  }
  /** What a new socket says as it connects: 'lookup' (a host name, not an address), 'connect', then over TLS 'secureConnect'. */
  connect() {
    if (isIP(this.remoteAddress) === 0) this.emit('lookup', null, this.remoteAddress, 4, this.remoteAddress);
    this.connecting = false;
    this.readable = true;
    this.writable = true;
    this.emit('connect');
    if (this.encrypted) {
      this.authorized = true;
      this.emit('secureConnect');
    }
  }
  /** Connected already, saying nothing: a kept-alive socket. */
  connected() {
    this.connecting = false;
    this.readable = true;
    this.writable = true;
    if (this.encrypted) this.authorized = true;
    return this;
  }
}

/** Idle stand-in sockets, by agent and origin: the one a request recorded on a reused socket takes. */
const idleSockets = new WeakMap();
/** The key of requests made with no agent (`agent: false`). */
const noAgent = {};
/** Idle stand-ins kept an agent and origin at most (Node's agents keep 256 free sockets): a run whose requests were all on new sockets keeps no more. */
const MAX_IDLE = 256;

/** The idle sockets of `agent` (or of none) for `url`'s origin. */
function idleOf(given, url) {
  const agent = given !== null && typeof given === 'object' ? given : noAgent;
  let byOrigin = idleSockets.get(agent);
  if (!byOrigin) {
    byOrigin = new Map();
    idleSockets.set(agent, byOrigin);
  }
  let idle = byOrigin.get(url.origin);
  if (!idle) {
    idle = [];
    byOrigin.set(url.origin, idle);
  }
  return idle;
}

/**
 * The stand-in ClientRequest: a Writable collecting the body, with ClientRequest's header methods
 * and events. At the end of the body it is answered from the recording, or handed to `fallback`
 * (a real request through the interceptor) whose events it passes on.
 */
class AnsweredRequest extends Writable {
  constructor(req, answer, fallback, hold, defaultAgent, reusedSocket) {
    super({ autoDestroy: false, emitClose: false });
    this.method = req.method;
    this.path = req.absolute ? req.url.href : req.pq;
    this.host = req.url.hostname;
    this.protocol = req.url.protocol;
    this.agent = req.options.agent;
    this.aborted = false;
    this.reusedSocket = false;
    this.maxHeadersCount = null;
    this.socket = null;
    this.res = null;
    this._headers = { ...req.headers };
    this._chunks = [];
    this._req = req;
    this._answer = answer;
    this._fallback = fallback;
    this._hold = hold;
    this._real = undefined;
    /** Whether the recorded request's socket was a reused one (undefined: not recorded, taken as new). */
    this._reused = reusedSocket === true;
    /** The idle sockets of its agent and origin: a reused one is taken from them, and each goes back once answered. */
    this._idle = idleOf(this.agent === undefined ? defaultAgent : this.agent, req.url);
    if (req.callback) this.once('response', req.callback);
    // Node gives a request its socket on the next tick: a reused one, or a new one that connects.
    process.nextTick(() => this._takeSocket());
  }
  get connection() {
    return this.socket;
  }
  _takeSocket() {
    if (this.socket || this.destroyed) return;
    // Reused: an idle stand-in of its agent and origin (one a request before it had), else one
    // connected already.
    const socket = this._reused
      ? (this._idle.pop() ?? new AnsweredSocket(this._req.url).connected())
      : new AnsweredSocket(this._req.url);
    this.socket = socket;
    this.reusedSocket = this._reused;
    this.emit('socket', socket);
    if (socket.connecting) socket.connect();
  }
  get finished() {
    return this.writableEnded;
  }
  get headersSent() {
    return this.writableEnded;
  }
  setHeader(name, value) {
    this._headers[String(name).toLowerCase()] = Array.isArray(value) ? value.map(String) : String(value);
    return this;
  }
  appendHeader(name, value) {
    const key = String(name).toLowerCase();
    const before = this._headers[key];
    const add = Array.isArray(value) ? value.map(String) : [String(value)];
    this._headers[key] = before === undefined ? add : [...(Array.isArray(before) ? before : [before]), ...add];
    return this;
  }
  getHeader(name) {
    return this._headers[String(name).toLowerCase()];
  }
  hasHeader(name) {
    return this._headers[String(name).toLowerCase()] !== undefined;
  }
  removeHeader(name) {
    delete this._headers[String(name).toLowerCase()];
  }
  getHeaders() {
    return { ...this._headers };
  }
  getHeaderNames() {
    return Object.keys(this._headers);
  }
  getRawHeaderNames() {
    return Object.keys(this._headers);
  }
  flushHeaders() {}
  setNoDelay() {}
  setSocketKeepAlive() {}
  setTimeout(ms, callback) {
    if (callback) this.once('timeout', callback);
    this._real?.setTimeout(ms);
    return this;
  }
  abort() {
    if (this.aborted) return;
    this.aborted = true;
    process.nextTick(() => this.emit('abort'));
    this.destroy();
  }
  /** @override */
  _write(chunk, _encoding, callback) {
    this._chunks.push(chunk);
    callback();
  }
  /** @override */
  _final(callback) {
    this._takeSocket();
    const body = Buffer.concat(this._chunks);
    this._chunks = [];
    /** @type {Record<string, string>} */
    const headers = { host: this._req.url.host };
    for (const [name, value] of Object.entries(this._headers)) headers[name] = [value].flat().join(', ');
    const reply = this._answer(this.method, this._req.url.href, headers, body, this._req.pq);
    if (!reply) this._passOn(body);
    else {
      // Answered once the request has finished, as a real one is (its 'finish' listeners first:
      // got reads the clock there), and once its process has drawn the values it had drawn
      // before the answer when recorded (see `hold`): most often by then, with nothing to wait for.
      this.once('finish', () => {
        const wait = this._hold?.(reply);
        if (wait === undefined) this._respond(reply);
        else void wait.then(() => this._respond(reply));
      });
    }
    callback();
  }
  /** @override */
  _destroy(error, callback) {
    this._real?.destroy(error ?? undefined);
    callback(error);
    process.nextTick(() => this.emit('close'));
  }
  _respond(reply) {
    const socket = this.socket ?? new AnsweredSocket(this._req.url);
    // Filled in as Node's parser would (headers, req): not all of it is in IncomingMessage's types.
    const res = /** @type {any} */ (new http.IncomingMessage(/** @type {any} */ (socket)));
    const status = reply.status >= 200 && reply.status <= 599 ? reply.status : 500;
    res.statusCode = status;
    res.statusMessage = reply.statusText || http.STATUS_CODES[status] || '';
    res.httpVersion = '1.1';
    res.httpVersionMajor = 1;
    res.httpVersionMinor = 1;
    const raw = [];
    for (const [name, value] of Object.entries(reply.headers ?? {})) {
      if (HOP_HEADERS.has(name.toLowerCase())) continue;
      // Set-Cookie values the recorder kept apart (newline-separated) are separate headers again.
      for (const v of String(value).split('\n')) raw.push(name, v);
    }
    res.rawHeaders = raw;
    // IncomingMessage reads its headers from the parser's count, not from rawHeaders: set them.
    /** @type {Record<string, string | string[]>} */
    const headers = {};
    for (let i = 0; i < raw.length; i += 2) res._addHeaderLine(raw[i], raw[i + 1], headers);
    res.headers = headers;
    res.req = /** @type {any} */ (this);
    this.res = res;
    if (this.method !== 'HEAD' && ![204, 205, 304].includes(status)) {
      const bytes =
        reply.body?.b64 !== undefined
          ? Buffer.from(reply.body.b64, 'base64')
          : reply.body?.text !== undefined
            ? Buffer.from(reply.body.text, 'utf8')
            : undefined;
      if (bytes && bytes.length > 0) res.push(bytes);
    }
    res.complete = true;
    res.push(null);
    res.once('end', () => {
      // Answered: its socket is free for the next request to its origin recorded on a reused one.
      if (socket instanceof AnsweredSocket && !socket.destroyed && this._idle.length < MAX_IDLE)
        this._idle.push(socket);
      process.nextTick(() => this.emit('close'));
    });
    process.nextTick(() => {
      if (this.destroyed) return;
      this.emit('response', res);
    });
  }
  /** Not the recorded call after all: a real request through the interceptor, events passed on. */
  _passOn(body) {
    const req = { ...this._req, headers: this._headers, callback: undefined };
    const real = this._fallback(req);
    this._real = real;
    for (const event of ['response', 'error', 'timeout', 'information', 'upgrade', 'socket', 'continue']) {
      real.on(event, (...args) => {
        if (event === 'response') this.res = args[0];
        if (event === 'socket') this.socket = args[0];
        this.emit(event, ...args);
      });
    }
    real.on('close', () => this.emit('close'));
    real.end(body.length > 0 ? body : undefined);
  }
}

/**
 * Wraps `mod.request` and `mod.get` (node:http or node:https) with the fast path. `peek()` is the
 * next recorded call when one may be answered here (method, path and query, body text, reply);
 * `answer(method, url, headers, body)` takes it if the call is it, byte for byte, and returns its
 * reply (`pq`: the URL's path and query, already read); `hold(reply)`, when given, is undefined
 * when the reply may go now, else a promise it waits for. Every other call goes to
 * `through(mod).request` (the interceptor's, which the caller may load only then); without
 * `through`, to the module's request as it was when wrapped.
 * @param {{ peek: () => any, answer: (method: string, url: string, headers: Record<string, string>, body: Buffer, pq: string) => any, hold?: (reply: any) => Promise<void> | undefined } | undefined} fast
 * @param {(mod: any) => { request: Function }} [through]
 */
export function installFastHttp(mods, fast, through) {
  const originals = new Map(mods.map((m) => [m, { request: m.request, get: m.get }]));
  const fallback = through ?? ((mod) => originals.get(mod));
  const byProtocol = (protocol) => mods.find((m) => (m.globalAgent?.protocol ?? 'http:') === protocol);
  const viaInterceptor = (req) => {
    const mod = byProtocol(req.url.protocol) ?? mods[0];
    return fallback(mod).request(...plainArgs(req));
  };
  for (const mod of mods) {
    const own = originals.get(mod);
    const defaultProtocol = mod.globalAgent?.protocol ?? 'http:';
    const request = function request(...args) {
      let req;
      try {
        req = requestOf(defaultProtocol, args);
      } catch {
        req = undefined;
      }
      if (!req) return fallback(mod).request.apply(this, args);
      const upgrade = req.headers.upgrade !== undefined || req.method === 'CONNECT';
      const entry = fast?.peek();
      const reply = entry?.reply;
      const plain =
        entry &&
        !upgrade &&
        entry.method === req.method &&
        entry.pq === req.pq &&
        !reply.chunks &&
        !(reply.status >= 100 && reply.status < 200);
      if (plain && fast)
        return new AnsweredRequest(req, fast.answer, viaInterceptor, fast.hold, mod.globalAgent, reply.reusedSocket);
      // The interceptor cannot read the absolute form: the same request, plainly.
      return req.absolute ? viaInterceptor(req) : fallback(mod).request.apply(this, args);
    };
    const get = function get(...args) {
      const req = request.apply(this, args);
      req.end();
      return req;
    };
    Object.defineProperty(request, 'name', { value: own.request.name });
    mod.request = request;
    mod.get = get;
  }
}
