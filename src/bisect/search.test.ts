import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Verdict } from './predicate.js';
import { bisectRange, evaluationBound } from './search.js';

const monotone = (firstBad: number) => async (at: number) => ({
  verdict: (at >= firstBad ? 'bad' : 'good') as Verdict,
  result: at,
});

describe('bisectRange', () => {
  it('finds the first bad index of any monotone sequence within ceil(log2 N)+1 evaluations', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 300 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 1, max: n }))),
        async ([n, bad]) => {
          const result = await bisectRange(1, n, monotone(bad), { good: 0 });
          expect(result.firstBad).toBe(bad);
          expect(result.evaluations).toBeLessThanOrEqual(evaluationBound(n));
          expect(result.maxEvaluations).toBe(evaluationBound(n));
        },
      ),
    );
  });

  it('reports nothing to find when the last index is good, after one evaluation', async () => {
    const result = await bisectRange(1, 50, monotone(51), { good: 0 });
    expect(result.firstBad).toBeUndefined();
    expect(result.evaluations).toBe(1);
    expect(result.path[0]?.at).toBe(50);
  });

  it('probes a neighbour when a step answers skip, and still finds the boundary', async () => {
    const evaluate = async (at: number) => ({
      verdict: (at === 8 ? 'skip' : at >= 11 ? 'bad' : 'good') as Verdict,
      result: at,
    });
    const result = await bisectRange(1, 16, evaluate, { good: 0 });
    expect(result.firstBad).toBe(11);
    expect(result.path.some((p) => p.verdict === 'skip')).toBe(true);
  });

  it('names every candidate when skipped steps hide the boundary', async () => {
    const evaluate = async (at: number) => ({
      verdict: (at === 4 || at === 5 ? 'skip' : at >= 5 ? 'bad' : 'good') as Verdict,
      result: at,
    });
    const result = await bisectRange(1, 8, evaluate, { good: 0 });
    expect(result.firstBad).toBeUndefined();
    expect(result.candidates).toEqual([4, 5, 6]);
  });

  it('does not evaluate a step given as known bad', async () => {
    const seen: number[] = [];
    const result = await bisectRange(
      1,
      32,
      async (at) => {
        seen.push(at);
        return monotone(9)(at);
      },
      { good: 0, bad: 20 },
    );
    expect(result.firstBad).toBe(9);
    expect(seen).not.toContain(20);
  });
});
