// @ts-check
// What the recorder's capture layers and the replay preload share about the wire: a body encoded
// for the wire (utf8 text, else base64), headers as the recording keeps them (repeats joined,
// Set-Cookie kept apart), a failure's code and message, streamed content types, the message clock.
import zlib from 'node:zlib';

export { monotonicNow, nowMs } from './shared-clock.mjs';

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** Headers of the wire, not of the message: a replayed answer's body is the decoded one. */
export const HOP_HEADERS = new Set([
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
]);
/** Content types recorded as a stream, chunk by chunk with each chunk's offset (src/providers/framing.ts TEXT_STREAM_TYPES says the same). */
export const STREAM_TYPES = /text\/event-stream|application\/x-ndjson|application\/jsonl/i;

/**
 * Encodes a captured body (bytes or a string) for the wire: utf8 text when valid, else base64; cut at maxBody.
 * @param {Uint8Array | string | undefined} bytes
 * @param {number} maxBody
 * @returns {import('../protocol.js').WireBody | undefined}
 */
export function encodeBody(bytes, maxBody) {
  if (typeof bytes === 'string') {
    const size = Buffer.byteLength(bytes);
    if (size === 0) return undefined;
    if (maxBody < 0 || size <= maxBody) return { size, text: bytes };
    bytes = Buffer.from(bytes, 'utf8');
  }
  if (!bytes || bytes.byteLength === 0) return undefined;
  let view = bytes;
  let truncated = false;
  if (maxBody >= 0 && view.byteLength > maxBody) {
    view = view.subarray(0, maxBody);
    truncated = true;
  }
  /** @type {import('../protocol.js').WireBody} */
  const body = { size: bytes.byteLength };
  try {
    body.text = utf8.decode(view);
  } catch {
    body.b64 = Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString('base64');
  }
  if (truncated) body.truncated = true;
  return body;
}

export function concat(chunks, size) {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/**
 * The bytes of a recorded stream chunk: text, or base64 for a binary stream's (never sent as its base64 text).
 * @param {{ data: string, encoding?: 'base64' }} chunk
 * @returns {Buffer}
 */
export function chunkBytesOf(chunk) {
  return Buffer.from(chunk.data, chunk.encoding === 'base64' ? 'base64' : 'utf8');
}

export function toBytes(chunk, encoding) {
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return undefined;
  if (typeof chunk === 'string')
    return Buffer.from(chunk, /** @type {BufferEncoding} */ (typeof encoding === 'string' ? encoding : 'utf8'));
  if (chunk instanceof Uint8Array) return chunk;
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return undefined;
}

export function headerObject(headers) {
  /** @type {Record<string, string>} */
  const out = {};
  if (!headers) return out;
  if (typeof headers.forEach === 'function' && !Array.isArray(headers)) {
    // fetch's Headers hands each Set-Cookie on its own.
    headers.forEach((value, name) => {
      addHeader(out, name, value);
    });
    return out;
  }
  if (Array.isArray(headers)) {
    for (const [name, value] of headers) addHeader(out, String(name).toLowerCase(), String(value));
    return out;
  }
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) addHeader(out, name.toLowerCase(), String(v));
  }
  return out;
}

/** Request headers as undici's dispatch options carry them: an object, pairs, or a flat [name, value, …] list. */
export function dispatchHeaders(headers) {
  if (!Array.isArray(headers) || headers.length === 0 || Array.isArray(headers[0])) return headerObject(headers);
  /** @type {Record<string, string>} */
  const out = {};
  for (let i = 0; i + 1 < headers.length; i += 2)
    addHeader(out, String(headers[i]).toLowerCase(), String(headers[i + 1]));
  return out;
}

/**
 * Response headers as undici hands them to a handler: [name, value, …] as Buffers (HTTP/1.1), or an
 * object. `encoding`: how the agent's side reads the bytes (fetch: latin1; the undici package: utf8).
 * @param {any} raw
 * @param {BufferEncoding} [encoding]
 */
export function rawHeaderObject(raw, encoding = 'latin1') {
  if (!Array.isArray(raw)) return headerObject(raw);
  /** @type {Record<string, string>} */
  const out = {};
  for (let i = 0; i + 1 < raw.length; i += 2)
    addHeader(out, raw[i].toString(encoding).toLowerCase(), raw[i + 1].toString(encoding));
  return out;
}

/** A failure as the recording keeps it: a string code (a system error's, else the error's name) and the message. */
export function failureOf(error) {
  const code = [error?.cause?.code, error?.code, error?.name].find((c) => typeof c === 'string' && c !== '');
  return { code: code ?? 'Error', message: String(error?.message ?? error) };
}

/** The content-type of undici's raw response headers, without building them all. */
export function contentTypeOf(raw) {
  if (!Array.isArray(raw)) return String(headerObject(raw)['content-type'] ?? '');
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 12 && name.toString('latin1').toLowerCase() === 'content-type')
      return raw[i + 1].toString('latin1');
  }
  return '';
}

/** { status, statusText, raw } as the recording keeps it: headers as an object. */
export function responseHead({ status, statusText, raw }) {
  return { status, statusText, headers: rawHeaderObject(raw) };
}

/**
 * Repeated headers are joined as HTTP joins them (", "), except Set-Cookie, whose values may hold
 * commas (Expires=…): they are kept apart with a newline (no header value can hold one), and a
 * replay hands them out as separate headers again.
 */
export function addHeader(out, name, value) {
  if (out[name] === undefined) out[name] = value;
  else out[name] = `${out[name]}${name === 'set-cookie' ? '\n' : ', '}${value}`;
}

/** A streaming decoder for a content coding fetch undoes itself, or undefined. */
export function decompressor(coding) {
  const sync = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  if (coding === 'gzip' || coding === 'x-gzip') return zlib.createGunzip(sync);
  if (coding === 'br') return zlib.createBrotliDecompress();
  if (coding === 'deflate') return zlib.createInflate(sync);
  return undefined;
}

/** Whether a request's path is in absolute form (`http://host/x`), as a client sends it to a forward proxy. */
export function isAbsoluteForm(path) {
  return typeof path === 'string' && /^https?:\/\//i.test(path);
}

/**
 * A node:http(s) request call in absolute form — options whose `path` is the URL asked for, what a
 * client configured with HTTP_PROXY sends its proxy (axios does) — as the same request in the plain
 * form: that URL, the options without the proxy's host, port, protocol, agent and proxy headers.
 * Undefined for any other call. Capture layers that read a request's URL from its host and path
 * (the interceptor) take it this way.
 * @param {unknown[]} args
 * @returns {{ url: URL, args: unknown[] } | undefined}
 */
export function plainFromAbsoluteForm(args) {
  const options = args[0];
  if (options === null || typeof options !== 'object' || options instanceof URL) return undefined;
  const o = /** @type {Record<string, unknown>} */ (options);
  if (!isAbsoluteForm(o.path)) return undefined;
  let url;
  try {
    url = new URL(/** @type {string} */ (o.path));
  } catch {
    return undefined;
  }
  const { agent: _a, host: _h, hostname: _n, port: _p, path: _x, protocol: _o, defaultPort: _d, ...rest } = o;
  if (rest.headers !== null && typeof rest.headers === 'object' && !Array.isArray(rest.headers)) {
    rest.headers = Object.fromEntries(
      Object.entries(rest.headers).filter(([name]) => !/^proxy-(authorization|connection)$/i.test(name)),
    );
  }
  return { url, args: [url, rest, ...args.slice(1)] };
}
