// Context provenance (000 §18): split a model call's input across its sources with a local
// tokenizer (gpt-tokenizer, o200k), then scale so the parts sum to the provider's reported input.
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { turnsOf } from '../providers/index.js';
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
 * Every counter splits with gpt-tokenizer's own regex object (no copy per counter: compiling the
 * pattern costs ~2 ms); `match` with a /g regex starts at 0 and leaves no state behind.
 */
export class TokenCounter {
  readonly #memo = new Map<string, number>();
  readonly #pieces = new Map<string, number>();
  /** ASCII pieces by a hash of their characters, so a scanned piece needs no string of its own. */
  readonly #asciiPieces = new Map<number, Array<{ piece: string; count: number }>>();
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
    const pieces = text.match(O200K_TOKEN_SPLIT_REGEX);
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
    for (const piece of text.match(O200K_TOKEN_SPLIT_REGEX) ?? []) n += countPieceTokens(piece);
    return n;
  }
}

/**
 * The input segments of one model call, classified by source: system turns are the system prompt;
 * tool specs are skill instructions; the first user text is the user instruction; later user and
 * assistant turns are history; tool results are tool results (the ledger re-labels them as
 * retrieved context, memory or artifact context from the state type of the tool step that
 * produced them); media and anything else are other. The turns come from the call's provider
 * (src/providers), so every provider's shapes are read the same way.
 */
export function contextSegments(call: ModelCalledPayload): ContextSegment[] {
  const segments: ContextSegment[] = [];
  if (call.tools && call.tools.length > 0)
    segments.push({ source: 'skill_instruction', text: JSON.stringify(call.tools) });
  let seenUser = false;
  for (const turn of turnsOf(call)) {
    const texts: string[] = [];
    for (const part of turn.parts) {
      if (part.kind === 'tool-result') segments.push(toolSegment(part.text, part.callId));
      else if (part.kind === 'media') segments.push({ source: 'other_context', text: part.text });
      // What the model wrote for a tool call: its name and arguments (ids and wrappers are not tokens it produced).
      else if (part.kind === 'tool-call') texts.push(`${part.name}${part.arguments}`);
      else texts.push(part.text);
    }
    const text = texts.filter(Boolean).join('\n');
    if (turn.role === 'system') segments.push({ source: 'system_prompt', text });
    else if (turn.role === 'user') {
      if (!text) continue;
      segments.push({ source: seenUser ? 'history' : 'user_instruction', text });
      seenUser = true;
    } else if (turn.role === 'assistant') segments.push({ source: 'history', text });
    else if (turn.role === 'tool') {
      if (text) segments.push({ source: 'tool_result', text });
    } else segments.push({ source: 'other_context', text });
  }
  return segments;
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
