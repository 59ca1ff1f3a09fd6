// Sends a call to where an answerer serves it (the live model endpoint, a sandboxed service) and
// reads the response as the replay records one: bytes, or a text stream (SSE, NDJSON) chunk by
// chunk with its timing, as the recorder does.
import { TEXT_STREAM_TYPES } from '../providers/index.js';
import type { StreamChunk } from '../recording/index.js';
import type { HttpAnswer } from './answer.js';
import { isSafeMethod } from './match.js';
import type { LiveRequest } from './normalize.js';

const HOP_HEADERS = new Set(['host', 'content-length', 'connection', 'accept-encoding', 'transfer-encoding']);

/** Reads a fetch Response into an answer (a text stream chunk by chunk). */
export async function answerOf(response: Response, url: string, started: number): Promise<HttpAnswer> {
  const headers: Record<string, string> = {};
  response.headers.forEach((v, k) => {
    headers[k] = v;
  });
  let chunks: StreamChunk[] | undefined;
  let bytes: Buffer;
  let ttfbMs: number | undefined;
  if (TEXT_STREAM_TYPES.test(response.headers.get('content-type') ?? '') && response.body) {
    chunks = [];
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    const t0 = Date.now();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      ttfbMs ??= Date.now() - started;
      chunks.push({ offsetMs: Date.now() - t0, data: decoder.decode(value, { stream: true }) });
    }
    bytes = Buffer.from(chunks.map((c) => c.data).join(''), 'utf8');
  } else bytes = Buffer.from(await response.arrayBuffer());
  return {
    url,
    started,
    durationMs: Date.now() - started,
    ...(ttfbMs !== undefined ? { ttfbMs } : {}),
    response: {
      status: response.status,
      statusText: response.statusText,
      headers,
      bytes,
      ...(chunks ? { chunks } : {}),
    },
  };
}

/** Sends `request` (method, headers, body) to `url`; a network error is an answer with `error`. */
export async function sendRequest(
  url: string,
  request: LiveRequest,
  bytes: Buffer | undefined,
  options: {
    /** The error an unreachable `url` is reported as. */
    failure?: (url: string, reason: string) => { code: string; message: string };
    /** Pass redirects to the caller (a service's 302 is the agent's to follow) rather than follow them. */
    redirect?: 'follow' | 'manual';
  } = {},
): Promise<HttpAnswer> {
  const failure = options.failure ?? ((u, reason) => ({ code: 'FETCH_FAILED', message: `${u}: ${reason}` }));
  const headers: Record<string, string> = {};
  // An HTTP/2 request's pseudo-headers (:authority, :path…) are its request line, not headers.
  for (const [k, v] of Object.entries(request.headers))
    if (!HOP_HEADERS.has(k.toLowerCase()) && !k.startsWith(':')) headers[k] = v;
  const started = Date.now();
  let response: Response;
  try {
    response = await fetch(url, {
      method: request.method,
      headers,
      redirect: options.redirect ?? 'follow',
      ...(bytes && !isSafeMethod(request.method) ? { body: new Uint8Array(bytes) } : {}),
    });
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause;
    return {
      url,
      started,
      durationMs: Date.now() - started,
      error: failure(url, cause?.message ?? (error as Error).message),
    };
  }
  return answerOf(response, url, started);
}

/** `url`'s path and query on another origin. */
export function onOrigin(url: string, origin: string): string {
  const u = new URL(url);
  return `${origin.replace(/\/$/, '')}${u.pathname}${u.search}`;
}
