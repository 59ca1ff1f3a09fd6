import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  beliefAt,
  bisectBelief,
  builtinPredicate,
  checkMonotone,
  evaluationBound,
  functionPredicate,
  loadJsPredicate,
  shellPredicate,
  worldAtStep,
} from '../../src/bisect/index.js';
import type { World } from '../../src/bisect/view.js';
import { baselineRun, doubleBookingRun, fixedRun, itineraryRun, longRun } from './fixtures.js';

const scratch = mkdtempSync(join(tmpdir(), 'tapedeck-bisect-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('belief and world at a step', () => {
  it('collects the task, the observations, the claims and the actions of the prefix', async () => {
    const belief = beliefAt(await baselineRun(), 4);
    expect(belief.given.join('\n')).toContain('Book Ana Lopez');
    expect(belief.actions.map((a) => [a.step, a.name, a.completed])).toEqual([
      [2, 'search_flights', true],
      [4, 'book_flight', false],
    ]);
    expect(belief.claims).toEqual([]);
    expect(beliefAt(await baselineRun(), 5).claims[0]?.text).toContain('I booked Ana Lopez');
  });

  it('time-travels the database: the booking exists from the step that inserted it', async () => {
    const run = await fixedRun();
    const rows = (k: number) => worldAtStep(run, k).db?.tables.find((t) => t.name === 'bookings')?.rows ?? [];
    expect(rows(5)).toEqual([]);
    expect(rows(6)).toEqual([{ id: 'BK-1', flight_id: 'FL200', passenger: 'Ana Lopez', status: 'confirmed' }]);
  });
});

describe('built-in predicates', () => {
  it('claims: finds the step where the agent says it booked a flight the world never booked', async () => {
    const progress: number[] = [];
    const result = await bisectBelief(await baselineRun(), builtinPredicate('claims'), {
      onProgress: (p) => progress.push(p.step),
    });
    expect(result.firstBad?.step).toBe(5);
    expect(result.firstBad?.stateType).toBe('FINALIZE');
    expect(result.firstBad?.reason).toMatch(/claims "I booked Ana Lopez on flight FL100/);
    expect(result.evaluations).toBeLessThanOrEqual(evaluationBound(5));
    expect(progress).toEqual(result.path.map((p) => p.step));
  });

  it('all: the fixed run is good to the end', async () => {
    const result = await bisectBelief(await fixedRun(), builtinPredicate('all'));
    expect(result.firstBad).toBeUndefined();
    expect(result.evaluations).toBe(1);
  });

  it('grounding: finds the model step that decided on a hallucinated id, within ceil(log2 N)+1 evaluations', async () => {
    for (const [n, bad] of [
      [41, 18],
      [64, 2],
      [100, 100],
      [7, 6],
    ] as const) {
      const result = await bisectBelief(await longRun(n, bad), builtinPredicate('grounding'));
      // `bad` is the tool step; the THINK step before it decided the call.
      expect(result.firstBad?.step, `n=${n}`).toBe(bad - 1);
      expect(result.firstBad?.stateType).toBe('THINK');
      expect(result.firstBad?.reason).toMatch(/THINK decided flight_status\) uses "FL999"/);
      expect(result.evaluations).toBeLessThanOrEqual(evaluationBound(n));
    }
  });

  it('no-repeat: finds the second identical booking', async () => {
    const result = await bisectBelief(await doubleBookingRun(), builtinPredicate('no-repeat'));
    expect(result.firstBad?.step).toBe(6);
    expect(result.firstBad?.reason).toMatch(/repeats the mutation that already completed at step 4/);
    expect(result.firstBad?.action).toMatch(/^book_flight\(/);
  });

  it('rejects an unknown predicate name', async () => {
    expect(() => builtinPredicate('vibes')).toThrow(/unknown predicate "vibes"/);
  });
});

describe('user predicates', () => {
  it('JS: a module predicate gets (belief, world, step) and may answer booleans', async () => {
    const file = join(scratch, 'no-fl100.mjs');
    writeFileSync(
      file,
      "export default (belief, world, step) => !belief.actions.some((a) => a.name === 'book_flight' && !a.completed);\n",
    );
    const result = await bisectBelief(await baselineRun(), await loadJsPredicate(file));
    expect(result.firstBad?.step).toBe(4);
  });

  it('JS: a predicate that throws gives a clear message naming the step', async () => {
    const boom = functionPredicate(() => {
      throw new Error('cannot read flights');
    }, 'boom');
    await expect(bisectBelief(await baselineRun(), boom)).rejects.toThrow(
      /predicate boom threw at step 5: cannot read flights/,
    );
  });

  it('JS: a json/jsonb value held as its text reaches the predicate parsed, at its step and by worldAt', async () => {
    const run = await baselineRun();
    const table = {
      schema: 'public',
      name: 'event',
      columns: [
        { name: 'id', type: 'integer', nullable: false },
        { name: 'data', type: 'jsonb', nullable: true, values: 'text' as const },
      ],
      primaryKey: ['id'],
      rows: [{ id: 1, data: '{"note": "late checkout"}' }],
    };
    const world = { fs: { root: '/w', files: {} }, db: { tables: [table] } } as unknown as World;
    const seen: unknown[] = [];
    const predicate = functionPredicate((_belief, w, _step, ctx) => {
      seen.push(w.db?.tables[0]?.rows[0]?.data, ctx.worldAt(1).db?.tables[0]?.rows[0]?.data);
      return true;
    }, 'reads-json');
    await predicate.evaluate({ step: 2, belief: beliefAt(run, 2), world, recording: run, worldAt: () => world });
    expect(seen).toEqual([{ note: 'late checkout' }, { note: 'late checkout' }]);
  });

  it('JS: a module without a default function is refused', async () => {
    const file = join(scratch, 'bad.mjs');
    writeFileSync(file, 'export const x = 1;\n');
    await expect(loadJsPredicate(file)).rejects.toThrow(/must export a default function/);
  });

  it('shell: runs in the world folder at each step and leaves no folder behind', async () => {
    const folders: string[] = [];
    const predicate = shellPredicate('if grep -q FL999 itinerary.md 2>/dev/null; then exit 1; fi; test -f notes.txt', {
      tmpRoot: scratch,
      onFolder: (dir) => folders.push(dir),
    });
    const result = await bisectBelief(await itineraryRun(), predicate);
    expect(result.firstBad?.step).toBe(4);
    expect(result.firstBad?.stateType).toBe('FILE_WRITE');
    expect(folders.length).toBe(result.evaluations);
    expect(folders.every((dir) => !existsSync(dir))).toBe(true);
    expect(readdirSync(scratch).filter((f) => f.startsWith('tapedeck-bisect-'))).toEqual([]);
  });

  it('shell: exit 125 skips the step and a neighbour is probed', async () => {
    const predicate = shellPredicate(
      '[ "$TAPEDECK_STEP" = 2 ] && exit 125; [ "$TAPEDECK_STEP" -ge 4 ] && exit 1; exit 0',
      {
        tmpRoot: scratch,
      },
    );
    const result = await bisectBelief(await itineraryRun(), predicate);
    expect(result.firstBad?.step).toBe(4);
    expect(result.path.find((p) => p.step === 2)?.verdict).toBe('skip');
    expect(result.path.some((p) => p.step === 3)).toBe(true);
  });

  it('shell: a command that is not found stops the bisection with a clear message', async () => {
    await expect(
      bisectBelief(await itineraryRun(), shellPredicate('no-such-command-xyz', { tmpRoot: scratch })),
    ).rejects.toThrow(/exited 127/);
    expect(readdirSync(scratch).filter((f) => f.startsWith('tapedeck-bisect-'))).toEqual([]);
  });
});

describe('bad input', () => {
  it('a step out of range is refused with the valid range', async () => {
    await expect(bisectBelief(await baselineRun(), builtinPredicate('all'), { bad: 99 })).rejects.toThrow(
      /--bad step 99 is out of range: .* has steps 1\.\.5/,
    );
    await expect(bisectBelief(await baselineRun(), builtinPredicate('all'), { good: -1 })).rejects.toThrow(
      /out of range/,
    );
  });
});

describe('monotonicity', () => {
  it('the built-in prefix predicates are monotone', async () => {
    const report = await checkMonotone(await baselineRun(), builtinPredicate('all'));
    expect(report.verdicts.map((v) => v.verdict)).toEqual(['good', 'good', 'good', 'good', 'bad']);
    expect(report.monotone).toBe(true);
  });

  it('a predicate that turns good again is reported with the steps where it does', async () => {
    const report = await checkMonotone(
      await baselineRun(),
      functionPredicate((_b, _w, step) => step !== 3, 'only-step-3'),
    );
    expect(report.monotone).toBe(false);
    expect(report.reversals).toEqual([4, 5]);
  });
});
