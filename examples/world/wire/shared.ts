// What every wire format of the FAKE model server shares: the reply shape, the usage it means to
// report (in tapedeck's buckets, so tests can check a decoder against the server's intent rather
// than against another decoder), and the text helpers.
import type { Conversation, Decision } from '../fake-policy.js';

export type Obj = Record<string, unknown>;

/** A world's scripted model: the next move given the conversation so far. Pure and deterministic. */
export type ScriptedPolicy = (conversation: Conversation) => Decision;

/** What the server meant to say, in provider-independent terms; logged beside each exchange. */
export interface Meant {
  model: string;
  text?: string;
  toolCalls: Array<{ name: string; arguments: string }>;
  usage: { inputUncached: number; cacheRead: number; cacheWrite: number; output: number; reasoning: number };
}

export interface Reply {
  json(): unknown;
  /** The streamed answer as SSE text (events separated by a blank line). */
  sse(): string;
  /** A stream framed otherwise (NDJSON, AWS event stream): its content type and the parts written in turn. */
  stream?(): { contentType: string; parts: Array<string | Uint8Array> };
  meant: Meant;
}

/** One wire API the server speaks: which requests it takes and how it answers them. */
export interface Wire {
  /** The `api` name in the exchange log. */
  api: string;
  /** Whether this wire serves `POST path` (query string excluded); `stream` when the path itself asks for a stream. */
  route(path: string): { stream?: boolean } | undefined;
  /** Whether a body without `stream` is streamed (Ollama's API: yes; the others: no). */
  streamsByDefault?: boolean;
  reply(body: Obj, ctx: { hash: string; path: string; policy: ScriptedPolicy }): Reply;
  /** Why the API would refuse this request before reading it (a bad signature): a 403 with that message. */
  refuse?(request: {
    method: string;
    path: string;
    query: string;
    headers: Record<string, string>;
    raw: Buffer;
  }): Promise<string | undefined>;
}

/** A fixed creation time (2026-11-24T09:00:00Z) so responses are byte-identical across runs. */
export const CREATED = 1795510800;

/** Tokens are a length measure: one per 4 characters, rounded up. */
export function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: Obj) => (typeof part.text === 'string' ? part.text : typeof part === 'string' ? part : ''))
      .join('');
  }
  return '';
}

export function parseArgs(text: unknown): Obj {
  if (typeof text !== 'string') return (text ?? {}) as Obj;
  try {
    return JSON.parse(text) as Obj;
  } catch {
    return {};
  }
}

/** Split a string into pieces of `size` characters (tool-call arguments arrive in several deltas). */
export function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [''];
}

/** Text deltas at word boundaries, a few words each. */
export function wordPieces(text: string): string[] {
  const words = text.split(/(?<= )/);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 3) out.push(words.slice(i, i + 3).join(''));
  return out.length > 0 ? out : [''];
}

export function prefixTokens(system: unknown, tools: unknown): number {
  return tokens(JSON.stringify({ system, tools: tools ?? [] }));
}

/** What the model "wrote": the final text, or what it said plus each call's name and arguments. */
export function outputText(decision: Decision): string {
  return decision.kind === 'final'
    ? decision.text
    : `${decision.say}${decision.calls.map((c) => `${c.name}${JSON.stringify(c.args)}`).join('')}`;
}

/** Fake reasoning: a few "thinking" tokens per decision, more for tool calls. */
export function reasoningTokens(decision: Decision): number {
  return decision.kind === 'tool_calls' ? 16 * decision.calls.length : 8;
}
