// Token buckets: the provider's usage kept split (never double counted), and the two views
// derived from it — the seed's/split view and the OpenTelemetry view (input includes cached).
import type { Usage } from '../recording/types.js';

/** Separate, disjoint buckets. Input total = uncachedInput + cacheRead + cacheWrite. */
export interface TokenBuckets {
  /** Fresh input tokens, neither read from nor written to the prompt cache. */
  uncachedInput: number;
  /** Input tokens served from the prompt cache. */
  cacheRead: number;
  /** Input tokens written to the prompt cache (billed at the cache-write price when there is one). */
  cacheWrite: number;
  /**
   * Of cacheWrite, the tokens written for 1 hour (Anthropic's `ttl: "1h"`), billed at the 1-hour
   * write price; not a bucket of its own (never added to a total). Absent when none.
   */
  cacheWrite1h?: number;
  /** Visible output tokens (reasoning excluded). */
  output: number;
  /** Reasoning tokens, when the provider reports them. */
  reasoning: number;
}

export const ZERO_BUCKETS: Readonly<TokenBuckets> = Object.freeze({
  uncachedInput: 0,
  cacheRead: 0,
  cacheWrite: 0,
  output: 0,
  reasoning: 0,
});

export function bucketsFromUsage(usage: Usage | undefined): TokenBuckets {
  if (!usage) return { ...ZERO_BUCKETS };
  return {
    uncachedInput: usage.inputUncached,
    cacheRead: usage.cacheRead,
    cacheWrite: usage.cacheWrite,
    ...(usage.cacheWrite1h ? { cacheWrite1h: Math.min(usage.cacheWrite1h, usage.cacheWrite) } : {}),
    output: usage.output,
    reasoning: usage.reasoning,
  };
}

export function addBuckets<T extends TokenBuckets>(into: T, add: TokenBuckets): T {
  into.uncachedInput += add.uncachedInput;
  into.cacheRead += add.cacheRead;
  into.cacheWrite += add.cacheWrite;
  if (add.cacheWrite1h) into.cacheWrite1h = (into.cacheWrite1h ?? 0) + add.cacheWrite1h;
  into.output += add.output;
  into.reasoning += add.reasoning;
  return into;
}

export function inputTotal(b: TokenBuckets): number {
  return b.uncachedInput + b.cacheRead + b.cacheWrite;
}

/** The seed's total_tokens: Σ input_tokens_total + Σ output_tokens + Σ reasoning_tokens (§30). */
export function totalTokens(b: TokenBuckets): number {
  return inputTotal(b) + b.output + b.reasoning;
}

/**
 * The seed's view (§17): input_tokens_cached = served from cache; input_tokens_uncached =
 * everything else, so cache writes are uncached (they are counted once, in uncached, and
 * also shown on their own in input_tokens_cache_write).
 */
export interface SeedTokenView {
  input_tokens_total: number;
  input_tokens_uncached: number;
  input_tokens_cached: number;
  input_tokens_cache_write: number;
  output_tokens: number;
  reasoning_tokens: number;
  total_tokens: number;
}

export function seedView(b: TokenBuckets): SeedTokenView {
  return {
    input_tokens_total: inputTotal(b),
    input_tokens_uncached: b.uncachedInput + b.cacheWrite,
    input_tokens_cached: b.cacheRead,
    input_tokens_cache_write: b.cacheWrite,
    output_tokens: b.output,
    reasoning_tokens: b.reasoning,
    total_tokens: totalTokens(b),
  };
}

/**
 * The OpenTelemetry GenAI view: `gen_ai.usage.input_tokens` INCLUDES cached tokens, the cache
 * attributes are subsets of it, and output includes reasoning (as OpenAI's completion_tokens does).
 */
export interface OtelTokenView {
  'gen_ai.usage.input_tokens': number;
  'gen_ai.usage.cache_read.input_tokens': number;
  'gen_ai.usage.cache_creation.input_tokens': number;
  'gen_ai.usage.output_tokens': number;
  'gen_ai.usage.reasoning.output_tokens': number;
}

export function otelView(b: TokenBuckets): OtelTokenView {
  return {
    'gen_ai.usage.input_tokens': inputTotal(b),
    'gen_ai.usage.cache_read.input_tokens': b.cacheRead,
    'gen_ai.usage.cache_creation.input_tokens': b.cacheWrite,
    'gen_ai.usage.output_tokens': b.output + b.reasoning,
    'gen_ai.usage.reasoning.output_tokens': b.reasoning,
  };
}

/** Back from the OpenTelemetry view to disjoint buckets (subtracting the subsets once). */
export function bucketsFromOtel(v: OtelTokenView): TokenBuckets {
  return {
    uncachedInput:
      v['gen_ai.usage.input_tokens'] -
      v['gen_ai.usage.cache_read.input_tokens'] -
      v['gen_ai.usage.cache_creation.input_tokens'],
    cacheRead: v['gen_ai.usage.cache_read.input_tokens'],
    cacheWrite: v['gen_ai.usage.cache_creation.input_tokens'],
    output: v['gen_ai.usage.output_tokens'] - v['gen_ai.usage.reasoning.output_tokens'],
    reasoning: v['gen_ai.usage.reasoning.output_tokens'],
  };
}
