// Small readers the provider modules share: JSON shapes read defensively (a recording is
// untrusted data), text of content parts, request paths, and dropping keys.

import { asArray, isRecord } from '../recording/json.js';
import type { Json, ModelOutput, Provider, ProviderRequest, ToolSpec, TurnPart } from './types.js';

export { asArray, isRecord };

/** The largest count read: no model counts more, and a sum of a few stays an exact integer. */
const MAX_COUNT = 1e15;
/**
 * A non-negative integer count (a fraction dropped); 0 for anything else — a negative, NaN, a
 * count past MAX_COUNT. A usage the recording format refuses (over 2^53) never gets written.
 */
export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value <= MAX_COUNT ? Math.max(0, Math.trunc(value)) : 0;
}

/** The tiers a provider names its standard service (and prices) by: no tier of their own in a Usage. */
const STANDARD_TIERS = new Set(['default', 'standard', 'auto', 'on_demand']);

/**
 * `usage` with the service tier a response names (`service_tier`: OpenAI's `flex`, `priority`,
 * Anthropic's `priority`, `batch`), when it is not the standard one the price table's entry prices.
 */
export function withServiceTier<U extends { serviceTier?: string }>(usage: U, tier: unknown): U {
  if (typeof tier !== 'string' || tier === '' || STANDARD_TIERS.has(tier)) return usage;
  return { ...usage, serviceTier: tier };
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Joins the text of a content value: a string, or an array of parts with `text`. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .map((part) => (typeof part === 'string' ? part : isRecord(part) && typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text !== '')
    .join('\n');
}

/** A value as text: strings as they are, anything else as JSON. */
export function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value ?? null);
}

/** A URL path segment decoded (`anthropic.claude-…-v1%3A0`), or as it is when its escapes are malformed (a recording is untrusted). */
export function pathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The request's path without trailing slashes. */
export function pathOf(request: ProviderRequest): string {
  return request.url.pathname.replace(/\/+$/, '');
}

/** A POST whose body is a JSON object. */
export function isJsonPost(request: ProviderRequest): request is ProviderRequest & { json: Json } {
  return request.method.toUpperCase() === 'POST' && isRecord(request.json);
}

/** A copy of `body` without `keys` (top level). */
export function withoutKeys(body: Json, keys: readonly string[]): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(body)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/** Text parts from a string or an array of text parts, keeping empty text out. */
export function textParts(content: unknown): TurnPart[] {
  const text = contentText(content);
  return text === '' ? [] : [{ kind: 'text', text }];
}

/** Sampling and transport knobs of the OpenAI and Anthropic request bodies (top level). */
export const SAMPLING_KEYS = [
  'temperature',
  'top_p',
  'top_k',
  'max_tokens',
  'max_completion_tokens',
  'max_output_tokens',
  'n',
  'seed',
  'parallel_tool_calls',
  'stream_options',
  'frequency_penalty',
  'presence_penalty',
] as const;

/** Tools with the fields at top level (Responses, Anthropic `input_schema`) or under `function` (Chat Completions). */
export function functionTools(tools: unknown[] | undefined): ToolSpec[] {
  const out: ToolSpec[] = [];
  for (const tool of tools ?? []) {
    if (!isRecord(tool)) continue;
    const fn = isRecord(tool.function) ? tool.function : tool;
    const name = str(fn.name) ?? str(tool.type);
    if (name === undefined) continue;
    const description = str(fn.description);
    const parameters = fn.parameters ?? fn.input_schema;
    out.push({
      name,
      ...(description === undefined ? {} : { description }),
      ...(parameters === undefined ? {} : { parameters }),
    });
  }
  return out;
}

/**
 * How many dimensions one embedding has: a list of floats, or (OpenAI `encoding_format: "base64"`)
 * base64 of little-endian float32s, measured from the text's length without decoding it.
 */
export function embeddingDimensions(vector: unknown): number {
  if (Array.isArray(vector)) return vector.length;
  if (typeof vector !== 'string') return 0;
  const padding = vector.endsWith('==') ? 2 : vector.endsWith('=') ? 1 : 0;
  return Math.floor(((vector.length * 3) / 4 - padding) / 4);
}

/** The input of an embeddings request as a list: one text (or token list) becomes a list of one. */
export function embeddingInputs(input: unknown): unknown[] {
  if (input === undefined || input === null) return [];
  if (Array.isArray(input) && input.some((item) => typeof item !== 'number')) return input;
  return [input];
}

/** The output of an embeddings answer: its vectors' count and (from the first, under `key`) dimensions. */
export function embeddingsOutput(vectors: unknown[], key: string): ModelOutput {
  const first = vectors[0];
  return {
    toolCalls: [],
    embeddings: { count: vectors.length, dimensions: isRecord(first) ? embeddingDimensions(first[key]) : 0 },
  };
}

/**
 * What every embeddings API shares: never streamed, and no conversation (the input is what gets
 * embedded, neither said to a model nor seen by one), no tools, no system prompt to read or set.
 */
export const EMBEDDINGS_CALL = {
  kind: 'embeddings',
  assembleStream: () => embeddingsOutput([], ''),
  turns: () => [],
  tools: () => [],
  systemPrompt: () => undefined,
  withSystemPrompt: (body: Json) => body,
} as const satisfies Partial<Provider>;

/**
 * How a new prompt lays over the pieces the old one was read from (their texts joined with `sep`,
 * as `systemPrompt` reads a prompt held in several blocks or messages): how many pieces it keeps
 * whole at its start (`head`) and at its end (`tail`), and the text between them (`middle`) that
 * takes the place of the pieces in between. A patch of one piece, or a new prompt that keeps a
 * piece's text at its start or end, leaves the other pieces (and their cache breakpoints) as they were.
 */
export function layOver(
  pieces: readonly string[],
  sep: string,
  next: string,
): { head: number; tail: number; middle: string } {
  const n = pieces.length;
  const keeps = (text: string, whole: string, at: 'start' | 'end') =>
    text === whole || (at === 'start' ? text.startsWith(whole + sep) : text.endsWith(sep + whole));
  let head = 0;
  while (head < n && keeps(next, pieces.slice(0, head + 1).join(sep), 'start')) head++;
  const kept = pieces.slice(0, head).join(sep);
  const rest = head === 0 ? next : next === kept ? '' : next.slice(kept.length + sep.length);
  let tail = 0;
  while (head + tail < n && rest !== '' && keeps(rest, pieces.slice(n - tail - 1).join(sep), 'end')) tail++;
  const after = pieces.slice(n - tail).join(sep);
  const middle = tail === 0 ? rest : rest === after ? '' : rest.slice(0, rest.length - after.length - sep.length);
  return { head, tail, middle };
}

/**
 * Names tool-call ids where an API leaves them out (Gemini, Ollama): a call without one is
 * `<name>#<n>`, its occurrence among the conversation's calls of that name, and a result without
 * one answers the earliest unanswered call of its name (or the earliest of all when it names none).
 */
export class CallIds {
  readonly #seen = new Map<string, number>();
  readonly #open: Array<{ id: string; name: string }> = [];
  call(name: string, id?: string): string {
    const n = this.#seen.get(name) ?? 0;
    this.#seen.set(name, n + 1);
    const named = id ?? `${name}#${n}`;
    this.#open.push({ id: named, name });
    return named;
  }
  answer(name: string | undefined, id?: string): string | undefined {
    const at = this.#open.findIndex((c) => (id !== undefined ? c.id === id : name === undefined || c.name === name));
    if (at < 0) return id;
    return this.#open.splice(at, 1)[0]?.id;
  }
}

/** A tool's result handed back to the model: its text, and the call id and tool name when the API gives them. */
export function toolResultPart(text: string, callId: string | undefined, name: string | undefined): TurnPart {
  return {
    kind: 'tool-result',
    ...(callId === undefined ? {} : { callId }),
    ...(name === undefined ? {} : { name }),
    text,
  };
}
