import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { alignActions, type NormalisedAction, sideBySide } from './align.js';

const act = (step: number, name: string, args = '{}', kind: 'tool' | 'model' = 'tool'): NormalisedAction => ({
  step,
  kind,
  name,
  args,
  line: `${name}(${args})`,
});

describe('alignActions', () => {
  it('scores the seed 004 example: one extra search_flights gives similarity 0.75', () => {
    const actual = ['search_flights', 'search_flights', 'present_options', 'book_flight'].map((n, i) => act(i + 1, n));
    const expected = ['search_flights', 'present_options', 'book_flight'].map((n, i) => act(i + 1, n));
    const { distance, ops } = alignActions(expected, actual);
    expect(distance).toBe(1);
    expect(1 - distance / Math.max(actual.length, expected.length)).toBe(0.75);
    expect(ops.find((o) => o.op !== 'match')).toMatchObject({ op: 'insert', kind: 'extra-step' });
  });

  it('tells other arguments from another tool', () => {
    const a = [act(1, 'search', '{"to":"DEN"}'), act(2, 'book', '{"id":"FL1"}')];
    const args = alignActions(a, [act(1, 'search', '{"to":"DEN"}'), act(2, 'book', '{"id":"FL2"}')]);
    expect(args.ops[1]).toMatchObject({ op: 'substitute', kind: 'other-arguments' });
    const tool = alignActions(a, [act(1, 'search', '{"to":"DEN"}'), act(2, 'cancel', '{"id":"FL1"}')]);
    expect(tool.ops[1]).toMatchObject({ op: 'substitute', kind: 'other-tool' });
  });

  it('reports a step the second run lacks as missing', () => {
    const a = [act(1, 'search'), act(2, 'check'), act(3, 'book')];
    const { ops, distance } = alignActions(a, [act(1, 'search'), act(2, 'book')]);
    expect(distance).toBe(1);
    expect(ops.find((o) => o.op !== 'match')).toMatchObject({ op: 'delete', kind: 'missing-step', a: { step: 2 } });
  });
});

function levenshtein(a: string[], b: string[]): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

describe('alignActions on any two trajectories', () => {
  it('has the Levenshtein distance, and its operations turn a into b', () => {
    const trajectory = fc.array(fc.constantFrom('search', 'book', 'cancel', 'read'), { maxLength: 9 });
    fc.assert(
      fc.property(trajectory, trajectory, (xs, ys) => {
        const a = xs.map((n, i) => act(i + 1, n));
        const b = ys.map((n, i) => act(i + 1, n));
        const { distance, ops } = alignActions(a, b);
        expect(distance).toBe(levenshtein(xs, ys));
        expect(ops.filter((o) => o.op !== 'match')).toHaveLength(distance);
        const rebuilt = ops.flatMap((o) => (o.op === 'delete' ? [] : o.op === 'insert' ? [o.b.name] : [o.b.name]));
        expect(rebuilt).toEqual(ys);
        expect(ops.flatMap((o) => (o.op === 'insert' ? [] : [o.a.name]))).toEqual(xs);
      }),
    );
  });
});

describe('sideBySide', () => {
  it('puts both steps in two columns, wrapping long lines', () => {
    const view = sideBySide(['step 5 FINALIZE', 'x'.repeat(30)], ['step 5 THINK'], 20, ['baseline', 'replay']);
    const lines = view.split('\n');
    expect(lines[0]).toMatch(/^baseline\s+\| replay$/);
    expect(lines[2]).toBe('step 5 FINALIZE      | step 5 THINK');
    expect(lines).toHaveLength(5);
  });
});
