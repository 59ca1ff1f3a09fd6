// What the rest of tapedeck asks the providers: which provider speaks a request, the
// model.called payload of an exchange, and the turns, tools and system prompt of a call —
// provider-independent answers, so no other module parses a provider's shapes.
import type { StateType } from '../recording/types.js';
import { framingOfType, streamEvents } from './framing.js';
import { openaiChat } from './openai-chat.js';
import { isRecord } from './read.js';
import { CONVERSATION_PROVIDERS, PROVIDERS } from './registry.js';
import type {
  DecodedModelCall,
  Json,
  ModelOutput,
  Provider,
  ProviderRequest,
  ProviderResponse,
  RecordedModelCall,
  ToolSpec,
  Turn,
  TurnPart,
} from './types.js';

/** The provider whose API a request speaks, or undefined for a request that is no model call. */
export function detectProvider(request: ProviderRequest): Provider | undefined {
  for (const provider of PROVIDERS) if (provider.detect(request)) return provider;
  return undefined;
}

/** A provider by its id (`openai.chat.completions`, …). */
export function providerById(id: string): Provider | undefined {
  return PROVIDERS.find((p) => p.id === id);
}

/**
 * The provider that reads a recorded model call (by its `provider` and `api`), if tapedeck knows it:
 * the one that recorded it, or for a call of a WebSocket conversation (OpenAI Realtime, Gemini Live)
 * the HTTP provider whose shapes its items share.
 */
export function providerOf(call: Pick<RecordedModelCall, 'provider' | 'api'>): Provider | undefined {
  const same = (p: { provider: string; api: string }) => p.provider === call.provider && p.api === call.api;
  return PROVIDERS.find(same) ?? CONVERSATION_PROVIDERS.find(same)?.reads;
}

/** A provider, or the reader of OpenAI-compatible shapes for a call no registered provider made. */
function readerOf(call: Pick<RecordedModelCall, 'provider' | 'api'>): Provider {
  return providerOf(call) ?? openaiChat;
}

function contentType(response: ProviderResponse): string | undefined {
  for (const [name, value] of Object.entries(response.headers)) if (name.toLowerCase() === 'content-type') return value;
  return undefined;
}

/** The model.called payload (without timing) of one exchange the provider speaks. */
export function decodeModelCall(
  provider: Provider,
  request: ProviderRequest,
  response: ProviderResponse,
): DecodedModelCall {
  const input = provider.readInput(isRecord(request.json) ? request.json : {}, request);
  const framing = provider.framing ?? 'sse';
  // A stream recorded whole (a binary AWS event stream is a body, not chunks) is one chunk at 0 ms.
  const chunks =
    response.chunks ??
    (response.json === undefined && response.bytes !== undefined && framingOfType(contentType(response)) === framing
      ? [{ offsetMs: 0, data: Buffer.from(response.bytes).toString('base64'), encoding: 'base64' as const }]
      : undefined);
  const output =
    chunks !== undefined
      ? provider.assembleStream(streamEvents(framing, chunks), input)
      : provider.decodeBody(response.json, input);
  // A stream kept whole has no offsets: when its first token came is not known.
  if (response.chunks === undefined) delete output.firstTokenOffsetMs;
  return {
    provider: provider.provider,
    api: provider.api,
    model: output.model ?? input.model,
    streamed: chunks !== undefined,
    ...(input.system === undefined ? {} : { system: input.system }),
    messages: input.messages,
    ...(input.tools === undefined ? {} : { tools: input.tools }),
    output: {
      ...(output.text === undefined ? {} : { text: output.text }),
      toolCalls: output.toolCalls,
      ...(output.embeddings === undefined ? {} : { embeddings: output.embeddings }),
    },
    ...(output.stopReason === undefined ? {} : { stopReason: output.stopReason }),
    ...(output.usage === undefined ? {} : { usage: output.usage }),
    ...(output.firstTokenOffsetMs === undefined ? {} : { firstTokenOffsetMs: output.firstTokenOffsetMs }),
  };
}

/**
 * The seed state type of a model call's step: RETRIEVE for an embeddings call (the query side of
 * a vector search, seed 000 §19.3), THINK for a call that decided on tools or failed, FINALIZE for
 * an answer. The recorder and the replay's live answers both name their model steps by it.
 */
export function modelStepType(
  call: { output: Pick<ModelOutput, 'toolCalls' | 'embeddings'> },
  failed: boolean,
): StateType {
  if (call.output.embeddings !== undefined) return 'RETRIEVE';
  return call.output.toolCalls.length > 0 || failed ? 'THINK' : 'FINALIZE';
}

/** The conversation of a recorded model call, roles and parts unified across providers. */
export function turnsOf(call: RecordedModelCall): Turn[] {
  return readerOf(call).turns(call);
}

/**
 * The tool calls a model call's conversation carries back: the ids of its tool calls and results
 * (a result the API gives no id counts by its tool's name, `name:<tool>`). Empty for a fresh
 * conversation: a call made inside a tool (see StepNamer in src/recording).
 */
export function carriedToolCalls(call: RecordedModelCall): Set<string> {
  const ids = new Set<string>();
  if (providerOf(call) === undefined) return ids;
  for (const turn of turnsOf(call))
    for (const part of turn.parts) {
      if (part.kind === 'tool-call') ids.add(part.id);
      else if (part.kind === 'tool-result') ids.add(part.callId ?? `name:${part.name ?? ''}`);
    }
  return ids;
}

/** Word pairs of a text, counted: what similarity compares. */
function pairs(text: string): Map<string, number> {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  const out = new Map<string, number>();
  for (let i = 0; i < words.length; i++) {
    const key = i + 1 < words.length ? `${words[i]} ${words[i + 1]}` : (words[i] as string);
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

/**
 * How alike two prompts are, 0 to 1 (the Dice coefficient of their word pairs): one agent's prompt
 * with a date or a running summary changed stays near 1; two agents' prompts written in the same
 * voice ("You are the …") share a few pairs only. Linear in the prompts' length.
 */
export function promptSimilarity(a: string, b: string): number {
  if (a === b) return 1;
  const pa = pairs(a);
  const pb = pairs(b);
  let shared = 0;
  let total = 0;
  for (const n of pa.values()) total += n;
  for (const [key, n] of pb) {
    total += n;
    shared += Math.min(n, pa.get(key) ?? 0);
  }
  return total === 0 ? 0 : (2 * shared) / total;
}

/** System prompts at least this alike (promptSimilarity) are taken as one agent's, varying from call to call. */
export const SAME_AGENT = 0.6;

/** The tools a recorded model call offered. */
export function toolsOf(call: RecordedModelCall): ToolSpec[] {
  return readerOf(call).tools(call);
}

/** The text of one part: text as it is, a tool call as `name(arguments)`, a result's text; media as nothing. */
export function partText(part: TurnPart): string {
  switch (part.kind) {
    case 'text':
    case 'tool-result':
      return part.text;
    case 'tool-call':
      return `${part.name}(${part.arguments})`;
    case 'media':
      return '';
  }
}

/** The text of a turn, parts joined by newlines. */
export function turnText(turn: Turn): string {
  return turn.parts
    .map(partText)
    .filter((text) => text !== '')
    .join('\n');
}

/**
 * The text answer in a (non-streamed) response body of the provider `id`: what a client of a
 * model endpoint (an LLM judge, a simulator) reads, without parsing the provider's shapes itself.
 * @example answerText('openai.chat.completions', await res.json())
 */
export function answerText(id: string, body: unknown): string | undefined {
  return answerOf(id, body)?.text;
}

/**
 * The answer in a (non-streamed) response body of the provider `id`: its text, the model that
 * answered and the provider-reported usage (what a tapedeck-side model call such as the simulator
 * costs).
 */
export function answerOf(id: string, body: unknown): Pick<ModelOutput, 'text' | 'model' | 'usage'> | undefined {
  const out = providerById(id)?.decodeBody(body, { model: '', messages: [] });
  if (!out) return undefined;
  return {
    ...(out.text !== undefined ? { text: out.text } : {}),
    ...(out.model ? { model: out.model } : {}),
    ...(out.usage ? { usage: out.usage } : {}),
  };
}

/** The system prompt of a model request body of the provider `id`. */
export function systemPromptOf(id: string, body: unknown): string | undefined {
  const provider = providerById(id);
  return provider && isRecord(body) ? provider.systemPrompt(body) : undefined;
}

/**
 * A copy of a model request body of the provider `id` with its system prompt replaced: by `prompt`,
 * or by what `prompt` makes of the current one. The one rule of every prompt override, whichever
 * field holds the prompt (Chat system/developer messages, Responses `instructions`, Anthropic
 * `system`, Gemini `systemInstruction`): a body with no system prompt is returned as it is. An
 * override replaces the prompt an agent gave its own conversation; a call that never had one (a
 * RAG answer writer, a summariser or a classifier inside a tool) is left as it was.
 * @example withSystemPrompt('openai.chat.completions', body, (current) => current.replace('Paris', 'Oslo'))
 */
export function withSystemPrompt(id: string, body: Json, prompt: string | ((current: string) => string)): Json {
  const provider = providerById(id);
  const current = provider?.systemPrompt(body);
  if (provider === undefined || current === undefined) return body;
  return provider.withSystemPrompt(body, typeof prompt === 'string' ? prompt : prompt(current));
}
