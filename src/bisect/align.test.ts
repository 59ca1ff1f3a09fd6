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

describe('sideBySide', () => {
  it('puts both steps in two columns, wrapping long lines', () => {
    const view = sideBySide(['step 5 FINALIZE', 'x'.repeat(30)], ['step 5 THINK'], 20, ['baseline', 'replay']);
    const lines = view.split('\n');
    expect(lines[0]).toMatch(/^baseline\s+\| replay$/);
    expect(lines[2]).toBe('step 5 FINALIZE      | step 5 THINK');
    expect(lines).toHaveLength(5);
  });
});
