// OpenAI protocol codec: Chat Completions and Responses, streamed (SSE) and not.
//
// Usage buckets (provider usage is the truth, never double counted):
//   inputUncached = prompt_tokens - cached_tokens      (Responses: input_tokens - cached_tokens)
//   cacheRead     = prompt_tokens_details.cached_tokens
//   cacheWrite    = 0 (OpenAI does not report cache writes)
//   output        = completion_tokens - reasoning_tokens (visible output only, as in the seed's
//                   output_tokens), reasoning = completion_tokens_details.reasoning_tokens
// so output + reasoning = completion_tokens and inputUncached + cacheRead = prompt_tokens.
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

export function openaiUsage(usage: unknown): Usage | undefined {
  if (!isObject(usage)) return undefined;
  const isResponses = 'input_tokens' in usage;
  const input = num(isResponses ? usage.input_tokens : usage.prompt_tokens);
  const completion = num(isResponses ? usage.output_tokens : usage.completion_tokens);
  const inDetails = usage[isResponses ? 'input_tokens_details' : 'prompt_tokens_details'];
  const outDetails = usage[isResponses ? 'output_tokens_details' : 'completion_tokens_details'];
  const cached = Math.min(input, isObject(inDetails) ? num(inDetails.cached_tokens) : 0);
  const reasoning = Math.min(completion, isObject(outDetails) ? num(outDetails.reasoning_tokens) : 0);
  return {
    inputUncached: input - cached,
    cacheRead: cached,
    cacheWrite: 0,
    output: completion - reasoning,
    reasoning,
  };
}

function systemOf(messages: unknown[], instructions?: unknown): string | undefined {
  const parts: string[] = [];
  if (typeof instructions === 'string' && instructions !== '') parts.push(instructions);
  for (const message of messages) {
    if (isObject(message) && (message.role === 'system' || message.role === 'developer')) {
      const text = contentText(message.content);
      if (text !== '') parts.push(text);
    }
  }
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

function decodeChat(request: Json, response: LlmResponse): DecodedModelCall {
  const messages = asArray(request.messages);
  let text = '';
  let hasText = false;
  const calls: ToolCall[] = [];
  let stopReason: string | undefined;
  let usage: Usage | undefined;
  let model = str(request.model) ?? '';
  let firstTokenOffsetMs: number | undefined;
  if (response.chunks !== undefined) {
    const byIndex = new Map<number, ToolCall>();
    for (const event of parseSse(response.chunks)) {
      const chunk = eventJson(event);
      if (chunk === undefined) continue;
      if (typeof chunk.model === 'string') model = chunk.model;
      if (chunk.usage !== undefined && chunk.usage !== null) usage = openaiUsage(chunk.usage);
      for (const choice of asArray(chunk.choices)) {
        if (!isObject(choice) || num(choice.index) !== 0) continue;
        const delta = isObject(choice.delta) ? choice.delta : {};
        if (typeof delta.content === 'string' && delta.content !== '') {
          text += delta.content;
          hasText = true;
          firstTokenOffsetMs ??= event.offsetMs;
        }
        for (const part of asArray(delta.tool_calls)) {
          if (!isObject(part)) continue;
          firstTokenOffsetMs ??= event.offsetMs;
          const index = num(part.index);
          const call = byIndex.get(index) ?? { id: '', name: '', arguments: '' };
          const fn = isObject(part.function) ? part.function : {};
          if (typeof part.id === 'string') call.id = part.id;
          if (typeof fn.name === 'string') call.name += fn.name;
          if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
          byIndex.set(index, call);
        }
        if (typeof choice.finish_reason === 'string') stopReason = choice.finish_reason;
      }
    }
    calls.push(...[...byIndex.entries()].sort((a, b) => a[0] - b[0]).map(([, call]) => call));
  } else if (isObject(response.json)) {
    const body = response.json;
    if (typeof body.model === 'string') model = body.model;
    usage = openaiUsage(body.usage);
    const choice = asArray(body.choices).find((c) => isObject(c) && num(c.index) === 0) ?? asArray(body.choices)[0];
    if (isObject(choice)) {
      const message = isObject(choice.message) ? choice.message : {};
      if (typeof message.content === 'string') {
        text = message.content;
        hasText = true;
      }
      for (const call of asArray(message.tool_calls)) {
        if (!isObject(call)) continue;
        const fn = isObject(call.function) ? call.function : {};
        calls.push({ id: str(call.id) ?? '', name: str(fn.name) ?? '', arguments: str(fn.arguments) ?? '' });
      }
      stopReason = str(choice.finish_reason);
    }
  }
  const system = systemOf(messages);
  return {
    provider: 'openai',
    api: 'chat.completions',
    model,
    streamed: response.chunks !== undefined,
    ...(system === undefined ? {} : { system }),
    messages,
    ...(Array.isArray(request.tools) ? { tools: request.tools } : {}),
    output: { ...(hasText ? { text } : {}), toolCalls: calls },
    ...(stopReason === undefined ? {} : { stopReason }),
    ...(usage === undefined ? {} : { usage }),
    ...(firstTokenOffsetMs === undefined ? {} : { firstTokenOffsetMs }),
  };
}

function responsesOutput(body: Json): { text?: string; toolCalls: ToolCall[] } {
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const item of asArray(body.output)) {
    if (!isObject(item)) continue;
    if (item.type === 'message') {
      for (const part of asArray(item.content)) {
        if (isObject(part) && part.type === 'output_text' && typeof part.text === 'string') texts.push(part.text);
      }
    } else if (item.type === 'function_call') {
      toolCalls.push({
        id: str(item.call_id) ?? str(item.id) ?? '',
        name: str(item.name) ?? '',
        arguments: str(item.arguments) ?? '',
      });
    }
  }
  return { ...(texts.length > 0 ? { text: texts.join('') } : {}), toolCalls };
}

function decodeResponses(request: Json, response: LlmResponse): DecodedModelCall {
  const input = typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : asArray(request.input);
  let final: Json | undefined;
  let firstTokenOffsetMs: number | undefined;
  let streamedText = '';
  if (response.chunks !== undefined) {
    for (const event of parseSse(response.chunks)) {
      const data = eventJson(event);
      if (data === undefined) continue;
      const type = str(data.type) ?? event.event;
      if (type === 'response.output_text.delta' || type === 'response.function_call_arguments.delta') {
        firstTokenOffsetMs ??= event.offsetMs;
        if (type === 'response.output_text.delta' && typeof data.delta === 'string') streamedText += data.delta;
      }
      if (
        (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') &&
        isObject(data.response)
      ) {
        final = data.response;
      }
    }
  } else if (isObject(response.json)) {
    final = response.json;
  }
  const output = final === undefined ? { toolCalls: [] } : responsesOutput(final);
  if (output.text === undefined && streamedText !== '') Object.assign(output, { text: streamedText });
  const incomplete =
    final !== undefined && isObject(final.incomplete_details) ? str(final.incomplete_details.reason) : undefined;
  const stopReason = incomplete ?? (output.toolCalls.length > 0 ? 'tool_calls' : str(final?.status));
  const usage = final === undefined ? undefined : openaiUsage(final.usage);
  const system = systemOf(input, request.instructions);
  return {
    provider: 'openai',
    api: 'responses',
    model: str(final?.model) ?? str(request.model) ?? '',
    streamed: response.chunks !== undefined,
    ...(system === undefined ? {} : { system }),
    messages: input,
    ...(Array.isArray(request.tools) ? { tools: request.tools } : {}),
    output,
    ...(stopReason === undefined ? {} : { stopReason }),
    ...(usage === undefined ? {} : { usage }),
    ...(firstTokenOffsetMs === undefined ? {} : { firstTokenOffsetMs }),
  };
}

export const openaiCodec: LlmCodec = {
  provider: 'openai',
  detect(request: LlmRequest) {
    if (request.method !== 'POST' || !isObject(request.json)) return undefined;
    const path = request.url.pathname.replace(/\/+$/, '');
    if (path.endsWith('/chat/completions') && Array.isArray(request.json.messages)) return 'chat.completions';
    if (path.endsWith('/responses') && 'input' in request.json) return 'responses';
    return undefined;
  },
  decode(api, request, response) {
    const body = isObject(request.json) ? request.json : {};
    return api === 'responses' ? decodeResponses(body, response) : decodeChat(body, response);
  },
};
