// @ts-check
// The in-process network guard shared by the replay preload and the sandboxed-service preload:
// every net connection (net, tls, http, fetch, pg…) is refused unless its address is allowed, and
// a connection to a routed address (the recorded database's host:port) goes to the address it is
// routed to (the sandbox database's relay) — so a process reaches the sandbox however it names
// its database: any env var, a config file, a string in code.
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { aimed, targetOf } from './shared-connect-args.mjs';
import { loopbackPortAt, nothingAt, refuseAsMissing } from './shared-unix-sockets.mjs';

const LOCAL = new Set(['localhost', '127.0.0.1', '::1', '::ffff:127.0.0.1']);
const isLocal = (h) => LOCAL.has(h);
/** Whether two host names name the same host (every loopback name is one). @param {string} a @param {string} b */
export const sameHost = (a, b) => a === b || (isLocal(a) && isLocal(b));

/**
 * Installs the guard. `allowed`: { hosts: [{host, port}], paths: [unix socket paths], unixOverLoopback? }
 * (`unixOverLoopback`: in the OS sandbox only, whose loopback is its own — shared-unix-sockets.mjs);
 * `routes`: [{ from: {host, port}, to: {host, port} }], `socketRoutes`: [{ from: a Unix socket's path,
 * to: {host, port} }]; `onBlocked(target)` and `onRouted(from, to)` hear of each refused and each
 * rerouted connection.
 * @param {{ hosts: import('../protocol.js').HostPort[], paths: string[], unixOverLoopback?: boolean }} allowed
 * @param {(target: string) => void} onBlocked
 * @param {Array<{ from: import('../protocol.js').HostPort, to: import('../protocol.js').HostPort }>} [routes]
 * @param {(from: string, to: string) => void} [onRouted]
 * @param {Array<{ from: string, to: import('../protocol.js').HostPort }>} [socketRoutes]
 */
export function installNetworkGuard(allowed, onBlocked, routes = [], onRouted = () => {}, socketRoutes = []) {
  // Patched in place: connect() takes many argument forms, so it is typed loosely here.
  const proto = /** @type {any} */ (net.Socket.prototype);
  const realConnect = proto.connect;
  const permitted = (target) => {
    if (target.path !== undefined) return allowed.paths.includes(path.resolve(String(target.path)));
    const host = String(target.host ?? 'localhost');
    const port = Number(target.port);
    return allowed.hosts.some((a) => Number(a.port) === port && sameHost(a.host, host));
  };
  const routeOf = (target) => {
    if (target.path !== undefined) {
      const at = path.resolve(String(target.path));
      return socketRoutes.find((r) => r.from === at);
    }
    const host = String(target.host ?? 'localhost');
    const port = Number(target.port);
    return routes.find((r) => Number(r.from.port) === port && sameHost(String(r.from.host), host));
  };
  proto.connect = function guardedConnect(...args) {
    const target = targetOf(args);
    // A Unix socket of the tree's own, carried over the OS sandbox's loopback (shared-unix-sockets.mjs).
    const loopback =
      allowed.unixOverLoopback === true && target.path !== undefined ? loopbackPortAt(String(target.path)) : undefined;
    if (loopback !== undefined) return realConnect.apply(this, aimed(args, { host: '127.0.0.1', port: loopback }));
    const route = routeOf(target);
    if (route) {
      const from = target.path !== undefined ? String(target.path) : `${target.host ?? 'localhost'}:${target.port}`;
      onRouted(from, `${route.to.host}:${route.to.port}`);
      return realConnect.apply(this, aimed(args, route.to));
    }
    if (permitted(target)) return realConnect.apply(this, args);
    const where = target.path !== undefined ? String(target.path) : `${target.host ?? 'localhost'}:${target.port}`;
    // No socket there (a dev tool's pipe to a parent that is not running, such as tsx's
    // /tmp/tsx-<uid>/<ppid>.pipe): it fails as it would anywhere, and it is no way out.
    if (target.path !== undefined && nothingAt(where)) return refuseAsMissing(this, where);
    onBlocked(where);
    const error = Object.assign(
      new Error(`connect ECONNREFUSED ${where} (blocked by the tapedeck replay network guard)`),
      { code: 'ECONNREFUSED' },
    );
    process.nextTick(() => this.destroy(error));
    return this;
  };
}

/**
 * A TLS connection to a routed address whose answerer presents a certificate of its own CA (the
 * replay's WebSocket answerer, for wss://) trusts that CA: `ca` (PEM) is added to the connection's
 * options. Other TLS connections are left as they are. Returns undo().
 * @param {Array<{ from: import('../protocol.js').HostPort, websocket?: boolean }>} routes
 * @param {string} ca
 */
export function trustRoutedTls(routes, ca) {
  const realConnect = tls.connect;
  const routed = (/** @type {any} */ options) => {
    const host = String(options?.host ?? 'localhost');
    const port = Number(options?.port);
    return routes.some(
      (r) => r.websocket === true && Number(r.from.port) === port && sameHost(String(r.from.host), host),
    );
  };
  /** @type {any} */
  const patched = function connect(/** @type {any[]} */ ...args) {
    // tls.connect(options[, cb]) or tls.connect(port[, host][, options][, cb]).
    const at = args.findIndex((a) => a !== null && typeof a === 'object');
    const options = at === -1 ? {} : args[at];
    const merged =
      typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))
        ? { ...options, port: Number(args[0]), host: typeof args[1] === 'string' ? args[1] : options.host }
        : options;
    if (!routed(merged)) return Reflect.apply(realConnect, this, args);
    const given = merged.ca === undefined ? [] : Array.isArray(merged.ca) ? merged.ca : [merged.ca];
    const callback = args.find((a) => typeof a === 'function');
    const next = { ...merged, ca: [...given, ca] };
    return Reflect.apply(realConnect, this, callback ? [next, callback] : [next]);
  };
  tls.connect = patched;
  return () => {
    if (tls.connect === patched) tls.connect = realConnect;
  };
}
