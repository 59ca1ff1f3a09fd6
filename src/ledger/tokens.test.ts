import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { llmCost } from './cost.js';
import { bucketsFromOtel, inputTotal, otelView, seedView, type TokenBuckets, totalTokens } from './tokens.js';

const buckets = fc.record({
  uncachedInput: fc.nat(1e7),
  cacheRead: fc.nat(1e7),
  cacheWrite: fc.nat(1e7),
  output: fc.nat(1e6),
  reasoning: fc.nat(1e6),
}) as fc.Arbitrary<TokenBuckets>;

describe('token views never count cached tokens twice', () => {
  it('derives the OpenTelemetry view (input includes cached) and gets the same buckets back', () => {
    fc.assert(
      fc.property(buckets, (b) => {
        expect(bucketsFromOtel(otelView(b))).toEqual(b);
      }),
    );
  });

  it('agrees on totals: OTel input + output equals the seed total, cached is counted once', () => {
    fc.assert(
      fc.property(buckets, (b) => {
        const otel = otelView(b);
        const seed = seedView(b);
        expect(otel['gen_ai.usage.input_tokens'] + otel['gen_ai.usage.output_tokens']).toBe(seed.total_tokens);
        expect(seed.input_tokens_uncached + seed.input_tokens_cached).toBe(seed.input_tokens_total);
        expect(seed.input_tokens_total).toBe(inputTotal(b));
        expect(seed.total_tokens).toBe(totalTokens(b));
        expect(otel['gen_ai.usage.cache_read.input_tokens']).toBe(seed.input_tokens_cached);
      }),
    );
  });

  it('bills each bucket at its own price (§20), cache writes at the cache-write price', () => {
    const cost = llmCost(
      { uncachedInput: 1_000_000, cacheRead: 2_000_000, cacheWrite: 1_000_000, output: 500_000, reasoning: 100_000 },
      { model: 'm', inputPerMillion: 3, cachedInputPerMillion: 0.3, cacheWritePerMillion: 3.75, outputPerMillion: 15 },
    );
    expect(cost.uncachedInput).toBeCloseTo(3);
    expect(cost.cacheRead).toBeCloseTo(0.6);
    expect(cost.cacheWrite).toBeCloseTo(3.75);
    expect(cost.output).toBeCloseTo(7.5);
    expect(cost.reasoning).toBeCloseTo(1.5);
    expect(cost.total).toBeCloseTo(3 + 0.6 + 3.75 + 7.5 + 1.5);
  });
});
