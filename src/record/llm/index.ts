// LLM protocol codecs, tried in order; detection is by path and body shape, never by host.
import { anthropicCodec } from './anthropic.js';
import { openaiCodec } from './openai.js';
import type { LlmCodec, LlmRequest } from './types.js';

export { anthropicCodec, anthropicUsage } from './anthropic.js';
export { openaiCodec, openaiUsage } from './openai.js';
export { eventJson, parseSse, type SseEvent } from './sse.js';
export type { DecodedModelCall, LlmCodec, LlmRequest, LlmResponse } from './types.js';

export const DEFAULT_CODECS: readonly LlmCodec[] = [openaiCodec, anthropicCodec];

/** The codec and API name for a request, or undefined for a non-LLM request. */
export function detectLlm(
  request: LlmRequest,
  codecs: readonly LlmCodec[] = DEFAULT_CODECS,
): { codec: LlmCodec; api: string } | undefined {
  for (const codec of codecs) {
    const api = codec.detect(request);
    if (api !== undefined) return { codec, api };
  }
  return undefined;
}
