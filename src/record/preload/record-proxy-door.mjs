// @ts-check
// record --isolate: the OS sandbox has no network but tapedeck's doors (the recording proxy, the
// recorder's IPC, the databases given), so a connection a Node process opens to anywhere else — a
// WebSocket's (the ws package, undici's), a raw net or tls socket — would fail there. It goes to
// the recording proxy instead, through a CONNECT tunnel to its target (the agent's socket is the
// same object; only where it leads changes): the proxy makes it for real and records what it
// carries (an HTTP call, a WebSocket conversation: src/record/isolate-websocket.ts), or refuses it
// and names it in the recording's side channels (anything else). Nothing passes unrecorded. A
// loopback port that listens inside (a server the agent started in the sandbox) is reached as is.
import net from 'node:net';
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import { listensHere } from '../../../sandbox/os/listening.mjs';
import { aimed, targetOf } from '../../../sandbox/preload/shared-connect-args.mjs';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * Reads the proxy's answer to the CONNECT off the front of what `feed` is given: then calls
 * `onOpen(rest)` with what follows it, or `onRefused(statusLine)`.
 * @param {(rest: Buffer) => void} onOpen
 * @param {(status: string) => void} onRefused
 */
function answerReader(onOpen, onRefused) {
  let head = Buffer.alloc(0);
  let done = false;
  return {
    get done() {
      return done;
    },
    /** @param {Buffer} chunk */
    feed(chunk) {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > 16384) {
          done = true;
          onRefused('an answer too long');
        }
        return;
      }
      done = true;
      const status = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
      if (/^HTTP\/1\.[01] 200\b/.test(status)) onOpen(head.subarray(end + 4));
      else onRefused(status);
    },
  };
}

/**
 * Sends the connections of this process that no door leads to through the proxy at `proxy`
 * (http://127.0.0.1:port). `doors`: the other ports open inside (IPC, databases); `suppressed()`:
 * tapedeck's own work. Returns undo().
 * @param {{ proxy: string, doors: number[], pid: number, suppressed: () => boolean }} ctx
 */
export function installProxyDoor(ctx) {
  const proxyPort = Number(new URL(ctx.proxy).port);
  const open = new Set([proxyPort, ...ctx.doors.map(Number)]);
  const through = (/** @type {{ path?: unknown, host?: unknown, port?: unknown }} */ target) =>
    !ctx.suppressed() &&
    target.path === undefined &&
    target.port !== undefined &&
    !open.has(Number(target.port)) &&
    !(LOOPBACK.has(String(target.host ?? 'localhost')) && listensHere(Number(target.port)));
  const auth = Buffer.from(`pid:${ctx.pid}`).toString('base64');
  const connectLine = (/** @type {string} */ host, /** @type {number} */ port) => {
    const authority = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    return `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\nProxy-Authorization: Basic ${auth}\r\n\r\n`;
  };
  const refused = (/** @type {string} */ target, /** @type {string} */ status) =>
    Object.assign(new Error(`connect ECONNREFUSED ${target} (the tapedeck recording proxy: ${status})`), {
      code: 'ECONNREFUSED',
    });

  const proto = /** @type {any} */ (net.Socket.prototype);
  const realConnect = proto.connect;
  const realWrite = proto.write;
  /** @this {any} @param {any[]} args */
  const doorConnect = function (...args) {
    const target = targetOf(args);
    // A TLS socket connecting itself writes through its native layer: tls.connect is taken below.
    if (this instanceof tls.TLSSocket || !through(target)) return realConnect.apply(this, args);
    const host = String(target.host ?? 'localhost');
    const port = Number(target.port);
    const result = realConnect.apply(this, aimed(args, { host: '127.0.0.1', port: proxyPort }));
    // Queued before anything the agent writes (a socket writes in order once connected).
    realWrite.call(this, connectLine(host, port));
    const { push } = this;
    const reader = answerReader(
      (rest) => {
        if (this.push === ownPush) delete this.push;
        if (rest.length > 0) push.call(this, rest);
      },
      (status) => this.destroy(refused(`${host}:${port}`, status)),
    );
    /** @this {any} @param {any} chunk @param {any} encoding */
    const ownPush = function (chunk, encoding) {
      if (chunk === null || chunk === undefined || reader.done) return push.call(this, chunk, encoding);
      reader.feed(typeof chunk === 'string' ? Buffer.from(chunk, encoding) : Buffer.from(chunk));
      return true;
    };
    this.push = ownPush;
    return result;
  };
  proto.connect = doorConnect;

  // TLS (wss://, https:// by a raw client): the tunnel is a plain socket to the proxy, read as a
  // stream (the TLS layer then reads what follows the proxy's answer, never the answer itself).
  const realTlsConnect = tls.connect;
  /** @param {any[]} args */
  const tlsConnect = (...args) => {
    const callback = args.find((a) => typeof a === 'function');
    /** @type {any} */
    let options = {};
    if (args[0] !== null && typeof args[0] === 'object') options = { ...args[0] };
    else {
      options.port = args[0];
      if (typeof args[1] === 'string') options.host = args[1];
      const more = args.find((a, i) => i > 0 && a !== null && typeof a === 'object');
      if (more) options = { ...more, ...options };
    }
    const target = { host: options.host ?? 'localhost', port: options.port ?? 443, path: options.path ?? undefined };
    if (options.socket != null || !through(target)) return realTlsConnect.apply(tls, /** @type {any} */ (args));
    const host = String(target.host);
    const port = Number(target.port);
    const raw = realConnect.call(new net.Socket(), { host: '127.0.0.1', port: proxyPort });
    realWrite.call(raw, connectLine(host, port));
    /** @type {Duplex} */
    const tunnel = new Duplex({
      read() {
        raw.resume();
      },
      write(chunk, encoding, done) {
        raw.write(chunk, encoding, done);
      },
      final(done) {
        raw.end(done);
      },
      destroy(error, done) {
        raw.destroy(error ?? undefined);
        done(error);
      },
    });
    const reader = answerReader(
      (rest) => {
        if (rest.length > 0) tunnel.push(rest);
      },
      (status) => tunnel.destroy(refused(`${host}:${port}`, status)),
    );
    raw.on('data', (/** @type {Buffer} */ data) => {
      if (!reader.done) reader.feed(data);
      else if (!tunnel.push(data)) raw.pause();
    });
    raw.once('end', () => tunnel.push(null));
    raw.once('close', () => tunnel.destroy());
    raw.on('error', (/** @type {Error} */ error) => tunnel.destroy(error));
    const secure = {
      ...options,
      socket: tunnel,
      ...(options.servername === undefined && net.isIP(host) === 0 ? { servername: host } : {}),
    };
    return callback ? realTlsConnect.call(tls, secure, callback) : realTlsConnect.call(tls, secure);
  };
  tls.connect = /** @type {any} */ (tlsConnect);

  return function undo() {
    if (proto.connect === doorConnect) proto.connect = realConnect;
    if (tls.connect === tlsConnect) tls.connect = realTlsConnect;
  };
}
