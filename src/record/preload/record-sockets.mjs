// @ts-check
// What the capture layers cannot record is said, not left out. The recorder captures HTTP (and,
// with a database URL, the database, and WebSocket conversations: record-websocket.mjs, handed the
// connection here): a connection that carries anything else — another HTTP upgrade, Redis, MySQL,
// SMTP, HTTP/2 (gRPC), a database the run was not given — goes through unrecorded, and a replay
// blocks it. Every connection a run opens is
// watched until its first bytes, which tell what it carries (an HTTP request head, a Postgres
// startup, anything else), and each one no layer records is reported to the recorder, with the
// package that opened it: the recording names it (manifest `unrecorded`) and `record` warns.
// A socket costs one stack capture when it connects and one look at its first write; an HTTP/1
// connection's later requests (keep-alive) are not looked at.
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { targetOf } from '../../../sandbox/preload/shared-connect-args.mjs';
import { callSites } from '../../../sandbox/preload/shared-nondeterminism.mjs';
import { pgFirstMessage } from '../../../sandbox/preload/shared-pg-replies.mjs';

/**
 * @typedef {object} UnrecordedSocket
 * @property {'upgrade' | 'http2' | 'postgres' | 'tls' | 'tcp' | 'unix'} kind
 * @property {string} target host:port, a socket path, or for an upgrade the URL
 * @property {string} [protocol] an upgrade's protocol (websocket)
 * @property {string} [by] the package that opened it (node_modules/<name>), when not the agent's own code
 */

const HTTP_HEAD = /^[A-Z]+ (\S+) HTTP\/1\.[01]\r\n/;
const HEADER = (/** @type {string} */ name) => new RegExp(`\\r\\n${name}:[ \\t]*([^\\r\\n]*)`, 'i');
const UPGRADE = HEADER('upgrade');
const HOST = HEADER('host');
/** The package a stack frame's file is in. */
const PACKAGE = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/;
const kWatched = Symbol('tapedeck.watched');
/**
 * tapedeck's own code (the capture layers under a connect it passes through), by URL (Node's ESM
 * loader) and by path (a loader that runs it transformed, as vitest does).
 */
const ROOT = new URL('../../../', import.meta.url);
const OWN = ['src/', 'sandbox/', 'dist/'].flatMap((dir) => [
  new URL(dir, ROOT).href,
  fileURLToPath(new URL(dir, ROOT)),
]);

/**
 * What a connection carries, from its first write. undefined: an HTTP/1 request, which the HTTP
 * layers record.
 * @param {string} head the first bytes, as latin1
 * @param {boolean} encrypted the socket is TLS (the bytes are what goes inside it)
 * @param {string} target
 * @returns {Pick<UnrecordedSocket, 'kind' | 'target' | 'protocol'> | undefined}
 */
export function classifyFirstWrite(head, encrypted, target) {
  const request = HTTP_HEAD.exec(head);
  if (request) {
    const upgrade = UPGRADE.exec(head)?.[1]?.trim();
    if (upgrade === undefined || upgrade === '') return undefined;
    const protocol = upgrade.toLowerCase();
    const websocket = protocol === 'websocket';
    const scheme = websocket ? (encrypted ? 'wss' : 'ws') : encrypted ? 'https' : 'http';
    const host = HOST.exec(head)?.[1]?.trim() || target;
    const path = /** @type {string} */ (request[1]);
    return { kind: 'upgrade', protocol, target: path.startsWith('/') ? `${scheme}://${host}${path}` : path };
  }
  if (head.startsWith('PRI * HTTP/2.0')) return { kind: 'http2', target };
  // A Postgres client's first message: a startup, an SSL or GSS request, a cancel.
  if (pgFirstMessage(Buffer.from(head.slice(0, 8), 'latin1')) !== undefined) return { kind: 'postgres', target };
  return { kind: encrypted ? 'tls' : 'tcp', target };
}

/** The first bytes of a write, as latin1 (enough for a request head). */
function headOf(chunk) {
  if (typeof chunk === 'string') return chunk.slice(0, 4096);
  if (chunk instanceof Uint8Array)
    return Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.byteLength, 4096)).toString('latin1');
  return '';
}

/**
 * Watches the connections of runs. ctx: current() names the run a connection belongs to (taken
 * when it connects; undefined: not watched), suppressed() is true during the capture layers' own
 * work, ignore(target) leaves tapedeck's own sockets alone, report(run, socket) hears of each
 * connection no layer records; http2: node:http2's connections are recorded (not reported); websocket(socket, run, url, head, encoding), when given, follows a
 * WebSocket from its upgrade request (record-websocket.mjs) and returns the chunk to write in the
 * head's place. Returns undo().
 * @template R
 * @param {{ current: () => R | undefined, suppressed: () => boolean, ignore: (target: string) => boolean, report: (run: R, socket: UnrecordedSocket) => void, http2?: boolean, websocket?: (socket: any, run: R, url: string, head: any, encoding: BufferEncoding | undefined) => any }} ctx
 */
export function watchSockets(ctx) {
  // Patched in place: connect() takes many argument forms, so it is typed loosely here.
  const proto = /** @type {any} */ (net.Socket.prototype);
  const realConnect = proto.connect;
  const watched = function connect(...args) {
    if (this[kWatched] || ctx.suppressed()) return realConnect.apply(this, args);
    const run = ctx.current();
    if (run === undefined) return realConnect.apply(this, args);
    const where = targetOf(args);
    const unix = where.path !== undefined;
    const target = unix ? String(where.path) : `${where.host ?? 'localhost'}:${where.port}`;
    if (ctx.ignore(target)) return realConnect.apply(this, args);
    const sites = callSites(24, watched);
    const socket = realConnect.apply(this, args);
    // After Node's connect(), which sets the socket's own write back to the prototype's.
    watch(this, run, target, unix, sites);
    return socket;
  };
  proto.connect = watched;

  /** @param {any} socket @param {R} run @param {string} target @param {boolean} unix @param {any[]} sites */
  const watch = (socket, run, target, unix, sites) => {
    socket[kWatched] = true;
    // Who opened it: the nearest caller past Node's code, tapedeck's and its interceptors' — a
    // package, or (undefined) the agent's own code.
    let by;
    let opener = true;
    let http2 = false;
    for (const site of sites) {
      const file = String(site.getFileName?.() ?? '');
      if (file.startsWith('node:internal/http2/')) http2 = true;
      if (!opener || file === '' || file.startsWith('node:') || OWN.some((own) => file.startsWith(own))) continue;
      const name = PACKAGE.exec(file)?.[1]?.replace(/\\/g, '/');
      if (name === '@mswjs/interceptors') continue;
      by = name;
      opener = false;
    }
    const report = (/** @type {Pick<UnrecordedSocket, 'kind' | 'target' | 'protocol'>} */ found) =>
      ctx.report(run, { ...found, ...(by === undefined ? {} : { by }) });
    // node:http2 writes through its native handle: the first write is never seen. Its sessions
    // are recorded (record-http2.mjs) where the recorder says so.
    if (http2) {
      if (ctx.http2 !== true) report({ kind: 'http2', target });
      return;
    }
    const { write, end } = socket;
    let looked = false;
    /** The chunk to write: a WebSocket's upgrade is followed from here (record-websocket.mjs), which may edit it. */
    const look = (chunk, encoding) => {
      if (looked || chunk === undefined || chunk === null || typeof chunk === 'function') return chunk;
      looked = true;
      if (socket.write === ownWrite) delete socket.write;
      if (socket.end === ownEnd) delete socket.end;
      const found = classifyFirstWrite(headOf(chunk), socket.encrypted === true, target);
      if (found?.kind === 'upgrade' && found.protocol === 'websocket' && ctx.websocket !== undefined)
        return ctx.websocket(
          socket,
          run,
          found.target,
          chunk,
          typeof encoding === 'string' && Buffer.isEncoding(encoding) ? encoding : undefined,
        );
      if (found !== undefined) report(unix && found.kind === 'tcp' ? { ...found, kind: 'unix' } : found);
      return chunk;
    };
    const ownWrite = function (chunk, encoding, callback) {
      return write.call(this, look(chunk, encoding), encoding, callback);
    };
    const ownEnd = function (chunk, encoding, callback) {
      return end.call(this, look(chunk, encoding), encoding, callback);
    };
    socket.write = ownWrite;
    socket.end = ownEnd;
  };

  return function undo() {
    if (proto.connect === watched) proto.connect = realConnect;
  };
}
