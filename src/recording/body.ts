// Resolving a Body (inline text, inline base64 or blob reference) to its bytes or text.
import type { Body, Recording } from './types.js';

const BINARY_TYPES =
  /^(image|audio|video|font)\/|^application\/(octet-stream|zip|gzip|pdf|x-protobuf|protobuf|grpc|wasm)/i;

/**
 * Whether bytes of this content type are kept as bytes (base64 or a blob) even when they are UTF-8,
 * and redacted in place, at their length (a protobuf's or a gRPC frame's length prefix stays true).
 */
export function isBinaryType(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType !== '' && BINARY_TYPES.test(contentType);
}

/**
 * Whether `text` has no lone surrogate: UTF-8 can carry it, so its bytes decode back to it (a body
 * or file recorded as text, a string Postgres accepts). ES2024's isWellFormed, in Node 20 (the
 * project's lib is older).
 */
export function isWellFormedText(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

/** The body's bytes, read from the blob store when it is a blob reference. */
export function bodyBytes(recording: Pick<Recording, 'readBlob'>, body: Body | undefined): Buffer {
  if (!body) return Buffer.alloc(0);
  if (body.text !== undefined) return Buffer.from(body.text, 'utf8');
  if (body.base64 !== undefined) return Buffer.from(body.base64, 'base64');
  if (body.blob !== undefined) return recording.readBlob(body.blob);
  return Buffer.alloc(0);
}

/** The body as utf8 text (empty for no body). */
export function bodyText(recording: Pick<Recording, 'readBlob'>, body: Body | undefined): string {
  if (body?.text !== undefined) return body.text;
  return bodyBytes(recording, body).toString('utf8');
}
