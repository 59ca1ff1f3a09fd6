import { describe, expect, it } from 'vitest';
import {
  cacheHitRatio,
  cacheSaving,
  costPerResolvedTask,
  formatPercent,
  inputAmplification,
  refinementEfficiency,
  retrievalCompression,
  toolContextRatio,
  validationRepairRate,
} from './metrics.js';
import { buildCostProfile, mainCostSources } from './profile.js';

// The seed's §24 example run.
const SECTION_24 = {
  traceId: 'task_20260428_001',
  tokens: {
    input_tokens_total: 142000,
    input_tokens_uncached: 58000,
    input_tokens_cached: 84000,
    input_tokens_cache_write: 0,
    output_tokens: 44000,
    reasoning_tokens: 0,
    total_tokens: 186000,
  },
  totalCost: 3.82,
  currency: 'RMB',
  totalLatencyMs: 126000,
  costByState: { THINK: 0.42, RETRIEVE: 1.28, DB_QUERY: 0.36, VALIDATE: 0.74, REFINE: 0.61, FINALIZE: 0.41 },
  tokenByState: { THINK: 22000, RETRIEVE: 64000, DB_QUERY: 18000, VALIDATE: 38000, REFINE: 26000, FINALIZE: 18000 },
};

describe('derived metrics (seed 000 Part VII)', () => {
  it('reproduces the §24 cache hit ratio of 59.1%', () => {
    expect(formatPercent(cacheHitRatio(84000, 142000))).toBe('59.1%');
  });

  it('reproduces the §36 input amplification of 473.3x', () => {
    expect(inputAmplification(142000, 300)?.toFixed(1)).toBe('473.3');
  });

  it('computes cache saving from the price difference', () => {
    expect(cacheSaving(84000, 10, 2.5)).toBeCloseTo(0.63, 10);
  });

  it('computes the ratio metrics and leaves undefined ratios null', () => {
    expect(toolContextRatio(1800, 9000)).toBeCloseTo(0.2);
    expect(retrievalCompression(5000, 52000)).toBeCloseTo(5000 / 52000);
    expect(validationRepairRate(2, 3)).toBeCloseTo(2 / 3);
    expect(refinementEfficiency(1200, 1800)).toBeCloseTo(2 / 3);
    expect(cacheHitRatio(0, 0)).toBeNull();
    expect(inputAmplification(100, 0)).toBeNull();
    expect(validationRepairRate(0, 0)).toBeNull();
  });

  it('divides mean run cost by the resolution rate (001 §6.6: 0.54 at 65% is 0.83 per resolved task)', () => {
    const runs = Array.from({ length: 20 }, (_, i) => ({ cost: 0.54, resolved: i < 13 }));
    expect(costPerResolvedTask(runs)?.toFixed(2)).toBe('0.83');
    expect(costPerResolvedTask([{ cost: 1, resolved: false }])).toBeNull();
  });
});

describe('cost profile (§24)', () => {
  it('names RETRIEVE, VALIDATE and REFINE as the main cost sources', () => {
    expect(mainCostSources(SECTION_24.costByState)).toEqual(['RETRIEVE', 'VALIDATE', 'REFINE']);
  });

  it('writes the seed example conclusion from the totals', () => {
    const profile = buildCostProfile(SECTION_24);
    expect(profile.cache_hit_ratio?.toFixed(3)).toBe('0.592');
    expect(profile.total_tokens).toBe(186000);
    expect(profile.main_cost_sources).toEqual(['RETRIEVE', 'VALIDATE', 'REFINE']);
    expect(profile.conclusion).toBe(
      'The run cost 3.82 RMB. The dominant cost sources were retrieved context entering the LLM context, validation, and refinement. Cached input tokens represented 59.1% of total input tokens, indicating that fixed Skill instructions and historical context benefited from caching.',
    );
  });
});
