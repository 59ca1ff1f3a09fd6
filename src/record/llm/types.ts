// What an LLM protocol codec sees (one recorded HTTP exchange, bodies parsed) and what it returns.
import type { ModelCalledPayload, StreamChunk } from '../../recording/types.js';

export interface LlmRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  /** The request body parsed as JSON (undefined when it is not JSON). */
  json: unknown;
}

export interface LlmResponse {
  status: number;
  headers: Record<string, string>;
  /** The response body parsed as JSON (non-streamed responses). */
  json?: unknown;
  /** The raw chunks of a streamed response. */
  chunks?: StreamChunk[];
}

/** model.called without the timing and exchange fields the session fills in. */
export type DecodedModelCall = Omit<ModelCalledPayload, 'exchangeId' | 'latencyMs' | 'ttftMs'> & {
  /** Offset (ms from the response start) of the first output token in a stream. */
  firstTokenOffsetMs?: number;
};

export interface LlmCodec {
  provider: string;
  /** The API name when this codec speaks the request's protocol (by path and body shape), else undefined. */
  detect(request: LlmRequest): string | undefined;
  decode(api: string, request: LlmRequest, response: LlmResponse): DecodedModelCall;
}

export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, Math.trunc(value)) : 0;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Joins the text of a content value: a string, or an array of parts with `text`. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text !== '')
    .join('\n');
}
