// The live model answerer: in counterfactual mode, a model call the recording cannot serve goes
// to the model endpoint (the host it names, or --model-endpoint). Only model calls, and never in
// the prefix (exact mode, or before fork-at K). A streamed response is read event by event so
// the replay records its chunks with their timing, as the recorder does.
import type { StreamChunk } from '../recording/index.js';
import type { Answerer, HttpAnswer } from './answer.js';
import { isSafeMethod } from './match.js';

const HOP_HEADERS = new Set(['host', 'content-length', 'connection', 'accept-encoding', 'transfer-encoding']);

/** The URL a live model call goes to: the endpoint's origin and path prefix, the request's API path. */
export function retarget(url: string, endpoint: string): string {
  const from = new URL(url);
  const to = new URL(endpoint);
  const prefix = to.pathname.replace(/\/$/, '');
  let rest = from.pathname;
  // http://host/v1 + /v1/chat/completions -> http://host/v1/chat/completions, not /v1/v1/…
  const segments = prefix.split('/').filter(Boolean);
  for (let i = segments.length; i > 0; i--) {
    const tail = `/${segments.slice(segments.length - i).join('/')}`;
    if (rest === tail || rest.startsWith(`${tail}/`)) {
      rest = rest.slice(tail.length);
      break;
    }
  }
  return `${to.origin}${prefix}${rest}${from.search}`;
}

export function liveModelAnswerer(modelEndpoint: string | undefined): Answerer {
  return {
    name: 'live model endpoint',
    servedFrom: 'live',
    accepts: (ask, { mode, prefix }) => mode === 'counterfactual' && !prefix && ask.kind === 'http' && ask.isModel,
    async answer(ask): Promise<HttpAnswer> {
      const { request, bytes } = ask;
      const url = modelEndpoint ? retarget(request.url, modelEndpoint) : request.url;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(request.headers)) if (!HOP_HEADERS.has(k.toLowerCase())) headers[k] = v;
      const started = Date.now();
      let response: Response;
      try {
        response = await fetch(url, {
          method: request.method,
          headers,
          ...(bytes && !isSafeMethod(request.method) ? { body: new Uint8Array(bytes) } : {}),
        });
      } catch (error) {
        return {
          url,
          started,
          durationMs: Date.now() - started,
          error: { code: 'LIVE_FAILED', message: `live model call to ${url} failed: ${(error as Error).message}` },
        };
      }
      const responseHeaders: Record<string, string> = {};
      response.headers.forEach((v, k) => {
        responseHeaders[k] = v;
      });
      let chunks: StreamChunk[] | undefined;
      let body: Buffer;
      let ttfbMs: number | undefined;
      if (/text\/event-stream/i.test(response.headers.get('content-type') ?? '') && response.body) {
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
        body = Buffer.from(chunks.map((c) => c.data).join(''), 'utf8');
      } else {
        body = Buffer.from(await response.arrayBuffer());
      }
      return {
        url,
        started,
        durationMs: Date.now() - started,
        ...(ttfbMs !== undefined ? { ttfbMs } : {}),
        response: {
          status: response.status,
          statusText: response.statusText,
          headers: responseHeaders,
          bytes: body,
          ...(chunks ? { chunks } : {}),
        },
      };
    },
  };
}
