// The redaction of an exchange and a WebSocket turn (src/recording/redact.ts): URL, headers, bodies,
// an error's message, and a stream's chunks, each event redacted whole, over the redactor's parts.
import { isUtf8 } from 'node:buffer';
import { isBinaryType } from './body.js';
import type { Body, HttpExchangePayload, StreamChunk, WebSocketExchangePayload, WebSocketMessage } from './types.js';

/** The redactor's own passes an event's redaction is made of. */
export interface RedactorParts {
  text(text: string): string;
  bytes(bytes: Uint8Array): Buffer;
  headers(headers: Record<string, string>): Record<string, string>;
  url(url: string): string;
  body(body: Body): Body;
}

/**
 * Stream chunks one by one; but when a secret straddles a chunk boundary (the joined stream
 * redacts differently), each chunk's text is moved to the chunk that completes its SSE event
 * (blank line), so every event is redacted whole and the chunks still join to the body.
 */
function redactChunks(r: RedactorParts, input: StreamChunk[], contentType: string | undefined): StreamChunk[] {
  const binary = isBinaryType(contentType);
  if (binary || input.some((c) => c.encoding === 'base64')) return redactBinaryChunks(r, input, binary);
  const each = input.map((c) => ({ ...c, data: r.text(c.data) }));
  const joined = input.map((c) => c.data).join('');
  if (each.map((c) => c.data).join('') === r.text(joined)) return each;
  const out: StreamChunk[] = [];
  let carry = '';
  for (const chunk of input) {
    const pending = carry + chunk.data;
    const end = Math.max(pending.lastIndexOf('\n\n'), pending.lastIndexOf('\r\n\r\n'));
    if (end === -1) {
      carry = pending;
      out.push({ ...chunk, data: '' });
      continue;
    }
    const cut = pending.startsWith('\r\n\r\n', end) ? end + 4 : end + 2;
    out.push({ ...chunk, data: r.text(pending.slice(0, cut)) });
    carry = pending.slice(cut);
  }
  const last = out[out.length - 1];
  if (carry !== '' && last) last.data += r.text(carry);
  return out;
}

/**
 * A stream of bytes (gRPC, or any stream with a chunk that is not UTF-8): the chunks' bytes joined
 * go through the bytes pass (a secret across two chunks is found), and are cut back at the same
 * places, each chunk as many bytes as before (a gRPC frame's length stays true). A text stream's
 * text chunks then go through text() too.
 */
function redactBinaryChunks(r: RedactorParts, input: StreamChunk[], binary: boolean): StreamChunk[] {
  const pieces = input.map((c) => Buffer.from(c.data, c.encoding === 'base64' ? 'base64' : 'utf8'));
  const joined = Buffer.concat(pieces);
  const redacted = r.bytes(joined);
  let at = 0;
  return input.map((chunk, i) => {
    const length = (pieces[i] as Buffer).length;
    const piece = redacted === joined ? (pieces[i] as Buffer) : redacted.subarray(at, at + length);
    at += length;
    if (chunk.encoding !== 'base64' && isUtf8(piece)) {
      const data = piece.toString('utf8');
      return { ...chunk, data: binary ? data : r.text(data) };
    }
    const { encoding: _encoding, ...rest } = chunk;
    return { ...rest, data: piece.toString('base64'), encoding: 'base64' };
  });
}

export function redactExchange(r: RedactorParts, payload: HttpExchangePayload): HttpExchangePayload {
  const { request, response, error } = payload;
  // Headers first: a secret they name (Authorization) is then known in the URL and bodies too.
  const headers = r.headers(request.headers);
  const out: HttpExchangePayload = {
    ...payload,
    request: {
      ...request,
      url: r.url(request.url),
      headers,
      ...(request.body ? { body: r.body(request.body) } : {}),
    },
  };
  if (response) {
    out.response = {
      ...response,
      headers: r.headers(response.headers),
      ...(response.body ? { body: r.body(response.body) } : {}),
      ...(response.chunks ? { chunks: redactChunks(r, response.chunks, contentTypeOf(response.headers)) } : {}),
    };
  }
  if (error) out.error = { ...error, message: r.text(error.message) };
  return out;
}

/** A WebSocket turn: the upgrade's URL and headers as an exchange's, each message's text as a body's. */
export function redactWebSocketTurn(r: RedactorParts, payload: WebSocketExchangePayload): WebSocketExchangePayload {
  const message = (m: WebSocketMessage): WebSocketMessage => ({
    ...m,
    ...(m.body ? { body: r.body(m.body) } : {}),
    ...(m.reason ? { reason: r.text(m.reason) } : {}),
  });
  return {
    ...payload,
    url: r.url(payload.url),
    ...(payload.request
      ? {
          request: { ...payload.request, url: r.url(payload.request.url), headers: r.headers(payload.request.headers) },
        }
      : {}),
    ...(payload.response ? { response: { ...payload.response, headers: r.headers(payload.response.headers) } } : {}),
    ...(payload.sent ? { sent: message(payload.sent) } : {}),
    received: payload.received.map(message),
  };
}

function contentTypeOf(headers: Record<string, string>): string | undefined {
  for (const [name, value] of Object.entries(headers)) if (name.toLowerCase() === 'content-type') return value;
  return undefined;
}
