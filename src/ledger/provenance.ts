// Context provenance (000 §18): split a model call's input across its sources with a local
// tokenizer (gpt-tokenizer, o200k), then scale so the parts sum to the provider's reported input.
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import type { ModelCalledPayload } from '../recording/types.js';
import { countPieceTokens } from './o200k.js';
import { asciiPieceEnd, isAsciiText } from './pretokenize.js';

export const CONTEXT_SOURCES = [
  'system_prompt',
  'skill_instruction',
  'user_instruction',
  'history',
  'memory',
  'tool_result',
  'retrieved_context',
  'artifact_context',
  'other_context',
] as const;
export type ContextSource = (typeof CONTEXT_SOURCES)[number];
export type ContextTokens = Record<ContextSource, number>;

/** One piece of a model call's input. Tool results carry the id of the tool call they answer. */
export interface ContextSegment {
  source: ContextSource;
  text: string;
  toolCallId?: string;
}

export function emptyContextTokens(): ContextTokens {
  return {
    system_prompt: 0,
    skill_instruction: 0,
    user_instruction: 0,
    history: 0,
    memory: 0,
    tool_result: 0,
    retrieved_context: 0,
    artifact_context: 0,
    other_context: 0,
  };
}

/**
 * Counts o200k tokens exactly as gpt-tokenizer's `countTokens` (pieces through ./o200k.ts, which
 * reads the same ranks without loading gpt-tokenizer's encoder), remembering every text it has seen
 * (a model call's history repeats the earlier messages, so each distinct message is counted once
 * per ledger). A text it has not seen is split with the tokenizer's own pre-tokenizer pattern (for
 * ASCII text, an equivalent scanner that allocates no piece strings: ./pretokenize.ts) and its
 * pieces' counts are summed: BPE never merges across those pieces, so the sum is the text's count,
 * and the few hundred distinct pieces of a run (JSON punctuation, keys, words, digit groups) are
 * each encoded once. A piece re-split on its own is itself (the pattern's only lookahead, `\s+(?!\S)`,
 * matches the same whitespace at the end of a string), which the tests check against `countTokens`.
 * Special-token text such as `<|endoftext|>` in a tool result counts as the plain text it is
 * (`countTokens` alone would throw on it).
 *
 * `new TokenCounter({ cache: false })` splits and counts every text afresh, for tests and comparisons.
 */
export class TokenCounter {
  readonly #memo = new Map<string, number>();
  readonly #pieces = new Map<string, number>();
  /** ASCII pieces by a hash of their characters, so a scanned piece needs no string of its own. */
  readonly #asciiPieces = new Map<number, Array<{ piece: string; count: number }>>();
  readonly #split = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'gu');
  readonly #cache: boolean;
  constructor(options: { cache?: boolean } = {}) {
    this.#cache = options.cache !== false;
  }
  count(text: string): number {
    if (text.length === 0) return 0;
    if (!this.#cache) return this.#countFresh(text);
    let n = this.#memo.get(text);
    if (n === undefined) {
      n = this.#countPieces(text);
      this.#memo.set(text, n);
    }
    return n;
  }
  #countPieces(text: string): number {
    return isAsciiText(text) ? this.#countAscii(text) : this.#countSplit(text);
  }
  #countAscii(text: string): number {
    let n = 0;
    for (let p = 0; p < text.length; ) {
      const end = asciiPieceEnd(text, p);
      let h = end - p;
      for (let i = p; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
      let bucket = this.#asciiPieces.get(h);
      let k: number | undefined;
      if (bucket) {
        for (const entry of bucket) {
          if (entry.piece.length === end - p && text.startsWith(entry.piece, p)) {
            k = entry.count;
            break;
          }
        }
      } else {
        bucket = [];
        this.#asciiPieces.set(h, bucket);
      }
      if (k === undefined) {
        const piece = text.slice(p, end);
        k = countPieceTokens(piece);
        bucket.push({ piece, count: k });
      }
      n += k;
      p = end;
    }
    return n;
  }
  #countSplit(text: string): number {
    const pieces = text.match(this.#split);
    if (pieces === null) return 0;
    let n = 0;
    for (const piece of pieces) {
      let k = this.#pieces.get(piece);
      if (k === undefined) {
        k = countPieceTokens(piece);
        this.#pieces.set(piece, k);
      }
      n += k;
    }
    return n;
  }
  #countFresh(text: string): number {
    let n = 0;
    for (const piece of text.match(this.#split) ?? []) n += countPieceTokens(piece);
    return n;
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Text of a message content: a string, or the text parts of an array of blocks. */
export function contentText(content: unknown): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(contentText).filter(Boolean).join('\n');
  if (isObj(content)) {
    const text = str(content.text) ?? str(content.input_text) ?? str(content.output_text);
    if (text !== undefined) return text;
    if ('content' in content) return contentText(content.content);
  }
  return JSON.stringify(content);
}

/**
 * The input segments of one model call, classified by source: system/developer messages (or the
 * payload's `system` when the messages carry none) are the system prompt; tool specs are skill
 * instructions; the first user text is the user instruction; later user and assistant turns are
 * history; tool results are tool results (the ledger re-labels them as retrieved context, memory or
 * artifact context from the state type of the tool step that produced them); the rest is other.
 */
export function contextSegments(call: ModelCalledPayload): ContextSegment[] {
  const segments: ContextSegment[] = [];
  const messages = call.messages;
  const hasSystemMessage = messages.some((m) => isObj(m) && (m.role === 'system' || m.role === 'developer'));
  if (!hasSystemMessage && call.system) segments.push({ source: 'system_prompt', text: call.system });
  if (call.tools && call.tools.length > 0)
    segments.push({ source: 'skill_instruction', text: JSON.stringify(call.tools) });
  let seenUser = false;
  const userText = (text: string): void => {
    if (!text) return;
    segments.push({ source: seenUser ? 'history' : 'user_instruction', text });
    seenUser = true;
  };
  for (const message of messages) {
    if (typeof message === 'string') {
      userText(message);
      continue;
    }
    if (!isObj(message)) continue;
    const type = str(message.type);
    if (type === 'function_call_output') {
      segments.push(toolSegment(contentText(message.output), str(message.call_id)));
      continue;
    }
    if (type === 'function_call') {
      segments.push({ source: 'history', text: `${str(message.name) ?? ''}${str(message.arguments) ?? ''}` });
      continue;
    }
    const role = str(message.role);
    if (role === 'system' || role === 'developer') {
      segments.push({ source: 'system_prompt', text: contentText(message.content) });
    } else if (role === 'tool') {
      segments.push(toolSegment(contentText(message.content), str(message.tool_call_id)));
    } else if (role === 'user') {
      if (Array.isArray(message.content)) {
        const texts: string[] = [];
        for (const block of message.content) {
          if (isObj(block) && block.type === 'tool_result') {
            segments.push(toolSegment(contentText(block.content), str(block.tool_use_id)));
          } else if (
            isObj(block) &&
            (block.type === 'image' || block.type === 'image_url' || block.type === 'document')
          ) {
            segments.push({ source: 'other_context', text: contentText(block) });
          } else {
            texts.push(contentText(block));
          }
        }
        userText(texts.join('\n'));
      } else {
        userText(contentText(message.content));
      }
    } else if (role === 'assistant') {
      let text = assistantText(message.content);
      if (Array.isArray(message.tool_calls)) {
        for (const call of message.tool_calls) text += `\n${toolCallText(call)}`;
      }
      segments.push({ source: 'history', text });
    } else {
      segments.push({ source: 'other_context', text: contentText(message.content ?? message) });
    }
  }
  return segments;
}

/** What the model wrote for a tool call: its name and arguments (ids and wrappers are not tokens it produced). */
function toolCallText(call: unknown): string {
  if (!isObj(call)) return '';
  const fn = isObj(call.function) ? call.function : call;
  const args = fn.arguments ?? fn.input;
  return `${str(fn.name) ?? ''}${typeof args === 'string' ? args : args === undefined ? '' : JSON.stringify(args)}`;
}

/** An assistant turn: its text, and tool_use blocks as name + input. */
function assistantText(content: unknown): string {
  if (!Array.isArray(content)) return contentText(content);
  return content
    .map((block) => (isObj(block) && block.type === 'tool_use' ? toolCallText(block) : contentText(block)))
    .filter(Boolean)
    .join('\n');
}

function toolSegment(text: string, toolCallId: string | undefined): ContextSegment {
  return toolCallId === undefined ? { source: 'tool_result', text } : { source: 'tool_result', text, toolCallId };
}

/**
 * Scales local counts so they sum exactly to `total` (largest remainder). With no local tokens,
 * the whole total is "other". @example scaleToTotal([1, 3], 8) // [2, 6]
 */
export function scaleToTotal(counts: readonly number[], total: number): number[] {
  const sum = counts.reduce((a, b) => a + b, 0);
  if (counts.length === 0) return [];
  if (sum === 0) return counts.map((_, i) => (i === counts.length - 1 ? total : 0));
  const floors = new Array<number>(counts.length);
  const fractions = new Array<number>(counts.length);
  let left = total;
  for (let i = 0; i < counts.length; i++) {
    const exact = ((counts[i] as number) * total) / sum;
    const floor = Math.floor(exact);
    floors[i] = floor;
    fractions[i] = exact - floor;
    left -= floor;
  }
  // The remainder goes one token each to the largest fractions (ties: the earlier source).
  for (; left > 0; left--) {
    let best = -1;
    for (let i = 0; i < fractions.length; i++) {
      if (best === -1 || (fractions[i] as number) > (fractions[best] as number)) best = i;
    }
    if (best === -1 || (fractions[best] as number) < 0) break;
    floors[best] = (floors[best] as number) + 1;
    fractions[best] = -1;
  }
  return floors;
}

/** Sums local token counts of segments into the nine sources, scaled to `providerInput` when known. */
export function contextBreakdown(
  counted: ReadonlyArray<{ source: ContextSource; tokens: number }>,
  providerInput: number | undefined,
): ContextTokens {
  const local = emptyContextTokens();
  for (const s of counted) local[s.source] += s.tokens;
  if (providerInput === undefined) return local;
  return scaleContext(local, providerInput);
}

/** Local counts by source scaled (largest remainder) to sum exactly to the provider's input. */
export function scaleContext(local: ContextTokens, providerInput: number): ContextTokens {
  const scaled = scaleToTotal(
    CONTEXT_SOURCES.map((k) => local[k]),
    providerInput,
  );
  const out = emptyContextTokens();
  CONTEXT_SOURCES.forEach((k, i) => {
    out[k] = scaled[i] ?? 0;
  });
  return out;
}
