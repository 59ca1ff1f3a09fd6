// @ts-check
// The WebSocket wire (RFC 6455), both ends: reading frames as they pass (the recorder watches a
// client's connection after its upgrade, src/record/preload/record-websocket.mjs) and writing a
// server's frames (the replay answers a WebSocket from its recording, src/replay/websocket.ts).
// Frames are put back together into messages (fragments joined, control frames between them kept
// in their place); a client's frames are masked, a server's are not. No extension is ever in use:
// the recorder takes the compression offer out of the upgrade, the replay never makes one.
import { createHash } from 'node:crypto';

/** A message larger than this stops the reading (the connection is not followed further). */
export const MAX_MESSAGE = 64 * 1024 * 1024;

/** @typedef {'text' | 'binary' | 'close' | 'ping' | 'pong'} WsMessageType */
/**
 * One message as it went over the connection: its bytes (unmasked, fragments joined), and for a
 * close its code and reason.
 * @typedef {object} WsMessage
 * @property {WsMessageType} type
 * @property {Buffer} data
 * @property {number} [code]
 * @property {string} [reason]
 */

const TYPES = /** @type {Record<number, WsMessageType>} */ ({
  1: 'text',
  2: 'binary',
  8: 'close',
  9: 'ping',
  10: 'pong',
});
const OPCODES = { text: 1, binary: 2, close: 8, ping: 9, pong: 10 };

/**
 * A reader of one direction of a connection: feed() it bytes as they go, it calls onMessage for
 * each whole message, in order, and onError once (then reads nothing more) for bytes that are no
 * WebSocket frames or a message over MAX_MESSAGE.
 * @param {(message: WsMessage) => void} onMessage
 * @param {(reason: string) => void} [onError]
 */
export function frameReader(onMessage, onError = () => {}) {
  /** @type {Buffer[]} */
  let pending = [];
  let size = 0;
  /** The data message being put together from fragments. */
  /** @type {{ opcode: number, parts: Buffer[], size: number } | undefined} */
  let partial;
  let failed = false;
  /** How many bytes the frame at the front needs before it is looked at again (no copying per chunk). */
  let need = 2;
  const fail = (/** @type {string} */ reason) => {
    failed = true;
    pending = [];
    partial = undefined;
    onError(reason);
  };
  const take = () => {
    const all = pending.length === 1 ? /** @type {Buffer} */ (pending[0]) : Buffer.concat(pending);
    pending = [all];
    return all;
  };
  return {
    /** @param {Uint8Array} chunk */
    feed(chunk) {
      if (failed || chunk.byteLength === 0) return;
      pending.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      size += chunk.byteLength;
      if (size < need) return;
      while (!failed && size >= 2) {
        const buf = take();
        const b0 = /** @type {number} */ (buf[0]);
        const b1 = /** @type {number} */ (buf[1]);
        const fin = (b0 & 0x80) !== 0;
        const opcode = b0 & 0x0f;
        // Told by the first byte: no need to wait for a payload that will never be one.
        if ((b0 & 0x70) !== 0) return fail('a frame with an extension bit set');
        if (TYPES[opcode] === undefined && opcode !== 0) return fail(`an unknown opcode ${opcode}`);
        if (opcode >= 8 && (!fin || (b1 & 0x7f) > 125)) return fail('a fragmented or long control frame');
        const masked = (b1 & 0x80) !== 0;
        let length = b1 & 0x7f;
        let at = 2;
        if (length === 126) {
          if (size < 4) return void (need = 4);
          length = buf.readUInt16BE(2);
          at = 4;
        } else if (length === 127) {
          if (size < 10) return void (need = 10);
          const big = buf.readBigUInt64BE(2);
          if (big > BigInt(MAX_MESSAGE)) return fail('a frame over the size limit');
          length = Number(big);
          at = 10;
        }
        const maskAt = at;
        if (masked) at += 4;
        if (size < at + length) return void (need = at + length);
        need = 2;
        const payload = Buffer.from(buf.subarray(at, at + length));
        if (masked) {
          const mask = buf.subarray(maskAt, maskAt + 4);
          for (let i = 0; i < payload.length; i++)
            payload[i] = /** @type {number} */ (payload[i]) ^ /** @type {number} */ (mask[i & 3]);
        }
        const rest = buf.subarray(at + length);
        pending = rest.length === 0 ? [] : [rest];
        size = rest.length;
        if (opcode >= 8) {
          onMessage(controlMessage(opcode, payload));
          continue;
        }
        if (opcode !== 0) {
          if (partial !== undefined) return fail('a new message before the last one ended');
          partial = { opcode, parts: [], size: 0 };
        } else if (partial === undefined) return fail('a continuation with no message');
        partial.parts.push(payload);
        partial.size += payload.length;
        if (partial.size > MAX_MESSAGE) return fail('a message over the size limit');
        if (fin) {
          const whole = partial;
          partial = undefined;
          onMessage({ type: /** @type {WsMessageType} */ (TYPES[whole.opcode]), data: Buffer.concat(whole.parts) });
        }
      }
    },
  };
}

/** @param {number} opcode @param {Buffer} payload @returns {WsMessage} */
function controlMessage(opcode, payload) {
  const type = /** @type {WsMessageType} */ (TYPES[opcode]);
  if (type !== 'close' || payload.length < 2) return { type, data: payload };
  return { type, data: payload, code: payload.readUInt16BE(0), reason: payload.subarray(2).toString('utf8') };
}

/**
 * One unmasked frame (a server's) carrying a whole message.
 * @param {WsMessageType} type
 * @param {Uint8Array} data
 * @returns {Buffer}
 */
export function serverFrame(type, data) {
  const length = data.byteLength;
  const head = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const frame = Buffer.alloc(head + length);
  frame[0] = 0x80 | OPCODES[type];
  if (length < 126) frame[1] = length;
  else if (length < 65536) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  frame.set(data, head);
  return frame;
}

/** A close frame's payload: its code and reason (none without a code). @param {number | undefined} code @param {string} [reason] */
export function closePayload(code, reason = '') {
  if (code === undefined) return Buffer.alloc(0);
  const text = Buffer.from(reason, 'utf8').subarray(0, 123);
  const out = Buffer.alloc(2 + text.length);
  out.writeUInt16BE(code, 0);
  out.set(text, 2);
  return out;
}

/** The Sec-WebSocket-Accept answering a client's Sec-WebSocket-Key. @param {string} key */
export function acceptFor(key) {
  return createHash('sha1').update(`${key.trim()}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
}

/**
 * An HTTP/1 message head (request or response) split at its blank line: the start line, the
 * headers (names lowercased, repeated ones joined with ", "), and the bytes after it. undefined
 * while the head is not whole.
 * @param {Buffer} bytes
 * @returns {{ start: string, headers: Record<string, string>, rest: Buffer } | undefined}
 */
export function splitHead(bytes) {
  const end = bytes.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const lines = bytes.subarray(0, end).toString('latin1').split('\r\n');
  /** @type {Record<string, string>} */
  const headers = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return { start: lines[0] ?? '', headers, rest: bytes.subarray(end + 4) };
}
