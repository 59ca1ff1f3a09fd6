// Ollama's native chat API (POST …/api/chat: `messages`, `tools`), streamed as NDJSON (the API's default:
// one JSON object a line, the counts on the last, `done: true`) or one JSON body with
// `stream: false`. Tool calls come back whole in `message.tool_calls`, arguments as an object and
// no ids: a call is named `<name>#<n>` and a `tool` message answers the earliest unanswered call of
// its `tool_name` (read.ts CallIds), the same ids in the output and in later turns.
//
// Usage buckets: inputUncached = prompt_eval_count (Ollama reports no cache: a prompt prefix it
// kept evaluated is simply not counted); output = eval_count (thinking included: Ollama does not
// count it apart); cacheRead = cacheWrite = reasoning = 0. Durations (ns) are not usage.
import type { ToolCall, Usage } from '../recording/types.js';
import { eventJson } from './framing.js';
import { openaiChat } from './openai-chat.js';
import {
  asArray,
  asText,
  CallIds,
  contentText,
  functionTools,
  isJsonPost,
  isRecord,
  num,
  pathOf,
  str,
  toolResultPart,
  withoutKeys,
} from './read.js';
import type { Json, ModelInput, ModelOutput, Provider, ProviderRequest, Turn, TurnPart } from './types.js';

/** Knobs of `options` that change how an answer is sampled, not what is asked. */
const SAMPLING = ['temperature', 'top_p', 'top_k', 'min_p', 'seed', 'num_predict', 'repeat_penalty', 'typical_p'];

/** Ollama's counts in buckets; undefined when the answer carries none (a chunk before the last). */
export function ollamaUsage(body: Json): Usage | undefined {
  if (body.prompt_eval_count === undefined && body.eval_count === undefined) return undefined;
  return {
    inputUncached: num(body.prompt_eval_count),
    cacheRead: 0,
    cacheWrite: 0,
    output: num(body.eval_count),
    reasoning: 0,
  };
}

/** The last line of an answer (`done: true`): its counts and why it stopped, into `out`. */
export function ollamaDone(data: Json, out: ModelOutput): void {
  if (data.done !== true) return;
  const usage = ollamaUsage(data);
  if (usage) out.usage = usage;
  const reason = str(data.done_reason);
  if (reason !== undefined) out.stopReason = reason;
}

const arguments_ = (args: unknown): string => (typeof args === 'string' ? args : JSON.stringify(args ?? {}));

function messageParts(message: Json, ids: CallIds): TurnPart[] {
  const parts: TurnPart[] = [];
  const text = contentText(message.content);
  if (text !== '') parts.push({ kind: 'text', text });
  for (const image of asArray(message.images)) parts.push({ kind: 'media', text: asText(image) });
  for (const call of asArray(message.tool_calls)) {
    const fn = isRecord(call) && isRecord(call.function) ? call.function : {};
    const name = str(fn.name) ?? '';
    const id = ids.call(name, isRecord(call) ? str(call.id) : undefined);
    parts.push({ kind: 'tool-call', id, name, arguments: arguments_(fn.arguments) });
  }
  return parts;
}

/** Chat messages as turns, tool calls and results paired by CallIds. */
function chatTurns(messages: unknown[], ids = new CallIds()): Turn[] {
  const turns: Turn[] = [];
  for (const message of messages) {
    if (!isRecord(message)) continue;
    const role = str(message.role);
    if (role === 'tool') {
      const name = str(message.tool_name) ?? str(message.name);
      const callId = ids.answer(name, str(message.tool_call_id));
      turns.push({ role: 'tool', parts: [toolResultPart(contentText(message.content), callId, name)] });
    } else {
      const unified = role === 'system' || role === 'user' || role === 'assistant' ? role : 'other';
      turns.push({ role: unified, parts: messageParts(message, ids) });
    }
  }
  return turns;
}

/** The ids a chat's conversation has named, so an answer's calls continue its numbering. */
function idsAfter(messages: unknown[]): CallIds {
  const ids = new CallIds();
  chatTurns(messages, ids);
  return ids;
}

/** The answer of NDJSON chunks (one for a plain response): text pieces joined, calls whole, counts from the last. */
function assemble(chunks: Array<{ data: Json; offsetMs?: number }>, input: ModelInput): ModelOutput {
  const out: ModelOutput = { toolCalls: [] };
  const ids = idsAfter(input.messages);
  let text: string | undefined;
  for (const { data, offsetMs } of chunks) {
    if (typeof data.model === 'string') out.model = data.model;
    const piece = isRecord(data.message) ? data.message.content : undefined;
    if (typeof piece === 'string') {
      text = (text ?? '') + piece;
      if (piece !== '' && offsetMs !== undefined) out.firstTokenOffsetMs ??= offsetMs;
    }
    const message = isRecord(data.message) ? data.message : {};
    for (const call of asArray(message.tool_calls)) {
      const fn = isRecord(call) && isRecord(call.function) ? call.function : {};
      const name = str(fn.name) ?? '';
      const toolCall: ToolCall = {
        id: ids.call(name, isRecord(call) ? str(call.id) : undefined),
        name,
        arguments: arguments_(fn.arguments),
      };
      out.toolCalls.push(toolCall);
      if (offsetMs !== undefined) out.firstTokenOffsetMs ??= offsetMs;
    }
    ollamaDone(data, out);
  }
  if (text !== undefined) out.text = text;
  return out;
}

export const ndjsonChunks = (events: Parameters<Provider['assembleStream']>[0]) =>
  events.flatMap((event) => {
    const data = eventJson(event);
    return data === undefined ? [] : [{ data, offsetMs: event.offsetMs }];
  });

/** The body without sampling knobs (in `options`) and transport ones (Ollama's chat and generate alike). */
export function ollamaStructural(body: Json): Json {
  const rest = withoutKeys(body, ['keep_alive', 'stream']);
  if (!isRecord(rest.options)) return rest;
  const kept = withoutKeys(rest.options, SAMPLING);
  const { options: _dropped, ...others } = rest;
  return Object.keys(kept).length > 0 ? { ...others, options: kept } : others;
}

export const isModelPost = (request: ProviderRequest, path: string): request is ProviderRequest & { json: Json } =>
  isJsonPost(request) && pathOf(request).endsWith(path) && typeof request.json.model === 'string';

export const ollamaChat: Provider = {
  id: 'ollama.chat',
  provider: 'ollama',
  api: 'chat',
  kind: 'chat',
  framing: 'ndjson',
  // `/api/chat` is also many a web app's own route: Ollama's messages are `{ role, content: string }`
  // (a UI's `parts` messages, say the AI SDK's useChat posts, are not).
  detect: (request) =>
    isModelPost(request, '/api/chat') &&
    Array.isArray(request.json.messages) &&
    request.json.messages.every((m) => isRecord(m) && typeof m.role === 'string' && typeof m.content === 'string'),
  // The request is shaped as Chat Completions' (system messages, `tools` with `function`).
  readInput: (body, request) => openaiChat.readInput(body, request),
  decodeBody: (body, input) => assemble(isRecord(body) ? [{ data: body }] : [], input),
  assembleStream: (events, input) => assemble(ndjsonChunks(events), input),
  turns: (call) => chatTurns(call.messages),
  tools: (call) => functionTools(call.tools),
  systemPrompt: (body) => openaiChat.systemPrompt(body),
  withSystemPrompt: (body, prompt) => openaiChat.withSystemPrompt(body, prompt),
  volatile: ['keep_alive'],
  structural: ollamaStructural,
};
