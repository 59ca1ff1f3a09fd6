// OpenAI Chat Completions (POST …/chat/completions), streamed (SSE) and not. Also the shape
// OpenAI-compatible servers speak, so the registry reads an unknown provider's calls with it.
//
// Usage buckets (provider usage is the truth, never double counted):
//   inputUncached = prompt_tokens - prompt_tokens_details.cached_tokens
//   cacheRead     = prompt_tokens_details.cached_tokens (DeepSeek: prompt_cache_hit_tokens)
//   cacheWrite    = 0 (OpenAI does not report cache writes)
//   output        = completion_tokens - completion_tokens_details.reasoning_tokens (visible output,
//                   as the seed's output_tokens), reasoning = reasoning_tokens
// so output + reasoning = completion_tokens and inputUncached + cacheRead = prompt_tokens.
// serviceTier = the response's `service_tier` when not `default` (`flex`, `priority`: other prices).
// Details that are parts of these (audio_tokens, accepted/rejected_prediction_tokens: rejected
// predictions are in completion_tokens and billed as output) add no bucket.
import type { ToolCall, Usage } from '../recording/types.js';
import { eventJson } from './framing.js';
import {
  asArray,
  asText,
  contentText,
  functionTools,
  isJsonPost,
  isRecord,
  layOver,
  num,
  pathOf,
  SAMPLING_KEYS,
  str,
  textParts,
  toolResultPart,
  withoutKeys,
  withServiceTier,
} from './read.js';
import type { Json, ModelOutput, Provider, Turn, TurnPart } from './types.js';

/** OpenAI usage (Chat Completions `prompt_tokens`… or Responses `input_tokens`…) in buckets. */
export function openaiUsage(usage: unknown): Usage | undefined {
  if (!isRecord(usage)) return undefined;
  const isResponses = 'input_tokens' in usage;
  const input = num(isResponses ? usage.input_tokens : usage.prompt_tokens);
  const completion = num(isResponses ? usage.output_tokens : usage.completion_tokens);
  const inDetails = usage[isResponses ? 'input_tokens_details' : 'prompt_tokens_details'];
  const outDetails = usage[isResponses ? 'output_tokens_details' : 'completion_tokens_details'];
  // OpenAI's `cached_tokens`, else an OpenAI-compatible server's own name for it (DeepSeek's `prompt_cache_hit_tokens`).
  const cachedTokens =
    isRecord(inDetails) && typeof inDetails.cached_tokens === 'number'
      ? inDetails.cached_tokens
      : usage.prompt_cache_hit_tokens;
  const cached = Math.min(input, num(cachedTokens));
  const reasoning = Math.min(completion, isRecord(outDetails) ? num(outDetails.reasoning_tokens) : 0);
  return {
    inputUncached: input - cached,
    cacheRead: cached,
    cacheWrite: 0,
    output: completion - reasoning,
    reasoning,
  };
}

const isSystemMessage = (m: unknown): m is Json => isRecord(m) && (m.role === 'system' || m.role === 'developer');

/** The system/developer messages' text, joined; undefined when there are none. */
export function systemOfMessages(messages: unknown[]): string | undefined {
  const parts = messages
    .filter(isSystemMessage)
    .map((m) => contentText(m.content))
    .filter((text) => text !== '');
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

/**
 * A copy of `list` whose system messages say `prompt` (none added where there is none). Several
 * system messages stay several: those the new prompt keeps whole at its start and end go out as
 * they were; the text between takes the place of the ones in between, as one message where the
 * first of them was.
 */
export function withSystemMessage(list: unknown[], prompt: string): unknown[] {
  const read = list.flatMap((m, i) => (isSystemMessage(m) && contentText(m.content) !== '' ? [i] : []));
  const { head, tail, middle } = layOver(
    read.map((i) => contentText((list[i] as Json).content)),
    '\n\n',
    prompt,
  );
  if (head === read.length && middle === '') return list;
  const from = head === 0 ? 0 : (read[head - 1] as number) + 1;
  const to = tail === 0 ? list.length : (read[read.length - tail] as number);
  const replaced = list.flatMap((m, i) => (i >= from && i < to && isSystemMessage(m) ? [i] : []));
  const first = replaced[0];
  const keepOne = middle !== '' || replaced.length === read.length;
  if (first === undefined) {
    if (!keepOne) return list;
    const at = head === 0 ? (read[0] as number) : (read[head - 1] as number) + 1;
    const like = list[read[Math.max(0, head - 1)] as number] as Json;
    return [...list.slice(0, at), { role: like.role, content: middle }, ...list.slice(at)];
  }
  return list.flatMap((m, i) =>
    i === first && keepOne ? [{ ...(m as Json), content: middle }] : replaced.includes(i) ? [] : [m],
  );
}

/** Content parts: text, and images / audio / files as media. */
function contentParts(content: unknown): TurnPart[] {
  if (!Array.isArray(content)) return textParts(content);
  const parts: TurnPart[] = [];
  for (const part of content) {
    if (typeof part === 'string') parts.push({ kind: 'text', text: part });
    else if (isRecord(part) && typeof part.text === 'string') parts.push({ kind: 'text', text: part.text });
    else if (isRecord(part) && typeof part.refusal === 'string') parts.push({ kind: 'text', text: part.refusal });
    else if (part !== null && part !== undefined) parts.push({ kind: 'media', text: asText(part) });
  }
  return parts;
}

function toolCallPart(call: unknown): TurnPart {
  const c = isRecord(call) ? call : {};
  const fn = isRecord(c.function) ? c.function : c;
  const args = fn.arguments;
  return {
    kind: 'tool-call',
    id: str(c.id) ?? '',
    name: str(fn.name) ?? '',
    arguments: typeof args === 'string' ? args : args === undefined ? '' : JSON.stringify(args),
  };
}

/** Chat messages as turns: system/developer, user, assistant (text and tool_calls), tool results. */
export function chatTurns(messages: unknown[], system?: string): Turn[] {
  const turns: Turn[] = [];
  if (system !== undefined && system !== '' && !messages.some(isSystemMessage))
    turns.push({ role: 'system', parts: [{ kind: 'text', text: system }] });
  for (const message of messages) {
    if (typeof message === 'string') {
      turns.push({ role: 'user', parts: [{ kind: 'text', text: message }] });
      continue;
    }
    if (!isRecord(message)) continue;
    const role = str(message.role);
    if (role === 'system' || role === 'developer') turns.push({ role: 'system', parts: contentParts(message.content) });
    else if (role === 'user') turns.push({ role: 'user', parts: contentParts(message.content) });
    else if (role === 'assistant') {
      const parts = contentParts(message.content);
      for (const call of asArray(message.tool_calls)) parts.push(toolCallPart(call));
      if (isRecord(message.function_call)) parts.push(toolCallPart({ function: message.function_call }));
      turns.push({ role: 'assistant', parts });
    } else if (role === 'tool' || role === 'function') {
      const callId = str(message.tool_call_id);
      const name = str(message.name);
      turns.push({ role: 'tool', parts: [toolResultPart(contentText(message.content), callId, name)] });
    } else turns.push({ role: 'other', parts: [{ kind: 'text', text: asText(message.content ?? message) }] });
  }
  return turns;
}

function decodeBody(body: unknown): ModelOutput {
  if (!isRecord(body)) return { toolCalls: [] };
  const out: ModelOutput = { toolCalls: [] };
  if (typeof body.model === 'string') out.model = body.model;
  const usage = openaiUsage(body.usage);
  if (usage) out.usage = withServiceTier(usage, body.service_tier);
  const choices = asArray(body.choices);
  const choice = choices.find((c) => isRecord(c) && num(c.index) === 0) ?? choices[0];
  if (!isRecord(choice)) return out;
  const message = isRecord(choice.message) ? choice.message : {};
  if (typeof message.content === 'string') out.text = message.content;
  for (const call of asArray(message.tool_calls)) {
    if (!isRecord(call)) continue;
    const fn = isRecord(call.function) ? call.function : {};
    out.toolCalls.push({ id: str(call.id) ?? '', name: str(fn.name) ?? '', arguments: str(fn.arguments) ?? '' });
  }
  const stop = str(choice.finish_reason);
  if (stop !== undefined) out.stopReason = stop;
  return out;
}

export const openaiChat: Provider = {
  id: 'openai.chat.completions',
  provider: 'openai',
  api: 'chat.completions',
  kind: 'chat',
  detect: (request) =>
    isJsonPost(request) && pathOf(request).endsWith('/chat/completions') && Array.isArray(request.json.messages),
  readInput(body) {
    const messages = asArray(body.messages);
    const system = systemOfMessages(messages);
    return {
      model: str(body.model) ?? '',
      ...(system === undefined ? {} : { system }),
      messages,
      ...(Array.isArray(body.tools) ? { tools: body.tools } : {}),
    };
  },
  decodeBody,
  assembleStream(events) {
    const out: ModelOutput = { toolCalls: [] };
    let text = '';
    let hasText = false;
    const byIndex = new Map<number, ToolCall>();
    let tier: string | undefined;
    for (const event of events) {
      const chunk = eventJson(event);
      if (chunk === undefined) continue;
      if (typeof chunk.model === 'string') out.model = chunk.model;
      // Groq sends a stream's usage in its last chunk's `x_groq.usage`, not `usage`.
      const reported = chunk.usage ?? (isRecord(chunk.x_groq) ? chunk.x_groq.usage : undefined);
      if (reported !== undefined && reported !== null) {
        const usage = openaiUsage(reported);
        if (usage) out.usage = usage;
      }
      // Every chunk names the tier; the usage chunk may not: the last one named is the call's.
      if (typeof chunk.service_tier === 'string') tier = chunk.service_tier;
      for (const choice of asArray(chunk.choices)) {
        if (!isRecord(choice) || num(choice.index) !== 0) continue;
        const delta = isRecord(choice.delta) ? choice.delta : {};
        if (typeof delta.content === 'string' && delta.content !== '') {
          text += delta.content;
          hasText = true;
          out.firstTokenOffsetMs ??= event.offsetMs;
        }
        for (const part of asArray(delta.tool_calls)) {
          if (!isRecord(part)) continue;
          out.firstTokenOffsetMs ??= event.offsetMs;
          const index = num(part.index);
          const call = byIndex.get(index) ?? { id: '', name: '', arguments: '' };
          const fn = isRecord(part.function) ? part.function : {};
          if (typeof part.id === 'string') call.id = part.id;
          if (typeof fn.name === 'string') call.name += fn.name;
          if (typeof fn.arguments === 'string') call.arguments += fn.arguments;
          byIndex.set(index, call);
        }
        if (typeof choice.finish_reason === 'string') out.stopReason = choice.finish_reason;
      }
    }
    if (hasText) out.text = text;
    if (out.usage) out.usage = withServiceTier(out.usage, tier);
    out.toolCalls = [...byIndex.entries()].sort((a, b) => a[0] - b[0]).map(([, call]) => call);
    return out;
  },
  turns: (call) => chatTurns(call.messages, call.system),
  tools: (call) => functionTools(call.tools),
  systemPrompt: (body) => systemOfMessages(asArray(body.messages)),
  withSystemPrompt: (body, prompt) => ({ ...body, messages: withSystemMessage(asArray(body.messages), prompt) }),
  volatile: ['user', 'metadata', 'store', 'prompt_cache_key', 'safety_identifier'],
  structural: (body) => withoutKeys(body, SAMPLING_KEYS),
};
