// @ts-check
// Postgres replies and the values an agent draws around them. Two tasks of one process that each
// wait for a database reply and then draw a value (a uuid for the row they insert) take their
// values in the order their replies come back; a replay's sandbox database (PGlite answers one
// connection at a time) can send those replies back in another order than the real server did,
// and the tasks would swap their recorded values. So the recorder notes, for each reply a
// process's Postgres connection gets (each ReadyForQuery: where pg and postgres.js settle a
// query), how many values the process had drawn when it came — a `dbReply` value, kept with the
// process's other values — and a replay holds that reply back until the process has drawn as
// many (replay-nondeterminism.mjs `hold`), as it holds a recorded HTTP answer.
// A connection is named by the process's thread, its target as the agent gave it and the count
// of connects to that target before it (`127.0.0.1:5432#0`), which an unchanged agent repeats.
import net from 'node:net';
import { isMainThread, threadId } from 'node:worker_threads';
import { targetOf } from './shared-connect-args.mjs';

/** SSLRequest and GSSENCRequest: the server answers with one byte before any message. */
const ENCRYPTION_REQUESTS = new Set([80877103, 80877104]);
const CANCEL_REQUEST = 80877102;
/** StartupMessage, protocol 3.0 (3.2 too: the major version is what counts). */
const STARTUP_MAJOR = 3;
/** A first message's length, which counts itself: its 8 bytes at least, a server's bound at most. */
const FIRST_MIN = 8;
const FIRST_MAX = 10_000;
const READY_FOR_QUERY = 0x5a; // 'Z'
const kWatched = Symbol('tapedeck.pgReplies');
/** The kinds of value a `dbReply` entry may count (those of NdBatch that are draws). */
const KINDS = new Set(['clock', 'random', 'uuid', 'randomBytes', 'hrtime']);
/** An entry: the connection, then each kind drawn with its count ("127.0.0.1:5432#0 clock=3 uuid=1"). */
const ENTRY = /^(\S{1,300})((?: [a-zA-Z]{1,20}=\d{1,15}){0,8})$/;

/** @param {any} chunk @returns {Buffer | undefined} */
function bytesOf(chunk) {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return undefined;
}

/**
 * What a connection's first write is, if Postgres: a client's first message has no type byte, only
 * its length and a code — a StartupMessage (`startup`, protocol 3.x), an SSLRequest or GSSENCRequest
 * (`encryption`: the server answers one byte before any message), a CancelRequest (`cancel`: no
 * reply follows). undefined: not a Postgres client (fewer than 8 bytes, another code, a length no
 * server takes). Only the first 8 bytes count. The one home of this rule: the recorder names a
 * connection by it (record-sockets.mjs), and the reply reader below follows a connection by it.
 * @param {Uint8Array} bytes
 * @returns {'startup' | 'encryption' | 'cancel' | undefined}
 */
export function pgFirstMessage(bytes) {
  if (bytes.length < 8) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, 8);
  const length = view.getUint32(0);
  const code = view.getUint32(4);
  if (length < FIRST_MIN || length >= FIRST_MAX) return undefined;
  if (ENCRYPTION_REQUESTS.has(code)) return 'encryption';
  if (code === CANCEL_REQUEST) return 'cancel';
  if (code >>> 16 === STARTUP_MAJOR) return 'startup';
  return undefined;
}

/**
 * Follows one connection's protocol: told the client's first write (`client`), it finds where
 * each ReadyForQuery message ends in the server's bytes (`server`: offsets just past each, in the
 * chunk). A connection that turns to TLS or GSS encryption, or whose first write is not a
 * Postgres startup, is not followed (`off`).
 */
export function pgReplyReader() {
  /** @type {'unknown' | 'encryption' | 'messages' | 'off'} */
  let state = 'unknown';
  const head = Buffer.alloc(5);
  let headLength = 0;
  let bodyLeft = 0;
  return {
    get off() {
      return state === 'off';
    },
    /** @param {any} chunk */
    client(chunk) {
      if (state !== 'unknown') return;
      const bytes = bytesOf(chunk);
      const first = bytes === undefined ? undefined : pgFirstMessage(bytes);
      state = first === 'encryption' ? 'encryption' : first === 'startup' ? 'messages' : 'off';
    },
    /** @param {any} chunk @returns {number[]} */
    server(chunk) {
      /** @type {number[]} */
      const ends = [];
      const bytes = state === 'off' || state === 'unknown' ? undefined : bytesOf(chunk);
      if (bytes === undefined) return ends;
      let at = 0;
      if (state === 'encryption') {
        // 'N': no encryption, messages follow; anything else ('S', 'G', an error): not ours to read.
        state = bytes[0] === 0x4e ? 'messages' : 'off';
        at = 1;
        if (state === 'off') return ends;
      }
      while (at < bytes.length) {
        if (bodyLeft > 0) {
          const take = Math.min(bodyLeft, bytes.length - at);
          bodyLeft -= take;
          at += take;
          if (bodyLeft === 0 && head[0] === READY_FOR_QUERY) ends.push(at);
          continue;
        }
        head[headLength++] = /** @type {number} */ (bytes[at++]);
        if (headLength < 5) continue;
        headLength = 0;
        const length = head.readUInt32BE(1);
        if (length < 4) {
          state = 'off';
          return ends;
        }
        bodyLeft = length - 4;
        if (bodyLeft === 0 && head[0] === READY_FOR_QUERY) ends.push(at);
      }
      return ends;
    },
  };
}

/** A `dbReply` value: the connection and what the process had drawn, by kind. */
export function dbReplyEntry(/** @type {string} */ connection, /** @type {Record<string, number>} */ counts) {
  let out = connection;
  for (const [kind, n] of Object.entries(counts)) if (KINDS.has(kind) && n > 0) out += ` ${kind}=${n}`;
  return out;
}

/**
 * The recorded `dbReply` values of a process, by connection, in order: each reply's place in the
 * process's order of replies (`index`) and the values drawn before it, by kind (`need`). A value
 * that is not one (a recording is data, never trusted) is left out.
 * @param {unknown} values
 * @returns {{ byConnection: Map<string, Array<{ index: number, need: Record<string, number> }>>, total: number }}
 */
export function dbRepliesByConnection(values) {
  /** @type {Map<string, Array<{ index: number, need: Record<string, number> }>>} */
  const byConnection = new Map();
  let total = 0;
  if (!Array.isArray(values)) return { byConnection, total };
  for (const value of values) {
    const match = typeof value === 'string' ? ENTRY.exec(value) : null;
    if (match === null) continue;
    /** @type {Record<string, number>} */
    const need = {};
    for (const part of /** @type {string} */ (match[2]).split(' ')) {
      if (part === '') continue;
      const [kind, n] = part.split('=');
      if (kind !== undefined && KINDS.has(kind)) need[kind] = Number(n);
    }
    const connection = /** @type {string} */ (match[1]);
    const list = byConnection.get(connection) ?? [];
    list.push({ index: total++, need });
    byConnection.set(connection, list);
  }
  return { byConnection, total };
}

/**
 * Watches the Postgres connections this thread opens: `connection(name, socket, reader)` is told
 * of each one once its first write shows a Postgres startup (the reader has seen it). `skip()`:
 * a connect of tapedeck's own, not counted; `targets`: an address to name as another (a replay's
 * sandbox database as the recorded one). Returns undo().
 * @param {{ skip: () => boolean, connection: (name: string, socket: net.Socket, reader: ReturnType<typeof pgReplyReader>) => void, targets?: Record<string, string> }} ctx
 */
export function watchPgConnections(ctx) {
  const thread = isMainThread ? '' : `w${threadId}/`;
  /** @type {Map<string, number>} */
  const connects = new Map();
  // Patched in place: connect() takes many argument forms, so it is typed loosely here.
  const proto = /** @type {any} */ (net.Socket.prototype);
  const realConnect = proto.connect;
  const watched = function connect(/** @type {any[]} */ ...args) {
    if (this[kWatched] || ctx.skip()) return realConnect.apply(this, args);
    this[kWatched] = true;
    const where = targetOf(args);
    const given = where.path !== undefined ? String(where.path) : `${where.host ?? 'localhost'}:${where.port}`;
    const target =
      (ctx.targets !== undefined && Object.hasOwn(ctx.targets, given) ? ctx.targets[given] : given) ?? given;
    const n = connects.get(target) ?? 0;
    connects.set(target, n + 1);
    const result = realConnect.apply(this, args);
    // After Node's connect(), which sets the socket's own write back to the prototype's.
    /** @type {any} */
    const socket = this;
    const own = Object.hasOwn(socket, 'write');
    const write = socket.write;
    const first = function (/** @type {any[]} */ ...writeArgs) {
      if (socket.write === first) {
        if (own) socket.write = write;
        else delete socket.write;
      }
      const reader = pgReplyReader();
      reader.client(writeArgs[0]);
      if (!reader.off) ctx.connection(`${thread}${target}#${n}`, socket, reader);
      return write.apply(this, writeArgs);
    };
    socket.write = first;
    return result;
  };
  proto.connect = watched;
  return function undo() {
    if (proto.connect === watched) proto.connect = realConnect;
  };
}
