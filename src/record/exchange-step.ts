// An HTTP exchange the capture layer reported, made into a step's payloads (src/record/session.ts):
// its bodies decoded (gzip, br, deflate) and stored, the http.exchange payload, and what the call
// was: a model call its provider decodes, or a tool call the rules classify (an MCP answer read out
// of its stream, a large result stored as a body).
import { isUtf8 } from 'node:buffer';
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { decodeModelCall, eventJson, modelStepType, type Provider, parseSse } from '../providers/index.js';
import type {
  Body,
  DrawnAtHead,
  HttpExchangePayload,
  ModelCalledPayload,
  NondeterminismPayload,
  StateType,
  StepEvent,
  StreamChunk,
  ToolCalledPayload,
} from '../recording/index.js';
import { isBinaryType, parseJson } from '../recording/index.js';
import { classifyHttp, type ToolRule } from './classify.js';
import { type MessageOf, type WireBody, wireBytes } from './protocol.js';

/** An exchange the session has seen the request of, and what came with it until it completes. */
export interface OpenExchange {
  req: MessageOf<'req'>;
  res?: MessageOf<'res'>;
  chunks: StreamChunk[];
  parentThink: number | undefined;
  nd: NondeterminismPayload[];
  /** The values its process had drawn when the response head reached it (an `xchg`'s or the `res`'s). */
  drawn?: DrawnAtHead | undefined;
  /** Trailing headers after the body (HTTP/2). */
  trailers?: Record<string, string> | undefined;
  /** A stream's size so far, and whether its chunks were cut at the cap (RecordSession's streamCap). */
  streamed?: { kept: number; total: number; cut: boolean };
}

/** Stores a body's text or bytes in the recording (RecordingWriter.body). */
export type StoreBody = (data: Uint8Array | string, contentType?: string) => Body;

export const iso = (ms: number) => new Date(ms).toISOString();

function decodeContent(bytes: Buffer, headers: Record<string, string>): Buffer {
  const encoding = (headers['content-encoding'] ?? '').toLowerCase().trim();
  if (bytes.length === 0 || encoding === '' || encoding === 'identity') return bytes;
  try {
    if (encoding.includes('gzip')) return bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes;
    if (encoding.includes('br')) return brotliDecompressSync(bytes);
    if (encoding.includes('deflate')) {
      try {
        return inflateSync(bytes);
      } catch {
        return inflateRawSync(bytes);
      }
    }
  } catch {
    // Already decoded by the client (fetch decodes before the capture layer sees the body).
  }
  return bytes;
}

/** A body as the session uses it: utf8 text when it is text, else bytes (decoded from gzip/br/deflate). */
interface Content {
  text: string | undefined;
  bytes: Buffer;
  size: number;
}

function contentOf(wire: WireBody | undefined, headers: Record<string, string>): Content {
  const encoding = headers['content-encoding'];
  if (wire?.text !== undefined && (encoding === undefined || encoding === 'identity')) {
    const text = wire.text;
    return {
      text,
      get bytes() {
        return Buffer.from(text, 'utf8');
      },
      size: wire.truncated ? Buffer.byteLength(text) : wire.size,
    };
  }
  const bytes = decodeContent(wireBytes(wire), headers);
  const text = isUtf8(bytes) ? bytes.toString('utf8') : undefined;
  return { text, bytes, size: bytes.length };
}

/** The JSON object or array a body holds, else undefined. */
function jsonBody(text: string | undefined): unknown {
  const parsed = parseJson(text);
  return parsed.ok ? parsed.value : undefined;
}

function storedBody(
  store: StoreBody,
  wire: WireBody | undefined,
  content: Content,
  contentType: string | undefined,
): Body | undefined {
  if (wire === undefined && content.size === 0) return undefined;
  // Bytes of a binary type stay bytes even when they are UTF-8: redacted in place, at their length.
  const body = store(isBinaryType(contentType) ? content.bytes : (content.text ?? content.bytes), contentType);
  return wire?.truncated ? { ...body, truncated: true } : body;
}

/** A completed exchange read: its payload, the call as a provider sees it, and its outcome. */
export interface ExchangeRead {
  open: OpenExchange;
  end: number;
  exchange: HttpExchangePayload;
  call: { method: string; url: URL; headers: Record<string, string>; json: unknown };
  resHeaders: Record<string, string>;
  streamed: boolean;
  resContent: Content;
  resText: string | undefined;
  resJson: unknown;
  latencyMs: number;
  ttfbMs: number | undefined;
  failed: boolean;
  errorType: string | undefined;
  /** The values drawn while it was in flight, as its step's events. */
  nd: StepEvent[];
}

/** Reads a completed exchange: decodes and stores its bodies and builds its http.exchange payload. */
export function readExchange(
  open: OpenExchange,
  end: number,
  error: { code: string; message: string } | undefined,
  store: StoreBody,
): ExchangeRead {
  const { req, res } = open;
  const reqContent = contentOf(req.body, {});
  const reqJson = jsonBody(reqContent.text);
  const url = new URL(req.url);
  const resHeaders = res?.headers ?? {};
  const streamed = res?.stream === true;
  const resContent = streamed ? contentOf(undefined, {}) : contentOf(res?.body, resHeaders);
  const resText = resContent.text;
  const resJson = jsonBody(resText);
  const latencyMs = Math.max(0, end - req.ts);
  const ttfbMs = res === undefined ? undefined : Math.max(0, res.ts - req.ts);

  const exchange: HttpExchangePayload = {
    exchangeId: req.id,
    request: {
      method: req.method,
      url: req.url,
      headers: req.headers,
      ...optional('body', storedBody(store, req.body, reqContent, req.headers['content-type'])),
    },
    ...(res === undefined
      ? {}
      : {
          response: {
            status: res.status,
            ...optional('statusText', res.statusText || undefined),
            headers: resHeaders,
            ...(streamed
              ? {
                  chunks: open.chunks,
                  ...(open.streamed?.cut ? { truncated: true, streamedBytes: open.streamed.total } : {}),
                }
              : optional('body', storedBody(store, res.body, resContent, resHeaders['content-type']))),
            ...optional('trailers', open.trailers),
          },
        }),
    ...optional('error', error),
    startedAt: iso(req.ts),
    durationMs: latencyMs,
    ...optional('ttfbMs', ttfbMs),
    ...optional('protocol', req.protocol),
    ...optional('reusedSocket', req.reusedSocket),
    ...optional('drawn', open.drawn ?? res?.drawn),
  };
  const failed = error !== undefined || res === undefined || res.status >= 400;
  const errorType = error?.code ?? (res !== undefined && res.status >= 400 ? `HTTP_${res.status}` : undefined);
  const nd = open.nd.map((payload): StepEvent => ({ type: 'nondeterminism', payload }));

  const call = { method: req.method, url, headers: req.headers, json: reqJson };
  return {
    open,
    end,
    exchange,
    call,
    resHeaders,
    streamed,
    resContent,
    resText,
    resJson,
    latencyMs,
    ttfbMs,
    failed,
    errorType,
    nd,
  };
}

/** The model.called payload of an exchange its provider speaks, and its step's state type. */
export function modelCallOf(
  provider: Provider,
  read: ExchangeRead,
): { model: ModelCalledPayload; stateType: StateType } {
  const { open, call, resHeaders, streamed, resContent, resJson, latencyMs, ttfbMs, failed } = read;
  const { req, res } = open;
  const decoded = decodeModelCall(provider, call, {
    status: res?.status ?? 0,
    headers: resHeaders,
    ...(streamed
      ? { chunks: open.chunks }
      : resJson === undefined && resContent.size > 0
        ? { bytes: resContent.bytes }
        : { json: resJson }),
  });
  const { firstTokenOffsetMs, ...rest } = decoded;
  const model: ModelCalledPayload = {
    exchangeId: req.id,
    ...rest,
    latencyMs,
    ...optional(
      'ttftMs',
      firstTokenOffsetMs === undefined || ttfbMs === undefined ? undefined : ttfbMs + firstTokenOffsetMs,
    ),
  };
  return { model, stateType: modelStepType(model, failed) };
}

/** The tool.called payload of an exchange no provider speaks: classified by the rules. */
export function toolCallOf(
  read: ExchangeRead,
  error: { code: string; message: string } | undefined,
  rules: readonly ToolRule[] | undefined,
  maxInline: number,
  store: StoreBody,
): ToolCalledPayload {
  const { open, call, resHeaders, streamed, resContent, resText, resJson, latencyMs, failed, errorType } = read;
  const { req, res } = open;
  const tool = classifyHttp({ method: req.method, url: call.url, json: call.json, headers: req.headers }, rules);
  let result: unknown = resJson;
  if (streamed) {
    // A binary stream's chunks (gRPC) are in the exchange, redacted there as bytes.
    result = open.chunks.some((c) => c.encoding === 'base64')
      ? `(${open.chunks.reduce((n, c) => n + Buffer.byteLength(c.data, 'base64'), 0)} bytes of binary data)`
      : open.chunks.map((c) => c.data).join('');
  } else if (resJson === undefined && resText !== '') {
    result = resText ?? `(${resContent.size} bytes of binary data)`;
  }
  if (tool.kind === 'mcp') {
    // Streamable-HTTP MCP answers with SSE; the JSON-RPC response is one of its events.
    const messages = streamed ? parseSse(open.chunks).map(eventJson) : [resJson];
    const answer = messages.find((m) => m !== null && typeof m === 'object' && ('result' in m || 'error' in m)) as
      | { result?: unknown; error?: unknown }
      | undefined;
    if (answer !== undefined) result = answer.result ?? answer.error;
  }
  const resultSize = streamed ? open.chunks.reduce((n, c) => n + c.data.length, 0) : resContent.size;
  const big = resultSize > maxInline || res?.body?.truncated === true;
  return {
    exchangeId: req.id,
    ...tool,
    ...(big
      ? optional('resultBody', storedBody(store, res?.body, resContent, resHeaders['content-type']))
      : optional('result', result)),
    ...optional(
      'error',
      error ??
        (failed ? { code: errorType ?? 'NO_RESPONSE', message: res?.statusText || 'request failed' } : undefined),
    ),
    latencyMs,
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
