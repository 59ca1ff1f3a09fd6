// Seed 000 §24 end to end: a recorded run with the example's token totals gives its cache hit
// ratio (59.1%), and a 300-token instruction grown to 142,000 input tokens an input
// amplification of 473.3×.
import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { buildLedger, contextSegments, type PriceTable } from '../../src/ledger/index.js';
import type { ModelCalledPayload, Usage } from '../../src/recording/types.js';
import { syntheticRecording } from './synthetic.js';

const MODEL_X: PriceTable = {
  version: '2026-04-28',
  currency: 'RMB',
  models: [
    {
      model: 'model_x',
      inputPerMillion: 10,
      cachedInputPerMillion: 2.5,
      outputPerMillion: 30,
      reasoningPerMillion: 30,
    },
  ],
};

/** A user instruction of exactly `n` tokens. */
function instructionOf(n: number): string {
  const text = `Book${' flight'.repeat(n - 1)}`;
  expect(countTokens(text)).toBe(n);
  return text;
}

describe('§24 cost profile from a recording', () => {
  it('reproduces 59.1% cached input and 473.3× input amplification', () => {
    const userInstruction = instructionOf(300);
    const base = { tools: 4, model: 'model_x', userInstruction, id: 'task_20260428_001' };
    // The first call's usage equals its local token count, so its provenance split is exact.
    const first = syntheticRecording(base).events.find((e) => e.type === 'model.called')?.payload as ModelCalledPayload;
    const firstInput = contextSegments(first).reduce((n, s) => n + countTokens(s.text), 0);
    const rest = 58000 - firstInput;
    const usage = (i: number): Usage => ({
      inputUncached: i === 0 ? firstInput : Math.floor(rest / 4) + (i === 4 ? rest % 4 : 0),
      cacheRead: i === 0 ? 0 : 21000,
      cacheWrite: 0,
      output: 8800,
      reasoning: 0,
    });
    const ledger = buildLedger(syntheticRecording({ ...base, usage }), { prices: MODEL_X });
    const p = ledger.costProfile;
    expect(p.total_input_tokens).toBe(142000);
    expect(p.total_uncached_input_tokens).toBe(58000);
    expect(p.total_cached_input_tokens).toBe(84000);
    expect(p.total_output_tokens).toBe(44000);
    expect(p.total_tokens).toBe(186000);
    expect(p.conclusion).toContain('Cached input tokens represented 59.1% of total input tokens');
    expect(ledger.metrics.userInstructionTokens).toBe(300);
    expect(ledger.metrics.inputAmplification?.toFixed(1)).toBe('473.3');
    expect(p.conclusion).toContain('expanded its instruction 473.3×');
    // §20 by hand: 58,000 × 10 + 84,000 × 2.5 + 44,000 × 30 per million = 2.11 RMB; §33 saving 0.63 RMB.
    expect(p.total_cost).toBeCloseTo(2.11, 10);
    expect(p.currency).toBe('RMB');
    expect(ledger.metrics.cacheSaving).toBeCloseTo(0.63, 10);
  });
});
