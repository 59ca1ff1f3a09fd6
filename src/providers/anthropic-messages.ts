// Anthropic Messages (POST …/messages), streamed (SSE) and not.
//
// Usage buckets: input_tokens is already the uncached input; cache_read_input_tokens = cacheRead;
// cache_creation_input_tokens = cacheWrite; output_tokens = output (Anthropic does not report
// thinking tokens separately, so reasoning = 0); cache_creation.ephemeral_1h_input_tokens =
// cacheWrite1h (the part of the writes kept 1 hour, billed 2x input rather than 1.25x);
// server_tool_use.<tool>_requests = serverTools[<tool>] (web searches, billed per request);
// service_tier = serviceTier when not `standard` (`priority`, `batch`: other prices). In a
// stream, message_start carries the input buckets and the 1-hour split, message_delta the final
// (cumulative) output_tokens and server tool uses (and, from 2025, cumulative input counts); later
// values win, a field a later event leaves out keeps the earlier value.
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
  withoutKeys,
  withServiceTier,
} from './read.js';
import type { Json, ModelOutput, Provider, Turn, TurnPart } from './types.js';

export function anthropicUsage(usage: unknown, base?: Usage): Usage | undefined {
  if (!isRecord(usage)) return base;
  const pick = (key: string, fallback: number) => (typeof usage[key] === 'number' ? num(usage[key]) : fallback);
  const out: Usage = {
    inputUncached: pick('input_tokens', base?.inputUncached ?? 0),
    cacheRead: pick('cache_read_input_tokens', base?.cacheRead ?? 0),
    cacheWrite: pick('cache_creation_input_tokens', base?.cacheWrite ?? 0),
    output: pick('output_tokens', base?.output ?? 0),
    reasoning: 0,
  };
  // `cache_creation` splits the writes by lifetime (5 minutes, 1 hour); message_start carries it, a
  // later message_delta only the total.
  const split = isRecord(usage.cache_creation) ? usage.cache_creation : undefined;
  const oneHour =
    split && typeof split.ephemeral_1h_input_tokens === 'number'
      ? num(split.ephemeral_1h_input_tokens)
      : base?.cacheWrite1h;
  if (oneHour !== undefined && oneHour > 0) out.cacheWrite1h = Math.min(oneHour, out.cacheWrite);
  // `server_tool_use`: { web_search_requests: 2, web_fetch_requests: 1 } (cumulative in a stream).
  const serverTools = { ...base?.serverTools };
  if (isRecord(usage.server_tool_use)) {
    for (const [key, value] of Object.entries(usage.server_tool_use)) {
      const name = key.replace(/_requests$/, '');
      if (typeof value === 'number' && value > 0 && name !== key) serverTools[name] = num(value);
    }
  }
  if (Object.keys(serverTools).length > 0) out.serverTools = serverTools;
  const tier = usage.service_tier ?? base?.serviceTier;
  return withServiceTier(out, tier);
}

interface Block {
  type: string;
  text: string;
  id: string;
  name: string;
  json: string;
}

function outputOf(blocks: Block[], out: ModelOutput): ModelOutput {
  for (const block of blocks) if (block.type.endsWith('tool_use') && block.json === '') block.json = '{}';
  const texts = blocks.filter((b) => b.type === 'text').map((b) => b.text);
  out.toolCalls = blocks
    .filter((b) => b.type === 'tool_use' || b.type === 'server_tool_use')
    .map((b): ToolCall => ({ id: b.id, name: b.name, arguments: b.json }));
  if (texts.length > 0) out.text = texts.join('');
  return out;
}

/** A message's content blocks as turn parts. */
function blockParts(content: unknown): TurnPart[] {
  if (!Array.isArray(content)) {
    const text = contentText(content);
    return text === '' ? [] : [{ kind: 'text', text }];
  }
  const parts: TurnPart[] = [];
  for (const block of content) {
    if (typeof block === 'string') parts.push({ kind: 'text', text: block });
    if (!isRecord(block)) continue;
    if (block.type === 'tool_use' || block.type === 'server_tool_use') {
      parts.push({
        kind: 'tool-call',
        id: str(block.id) ?? '',
        name: str(block.name) ?? '',
        arguments: block.input === undefined ? '{}' : JSON.stringify(block.input),
      });
    } else if (
      block.type === 'tool_result' ||
      (typeof block.type === 'string' && block.type.endsWith('_tool_result'))
    ) {
      const callId = str(block.tool_use_id);
      parts.push({
        kind: 'tool-result',
        ...(callId === undefined ? {} : { callId }),
        text: typeof block.content === 'string' ? block.content : contentText(block.content),
      });
    } else if (typeof block.text === 'string') parts.push({ kind: 'text', text: block.text });
    else if (typeof block.thinking === 'string') parts.push({ kind: 'text', text: block.thinking });
    else parts.push({ kind: 'media', text: asText(block) });
  }
  return parts;
}

export const anthropicMessages: Provider = {
  id: 'anthropic.messages',
  provider: 'anthropic',
  api: 'messages',
  kind: 'chat',
  detect(request) {
    if (!isJsonPost(request) || !pathOf(request).endsWith('/messages') || !Array.isArray(request.json.messages))
      return false;
    if ('max_tokens' in request.json) return true;
    return Object.keys(request.headers).some((k) => /^(anthropic-version|x-api-key)$/i.test(k));
  },
  readInput(body) {
    const system = body.system === undefined ? undefined : contentText(body.system);
    return {
      model: str(body.model) ?? '',
      ...(system === undefined || system === '' ? {} : { system }),
      messages: asArray(body.messages),
      ...(Array.isArray(body.tools) ? { tools: body.tools } : {}),
    };
  },
  decodeBody(body) {
    const out: ModelOutput = { toolCalls: [] };
    if (!isRecord(body)) return out;
    if (typeof body.model === 'string') out.model = body.model;
    const usage = anthropicUsage(body.usage);
    if (usage) out.usage = usage;
    const stop = str(body.stop_reason);
    if (stop !== undefined) out.stopReason = stop;
    const blocks: Block[] = [];
    for (const block of asArray(body.content)) {
      if (!isRecord(block)) continue;
      blocks.push({
        type: str(block.type) ?? '',
        text: str(block.text) ?? '',
        id: str(block.id) ?? '',
        name: str(block.name) ?? '',
        json: block.input === undefined ? '' : JSON.stringify(block.input),
      });
    }
    return outputOf(blocks, out);
  },
  assembleStream(events) {
    const out: ModelOutput = { toolCalls: [] };
    let usage: Usage | undefined;
    // message_start's output_tokens is a placeholder (1): the count comes with message_delta.
    let finalUsage = false;
    const byIndex = new Map<number, Block>();
    for (const event of events) {
      const data = eventJson(event);
      if (data === undefined) continue;
      switch (data.type) {
        case 'message_start':
          if (isRecord(data.message)) {
            if (typeof data.message.model === 'string') out.model = data.message.model;
            usage = anthropicUsage(data.message.usage, usage);
          }
          break;
        case 'content_block_start': {
          const block = isRecord(data.content_block) ? data.content_block : {};
          byIndex.set(num(data.index), {
            type: str(block.type) ?? 'text',
            text: str(block.text) ?? '',
            id: str(block.id) ?? '',
            name: str(block.name) ?? '',
            json: '',
          });
          break;
        }
        case 'content_block_delta': {
          const entry = byIndex.get(num(data.index));
          const delta = isRecord(data.delta) ? data.delta : {};
          if (entry === undefined) break;
          if (delta.type === 'text_delta' && typeof delta.text === 'string') {
            entry.text += delta.text;
            out.firstTokenOffsetMs ??= event.offsetMs;
          } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
            entry.json += delta.partial_json;
            out.firstTokenOffsetMs ??= event.offsetMs;
          }
          break;
        }
        case 'message_delta':
          if (isRecord(data.delta) && typeof data.delta.stop_reason === 'string')
            out.stopReason = data.delta.stop_reason;
          usage = anthropicUsage(data.usage, usage);
          if (isRecord(data.usage)) finalUsage = true;
          break;
      }
    }
    // A stream without message_delta's usage (the client cut it short) has its input counted, not its output.
    if (usage) out.usage = finalUsage ? usage : { ...usage, outputIncomplete: true };
    return outputOf(
      [...byIndex.entries()].sort((a, b) => a[0] - b[0]).map(([, block]) => block),
      out,
    );
  },
  turns(call) {
    const turns: Turn[] = [];
    if (call.system) turns.push({ role: 'system', parts: [{ kind: 'text', text: call.system }] });
    for (const message of call.messages) {
      if (!isRecord(message)) continue;
      const role = message.role === 'assistant' ? 'assistant' : message.role === 'user' ? 'user' : 'other';
      turns.push({ role, parts: blockParts(message.content) });
    }
    return turns;
  },
  tools: (call) => functionTools(call.tools),
  systemPrompt: (body) => (body.system === undefined ? undefined : contentText(body.system)),
  withSystemPrompt(body, prompt) {
    if (!Array.isArray(body.system)) return { ...body, system: prompt };
    // A list of blocks stays one: the blocks the new prompt keeps whole (at its start and end) stay
    // as they were, cache breakpoints and all; the text between takes the place of the blocks in
    // between, as one block with the last cache breakpoint among them.
    const blocks: unknown[] = body.system;
    const texts = blocks.map((b) => contentText([b]));
    const read = blocks.flatMap((_, i) => (texts[i] === '' ? [] : [i]));
    const { head, tail, middle } = layOver(
      read.map((i) => texts[i] as string),
      '\n',
      prompt,
    );
    if (head === read.length && middle === '') return body;
    const from = head === 0 ? 0 : (read[head - 1] as number) + 1;
    const to = tail === 0 ? blocks.length : (read[read.length - tail] as number);
    const replaced = blocks.slice(from, to);
    const breakpoint = replaced.findLast((b) => isRecord(b) && b.cache_control !== undefined);
    const cache = isRecord(breakpoint) ? { cache_control: breakpoint.cache_control } : {};
    const between = middle === '' && replaced.length < blocks.length ? [] : [{ type: 'text', text: middle, ...cache }];
    return { ...body, system: [...blocks.slice(0, from), ...between, ...blocks.slice(to)] };
  },
  volatile: ['metadata'],
  structural: (body: Json) => withoutKeys(body, SAMPLING_KEYS),
};
