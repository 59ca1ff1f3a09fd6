// Anthropic Messages codec, streamed (SSE) and not.
//
// Usage buckets: input_tokens is already the uncached input; cache_read_input_tokens = cacheRead;
// cache_creation_input_tokens = cacheWrite; output_tokens = output (Anthropic does not report
// thinking tokens separately, so reasoning = 0). In a stream, message_start carries the input
// buckets and message_delta the final (cumulative) output_tokens; later values win.
import type { ToolCall, Usage } from '../../recording/types.js';
import { eventJson, parseSse } from './sse.js';
import {
  asArray,
  contentText,
  type DecodedModelCall,
  isObject,
  type Json,
  type LlmCodec,
  type LlmRequest,
  type LlmResponse,
  num,
  str,
} from './types.js';

export function anthropicUsage(usage: unknown, base?: Usage): Usage | undefined {
  if (!isObject(usage)) return base;
  const pick = (key: string, fallback: number) => (typeof usage[key] === 'number' ? num(usage[key]) : fallback);
  return {
    inputUncached: pick('input_tokens', base?.inputUncached ?? 0),
    cacheRead: pick('cache_read_input_tokens', base?.cacheRead ?? 0),
    cacheWrite: pick('cache_creation_input_tokens', base?.cacheWrite ?? 0),
    output: pick('output_tokens', base?.output ?? 0),
    reasoning: 0,
  };
}

interface Block {
  type: string;
  text: string;
  id: string;
  name: string;
  json: string;
}

function outputOf(blocks: Block[]): { text?: string; toolCalls: ToolCall[] } {
  const texts = blocks.filter((b) => b.type === 'text').map((b) => b.text);
  const toolCalls = blocks
    .filter((b) => b.type === 'tool_use' || b.type === 'server_tool_use')
    .map((b) => ({ id: b.id, name: b.name, arguments: b.json }));
  return { ...(texts.length > 0 ? { text: texts.join('') } : {}), toolCalls };
}

function decodeMessages(request: Json, response: LlmResponse): DecodedModelCall {
  let model = str(request.model) ?? '';
  let usage: Usage | undefined;
  let stopReason: string | undefined;
  let firstTokenOffsetMs: number | undefined;
  const blocks: Block[] = [];
  if (response.chunks !== undefined) {
    const byIndex = new Map<number, Block>();
    for (const event of parseSse(response.chunks)) {
      const data = eventJson(event);
      if (data === undefined) continue;
      switch (data.type) {
        case 'message_start':
          if (isObject(data.message)) {
            if (typeof data.message.model === 'string') model = data.message.model;
            usage = anthropicUsage(data.message.usage, usage);
          }
          break;
        case 'content_block_start': {
          const block = isObject(data.content_block) ? data.content_block : {};
          const entry: Block = {
            type: str(block.type) ?? 'text',
            text: str(block.text) ?? '',
            id: str(block.id) ?? '',
            name: str(block.name) ?? '',
            json: '',
          };
          byIndex.set(num(data.index), entry);
          break;
        }
        case 'content_block_delta': {
          const entry = byIndex.get(num(data.index));
          const delta = isObject(data.delta) ? data.delta : {};
          if (entry === undefined) break;
          if (delta.type === 'text_delta' && typeof delta.text === 'string') {
            entry.text += delta.text;
            firstTokenOffsetMs ??= event.offsetMs;
          } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
            entry.json += delta.partial_json;
            firstTokenOffsetMs ??= event.offsetMs;
          }
          break;
        }
        case 'message_delta':
          if (isObject(data.delta) && typeof data.delta.stop_reason === 'string') stopReason = data.delta.stop_reason;
          usage = anthropicUsage(data.usage, usage);
          break;
      }
    }
    blocks.push(...[...byIndex.entries()].sort((a, b) => a[0] - b[0]).map(([, block]) => block));
  } else if (isObject(response.json)) {
    const body = response.json;
    if (typeof body.model === 'string') model = body.model;
    usage = anthropicUsage(body.usage);
    stopReason = str(body.stop_reason);
    for (const block of asArray(body.content)) {
      if (!isObject(block)) continue;
      blocks.push({
        type: str(block.type) ?? '',
        text: str(block.text) ?? '',
        id: str(block.id) ?? '',
        name: str(block.name) ?? '',
        json: block.input === undefined ? '' : JSON.stringify(block.input),
      });
    }
  }
  for (const block of blocks) if (block.type.endsWith('tool_use') && block.json === '') block.json = '{}';
  const system = request.system === undefined ? undefined : contentText(request.system);
  return {
    provider: 'anthropic',
    api: 'messages',
    model,
    streamed: response.chunks !== undefined,
    ...(system === undefined || system === '' ? {} : { system }),
    messages: asArray(request.messages),
    ...(Array.isArray(request.tools) ? { tools: request.tools } : {}),
    output: outputOf(blocks),
    ...(stopReason === undefined ? {} : { stopReason }),
    ...(usage === undefined ? {} : { usage }),
    ...(firstTokenOffsetMs === undefined ? {} : { firstTokenOffsetMs }),
  };
}

export const anthropicCodec: LlmCodec = {
  provider: 'anthropic',
  detect(request: LlmRequest) {
    if (request.method !== 'POST' || !isObject(request.json)) return undefined;
    const path = request.url.pathname.replace(/\/+$/, '');
    if (!path.endsWith('/messages') || !Array.isArray(request.json.messages)) return undefined;
    const looksAnthropic =
      'max_tokens' in request.json || 'anthropic-version' in request.headers || 'x-api-key' in request.headers;
    return looksAnthropic ? 'messages' : undefined;
  },
  decode(_api, request, response) {
    return decodeMessages(isObject(request.json) ? request.json : {}, response);
  },
};
