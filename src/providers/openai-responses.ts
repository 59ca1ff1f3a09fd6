// OpenAI Responses (POST …/responses), streamed (typed SSE events) and not. `instructions` and
// system/developer input items are the system prompt, `input` the messages (a string input is one
// user message), `function_call` items the tool calls and `function_call_output` items their
// results. Usage: as Chat Completions (openai-chat.ts), from input_tokens / output_tokens.

import { eventJson } from './framing.js';
import { chatTurns, openaiUsage, systemOfMessages, withSystemMessage } from './openai-chat.js';
import {
  asArray,
  asText,
  contentText,
  functionTools,
  isJsonPost,
  isRecord,
  pathOf,
  SAMPLING_KEYS,
  str,
  withoutKeys,
  withServiceTier,
} from './read.js';
import type { Json, ModelOutput, Provider, Turn } from './types.js';

/** The input items of a Responses request (a string input is one user message). */
function responsesInput(body: Json): unknown[] {
  return typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : asArray(body.input);
}

/**
 * The built-in tools OpenAI ran inside the call and bills apart from the call's tokens, from its
 * output items: each `web_search_call`, `file_search_call` and `image_generation_call` is one use
 * (`web_search`, `file_search`, `image_generation`: an image, billed by its size and quality); code
 * interpreter is billed per container, so `code_interpreter` counts the distinct containers its
 * calls ran in.
 */
function builtInToolUses(items: unknown[]): Record<string, number> | undefined {
  const uses: Record<string, number> = {};
  const containers = new Set<string>();
  for (const item of items) {
    if (!isRecord(item)) continue;
    if (item.type === 'web_search_call' || item.type === 'file_search_call' || item.type === 'image_generation_call') {
      const name = (item.type as string).replace(/_call$/, '');
      uses[name] = (uses[name] ?? 0) + 1;
    } else if (item.type === 'code_interpreter_call') {
      containers.add(str(item.container_id) ?? str(item.id) ?? '');
    }
  }
  if (containers.size > 0) uses.code_interpreter = containers.size;
  return Object.keys(uses).length > 0 ? uses : undefined;
}

function responsesOutput(body: Json): ModelOutput {
  const texts: string[] = [];
  const out: ModelOutput = { toolCalls: [] };
  for (const item of asArray(body.output)) {
    if (!isRecord(item)) continue;
    if (item.type === 'message') {
      for (const part of asArray(item.content)) {
        if (isRecord(part) && part.type === 'output_text' && typeof part.text === 'string') texts.push(part.text);
      }
    } else if (item.type === 'function_call') {
      out.toolCalls.push({
        id: str(item.call_id) ?? str(item.id) ?? '',
        name: str(item.name) ?? '',
        arguments: str(item.arguments) ?? '',
      });
    }
  }
  if (texts.length > 0) out.text = texts.join('');
  if (typeof body.model === 'string') out.model = body.model;
  const usage = openaiUsage(body.usage);
  const serverTools = builtInToolUses(asArray(body.output));
  if (usage)
    out.usage = withServiceTier(serverTools === undefined ? usage : { ...usage, serverTools }, body.service_tier);
  const incomplete = isRecord(body.incomplete_details) ? str(body.incomplete_details.reason) : undefined;
  const stop = incomplete ?? (out.toolCalls.length > 0 ? 'tool_calls' : str(body.status));
  if (stop !== undefined) out.stopReason = stop;
  return out;
}

/** Input items as turns: messages by role, function calls and their outputs, anything else as other. */
function responsesTurns(items: unknown[], system: string | undefined): Turn[] {
  const turns: Turn[] = [];
  // `system` joins the instructions and the system items: the instructions are what the items do not say.
  const fromItems = systemOfMessages(items);
  let instructions = system;
  if (system !== undefined && fromItems !== undefined)
    instructions =
      system === fromItems
        ? undefined
        : system.endsWith(`\n\n${fromItems}`)
          ? system.slice(0, -fromItems.length - 2)
          : system;
  if (instructions) turns.push({ role: 'system', parts: [{ kind: 'text', text: instructions }] });
  for (const item of items) {
    if (!isRecord(item)) continue;
    if (item.type === 'function_call') {
      turns.push({
        role: 'assistant',
        parts: [
          {
            kind: 'tool-call',
            id: str(item.call_id) ?? str(item.id) ?? '',
            name: str(item.name) ?? '',
            arguments: str(item.arguments) ?? '',
          },
        ],
      });
    } else if (item.type === 'function_call_output') {
      const callId = str(item.call_id);
      turns.push({
        role: 'tool',
        parts: [{ kind: 'tool-result', ...(callId === undefined ? {} : { callId }), text: contentText(item.output) }],
      });
    } else if (item.type === undefined || item.type === 'message') {
      turns.push(...chatTurns([item]));
    } else {
      const summary = contentText(item.summary);
      turns.push({ role: 'other', parts: [{ kind: 'text', text: summary !== '' ? summary : asText(item) }] });
    }
  }
  return turns;
}

export const openaiResponses: Provider = {
  id: 'openai.responses',
  provider: 'openai',
  api: 'responses',
  kind: 'chat',
  detect: (request) =>
    isJsonPost(request) &&
    pathOf(request).endsWith('/responses') &&
    ('input' in request.json || 'model' in request.json),
  readInput(body) {
    const messages = responsesInput(body);
    const fromItems = systemOfMessages(messages);
    const parts = [
      ...(typeof body.instructions === 'string' && body.instructions !== '' ? [body.instructions] : []),
      ...(fromItems === undefined ? [] : [fromItems]),
    ];
    return {
      model: str(body.model) ?? '',
      ...(parts.length > 0 ? { system: parts.join('\n\n') } : {}),
      messages,
      ...(Array.isArray(body.tools) ? { tools: body.tools } : {}),
    };
  },
  decodeBody: (body) => (isRecord(body) ? responsesOutput(body) : { toolCalls: [] }),
  assembleStream(events) {
    let final: Json | undefined;
    let firstTokenOffsetMs: number | undefined;
    let streamedText = '';
    const items: unknown[] = [];
    for (const event of events) {
      const data = eventJson(event);
      if (data === undefined) continue;
      const type = str(data.type) ?? event.event;
      if (type === 'response.output_text.delta' || type === 'response.function_call_arguments.delta') {
        firstTokenOffsetMs ??= event.offsetMs;
        if (type === 'response.output_text.delta' && typeof data.delta === 'string') streamedText += data.delta;
      }
      if (type === 'response.output_item.done' && data.item !== undefined) items.push(data.item);
      if (
        (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') &&
        isRecord(data.response)
      )
        final = data.response;
    }
    // A stream cut short has no final response: its finished items and text deltas are what was said.
    const out = responsesOutput(final ?? { output: items });
    if (out.text === undefined && streamedText !== '') out.text = streamedText;
    if (firstTokenOffsetMs !== undefined) out.firstTokenOffsetMs = firstTokenOffsetMs;
    return out;
  },
  turns: (call) => responsesTurns(call.messages, call.system),
  tools: (call) => functionTools(call.tools),
  systemPrompt(body) {
    if (typeof body.instructions === 'string') return body.instructions;
    return systemOfMessages(responsesInput(body));
  },
  withSystemPrompt(body, prompt) {
    if (typeof body.instructions === 'string' || !Array.isArray(body.input)) return { ...body, instructions: prompt };
    return { ...body, input: withSystemMessage(body.input, prompt) };
  },
  volatile: ['user', 'metadata', 'store', 'prompt_cache_key', 'safety_identifier'],
  structural: (body) => withoutKeys(body, SAMPLING_KEYS),
};
