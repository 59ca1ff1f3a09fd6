import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { aggregate, costPerResolvedTask, pareto, passAtK, passHatK } from './aggregate.js';
import type { EvalTaskResult } from './evaluate.js';

/** C(n, k) exactly, with BigInt. */
function binom(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let r = 1n;
  for (let i = 1; i <= k; i++) r = (r * BigInt(n - k + i)) / BigInt(i);
  return r;
}

/** 1 - C(n-c,k)/C(n,k) in exact rational arithmetic, rounded to a double at the end. */
function exactPassAtK(n: number, c: number, k: number): number {
  const num = binom(n - c, k);
  const den = binom(n, k);
  const scale = 10n ** 30n;
  return 1 - Number((num * scale) / den) / 1e30;
}

describe('passAtK', () => {
  it('reproduces the seed: pass@2 for n=20, c=5 is 0.447', () => {
    expect(passAtK(20, 5, 2)).toBeCloseTo(0.447, 3);
    expect(passAtK(20, 5, 2)).toBeCloseTo(1 - (15 / 20) * (14 / 19), 12);
  });

  it('is the per-attempt rate at k=1 and 1 when n-c < k', () => {
    expect(passAtK(20, 5, 1)).toBeCloseTo(0.25, 12);
    expect(passAtK(10, 8, 3)).toBe(1);
    expect(passAtK(10, 0, 3)).toBe(0);
  });

  it('stays exact for n=500 where factorials overflow (against BigInt combinatorics)', () => {
    for (const [c, k] of [
      [1, 1],
      [5, 10],
      [50, 100],
      [250, 8],
      [490, 5],
      [3, 400],
    ] as const) {
      expect(Math.abs(passAtK(500, c, k) - exactPassAtK(500, c, k))).toBeLessThan(1e-12);
    }
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 0, max: 500 }),
        fc.integer({ min: 1, max: 500 }),
        (n, c0, k0) => {
          const c = c0 % (n + 1);
          const k = 1 + (k0 % n);
          const p = passAtK(n, c, k);
          expect(p).toBeGreaterThanOrEqual(0);
          expect(p).toBeLessThanOrEqual(1);
          expect(Math.abs(p - exactPassAtK(n, c, k))).toBeLessThan(1e-9);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('rejects counts that make no sense', () => {
    expect(() => passAtK(5, 6, 1)).toThrow(RangeError);
    expect(() => passAtK(5, 1, 6)).toThrow(RangeError);
  });
});

describe('passHatK', () => {
  it('is C(c,k)/C(n,k): the chance k draws all pass', () => {
    expect(passHatK(20, 5, 2)).toBeCloseTo((5 / 20) * (4 / 19), 12);
    expect(passHatK(20, 1, 2)).toBe(0);
    expect(passHatK(20, 20, 7)).toBe(1);
    expect(passHatK(500, 400, 50)).toBeCloseTo(Number((binom(400, 50) * 10n ** 30n) / binom(500, 50)) / 1e30, 12);
  });
});

describe('cost per resolved task', () => {
  it('reproduces the seed: 0.54 / 0.65 = 0.83', () => {
    expect(costPerResolvedTask(0.54, 0.65)).toBeCloseTo(0.83, 2);
    expect(costPerResolvedTask(0.54, 0)).toBe(Number.POSITIVE_INFINITY);
  });
});

function result(over: Partial<EvalTaskResult>): EvalTaskResult {
  return {
    evalId: 'e',
    taskId: 't1',
    traceId: 'tr',
    agentId: null,
    skillId: null,
    hardSuccess: true,
    outcomeScore: 8,
    completenessScore: 10,
    evidenceValidityScore: 10,
    evidenceConsistencyScore: 10,
    methodologyScore: 10,
    readabilityScore: 10,
    executionSuccessScore: 10,
    primaryFailureReasonCode: null,
    failureReasonCodes: [],
    evaluatorVersion: 'v',
    evalContractVersion: '1',
    primaryFailureStepId: null,
    primaryFailureMessage: null,
    trajectoryFailureClasses: [],
    stateChangeScore: 10,
    totalTokens: 0,
    cost: 0.54,
    ...over,
  };
}

describe('aggregate', () => {
  it('computes success rate, outcome score over passed runs, cost per resolved task and the failure Pareto', () => {
    const runs = [
      result({ outcomeScore: 9 }),
      result({ outcomeScore: 7 }),
      result({
        hardSuccess: false,
        outcomeScore: 2,
        primaryFailureReasonCode: 'WRONG_EXECUTION_TARGET',
        trajectoryFailureClasses: ['hallucinated_state'],
      }),
      result({ hardSuccess: false, outcomeScore: 3, primaryFailureReasonCode: 'WRONG_EXECUTION_TARGET' }),
      result({
        hardSuccess: false,
        outcomeScore: 1,
        primaryFailureReasonCode: 'DUPLICATE_EXECUTION',
        trajectoryFailureClasses: ['loop'],
      }),
    ];
    const a = aggregate(runs, { k: [1, 2] });
    expect(a.taskSuccessRate).toBeCloseTo(0.4);
    expect(a.averageOutcomeScore).toBeCloseTo(8);
    expect(a.costPerResolvedTask).toBeCloseTo(0.54 / 0.4);
    expect(a.tasks[0]).toMatchObject({ n: 5, c: 2 });
    expect(a.tasks[0]!.passAtK[2]).toBeCloseTo(1 - (3 / 5) * (2 / 4));
    expect(a.failurePareto.map((b) => [b.key, b.count])).toEqual([
      ['WRONG_EXECUTION_TARGET', 2],
      ['DUPLICATE_EXECUTION', 1],
    ]);
    expect(a.failurePareto[1]!.cumulativeShare).toBe(1);
    expect(pareto(['a', 'b', 'a'])[0]).toEqual({ key: 'a', count: 2, share: 2 / 3, cumulativeShare: 2 / 3 });
  });
});
