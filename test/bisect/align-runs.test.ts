import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alignRuns, builtinPredicate, compareDivergence } from '../../src/bisect/index.js';
import { readRecording } from '../../src/recording/index.js';
import { baselineRun, doubleBookingRun, fixedRun, RunBuilder } from './fixtures.js';

const example = (name: string) => readRecording(resolve(import.meta.dirname, '../../recordings/examples', name));

describe('alignRuns', () => {
  it('finds where the fixed run parts from the baseline: an extra booking step', async () => {
    const alignment = alignRuns(await baselineRun(), await fixedRun());
    expect(alignment.firstDivergence).toEqual({ kind: 'extra-step', stepB: 5 });
    expect(alignment.distance).toBe(2);
    expect(alignment.similarity).toBeCloseTo(1 - 2 / 7);
  });

  it('a run aligned with itself is identical', async () => {
    const alignment = alignRuns(await baselineRun(), await baselineRun());
    expect(alignment.firstDivergence).toBeUndefined();
    expect(alignment.similarity).toBe(1);
  });

  it('a different booking decision is other arguments', async () => {
    const alignment = alignRuns(await baselineRun(), await doubleBookingRun());
    expect(alignment.firstDivergence).toMatchObject({ kind: 'other-arguments', stepA: 3, stepB: 3 });
  });
});

describe('a decision that calls the same tools otherwise', () => {
  /** A run whose one model step decides `calls`, then answers. */
  const decides = (id: string, calls: Array<{ name: string; args: unknown }>) =>
    new RunBuilder('You are a stock desk.', 'Restock W-1.', undefined).model(calls).model([], 'Done.').build(id);

  // Parallel calls: the model restocked two SKUs at once in one run, one in the other.
  it.each([
    ['fewer calls of it', [{ name: 'restock', args: { sku: 'W-1', qty: 50 } }], 'other-arguments'],
    [
      'as many, other arguments',
      [
        { name: 'restock', args: { sku: 'W-1', qty: 50 } },
        { name: 'restock', args: { sku: 'W-2', qty: 1 } },
      ],
      'other-arguments',
    ],
    [
      'another tool beside it',
      [
        { name: 'restock', args: { sku: 'W-1', qty: 5 } },
        { name: 'audit', args: { sku: 'W-1' } },
      ],
      'other-tool',
    ],
  ] as const)('parts by other arguments when it calls the same tools, %s', async (_, calls, kind) => {
    const a = await decides('two', [
      { name: 'restock', args: { sku: 'W-9', qty: 2 } },
      { name: 'restock', args: { sku: 'W-1', qty: 5 } },
    ]);
    const b = await decides('one', [...calls]);
    expect(alignRuns(a, b).firstDivergence).toEqual({ kind, stepA: 1, stepB: 1 });
  });
});

describe('alignRuns on the example recordings', () => {
  it('the OpenAI and Anthropic agents take the same actions; the fixed prompt parts from the baseline at step 3', async () => {
    const openai = await example('openai-baseline');
    expect(alignRuns(openai, await example('anthropic-baseline-stream')).similarity).toBe(1);
    const fixed = alignRuns(openai, await example('anthropic-fixed'));
    expect(fixed.firstDivergence).toEqual({ kind: 'other-tool', stepA: 3, stepB: 3 });
  });
});

describe('compareDivergence', () => {
  it('reports the divergence gone when the replay with the fixed prompt is good', async () => {
    const shift = await compareDivergence(await baselineRun(), await fixedRun(), () => builtinPredicate('all'));
    expect(shift.verdict).toBe('disappeared');
    expect(shift.baseline.firstBad?.step).toBe(5);
    expect(shift.replay.firstBad).toBeUndefined();
    expect(shift.summary).toMatch(/divergence at baseline step 5 .* is gone/);
  });

  it('reports a divergence that stayed at the same step', async () => {
    const shift = await compareDivergence(await baselineRun(), await baselineRun(), () => builtinPredicate('claims'));
    expect(shift.verdict).toBe('stayed');
  });

  it('reports a divergence that moved', async () => {
    const shift = await compareDivergence(await baselineRun(), await doubleBookingRun(), () => builtinPredicate('all'));
    expect(shift.verdict).toBe('moved');
    expect(shift.replay.firstBad?.step).toBe(6);
  });

  // A replay that stopped before the baseline's bad step (its agent failed on a missing variable,
  // ran out of time, was interrupted) judged no such step: it cannot show the divergence gone.
  it.each(['failed', 'timed-out', 'interrupted', 'incomplete'] as const)(
    'a replay that stopped (%s) before the baseline diverges leaves the verdict unfinished',
    async (status) => {
      const fixed = await fixedRun();
      for (const upTo of [0, 4]) {
        const stopped = {
          ...fixed,
          manifest: { ...fixed.manifest, status },
          events: fixed.events.filter((e) => e.stepId <= upTo && e.type !== 'run.completed'),
        };
        const shift = await compareDivergence(await baselineRun(), stopped, () => builtinPredicate('all'));
        expect(shift.verdict).toBe('unfinished');
        expect(shift.summary).toContain(`the replay stopped (${status}) after ${upTo === 0 ? 'no step' : 'step 4'}`);
        expect(shift.summary).toContain('before baseline step 5');
      }
      // Past the baseline's bad step, a failed replay does show it gone.
      const failedLate = { ...fixed, manifest: { ...fixed.manifest, status } };
      const late = await compareDivergence(await baselineRun(), failedLate, () => builtinPredicate('all'));
      expect(late.verdict).toBe('disappeared');
    },
  );
});
