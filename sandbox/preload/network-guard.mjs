// @ts-check
// The in-process network guard shared by the replay preload and the sandboxed-service preload:
// every net connection (net, tls, http, fetch, pg…) is refused unless its address is allowed, and
// a connection to a routed address (the recorded database's host:port) goes to the address it is
// routed to (the sandbox database's relay) — so a process reaches the sandbox however it names
// its database: any env var, a config file, a string in code.
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';

const LOCAL = new Set(['localhost', '127.0.0.1', '::1', '::ffff:127.0.0.1']);
const isLocal = (h) => LOCAL.has(h);
/** Whether two host names name the same host (every loopback name is one). @param {string} a @param {string} b */
export const sameHost = (a, b) => a === b || (isLocal(a) && isLocal(b));

/** The target of a net.Socket#connect call, from any of its argument forms. */
export function targetOf(args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  // An agent's options carry `path: null` for a TCP connection (node:http's, and the
  // interceptors' passthrough): no path, not a Unix socket named "null".
  if (first !== null && typeof first === 'object')
    return { path: first.path ?? undefined, host: first.host, port: first.port };
  if (typeof first === 'string' && !/^\d+$/.test(first)) return { path: first };
  return { port: first, host: typeof args[1] === 'string' ? args[1] : undefined };
}

/** The same call, aimed at `to` (host and port), keeping its options and callback. */
function aimed(args, to) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const callback = args.find((a) => typeof a === 'function');
  const options = first !== null && typeof first === 'object' ? { ...first } : {};
  options.host = to.host;
  options.port = Number(to.port);
  delete options.path;
  // A lookup function or family picked for the old host would not fit the new one.
  delete options.lookup;
  delete options.family;
  return callback ? [options, callback] : [options];
}

/**
 * Installs the guard. `allowed`: { hosts: [{host, port}], paths: [unix socket paths] };
 * `routes`: [{ from: {host, port}, to: {host, port} }]; `onBlocked(target)` and `onRouted(from, to)`
 * hear of each refused and each rerouted connection.
 * @param {{ hosts: import('../protocol.js').HostPort[], paths: string[] }} allowed
 * @param {(target: string) => void} onBlocked
 * @param {Array<{ from: import('../protocol.js').HostPort, to: import('../protocol.js').HostPort }>} [routes]
 * @param {(from: string, to: string) => void} [onRouted]
 */
export function installNetworkGuard(allowed, onBlocked, routes = [], onRouted = () => {}) {
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
    if (target.path !== undefined) return undefined;
    const host = String(target.host ?? 'localhost');
    const port = Number(target.port);
    return routes.find((r) => Number(r.from.port) === port && sameHost(String(r.from.host), host));
  };
  proto.connect = function guardedConnect(...args) {
    const target = targetOf(args);
    const route = routeOf(target);
    if (route) {
      onRouted(`${target.host ?? 'localhost'}:${target.port}`, `${route.to.host}:${route.to.port}`);
      return realConnect.apply(this, aimed(args, route.to));
    }
    if (permitted(target)) return realConnect.apply(this, args);
    const where = target.path !== undefined ? String(target.path) : `${target.host ?? 'localhost'}:${target.port}`;
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
