import { describe, expect, it } from 'vitest';
import { RecordingBuilder } from '../../test/evaluate/recording-builder.js';
import { buildLedger } from '../ledger/index.js';
import { trajectoryOf } from './trajectory.js';
import { detectTrajectoryFailures } from './trajectory-failures.js';

const tools = [
  { type: 'function', function: { name: 'search', parameters: { type: 'object', required: ['q'] } } },
  { type: 'function', function: { name: 'book', parameters: { type: 'object', required: ['flight_id'] } } },
];

/** A run where the model makes the given calls, each answered with `result`. */
function run(calls: Array<{ name: string; args: unknown; result?: string }>, answer = 'Done.') {
  const b = new RecordingBuilder();
  const messages: unknown[] = [{ role: 'user', content: 'Find me a flight to DEN' }];
  calls.forEach((c, i) => {
    const id = `c${i}`;
    b.model({ messages: [...messages], tools, toolCalls: [{ id, name: c.name, arguments: c.args }] });
    messages.push({
      role: 'assistant',
      tool_calls: [{ id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }],
    });
    messages.push({ role: 'tool', tool_call_id: id, content: c.result ?? '{"flights":[{"id":"FL-1"}]}' });
  });
  b.model({ messages: [...messages], text: answer });
  return trajectoryOf(b.complete(answer).build());
}

const classes = (t: ReturnType<typeof run>, maxSteps?: number) =>
  detectTrajectoryFailures(t, maxSteps === undefined ? {} : { maxSteps }).map((f) => [f.failureClass, f.stepId]);

describe('detectTrajectoryFailures', () => {
  it('finds nothing in a clean run', () => {
    expect(
      classes(
        run([
          { name: 'search', args: { q: 'DEN' } },
          { name: 'book', args: { flight_id: 'FL-1' } },
        ]),
      ),
    ).toEqual([]);
  });

  it('wrong tool: a call to a tool that was not offered', () => {
    expect(classes(run([{ name: 'delete_everything', args: {} }]))).toEqual([['wrong_tool', 1]]);
  });

  it('bad args: a required argument missing, or the tool rejecting them', () => {
    expect(classes(run([{ name: 'search', args: {} }]))).toEqual([['bad_args', 1]]);
    expect(classes(run([{ name: 'search', args: { q: 'x' }, result: '{"error":{"code":"invalid_query"}}' }]))).toEqual([
      ['bad_args', 1],
    ]);
  });

  it('hallucinated state: acting on an id no observation returned', () => {
    expect(
      classes(
        run([
          { name: 'search', args: { q: 'DEN' } },
          { name: 'book', args: { flight_id: 'FL-9' } },
        ]),
      ),
    ).toEqual([['hallucinated_state', 2]]);
  });

  it('gave up: "I cannot" with budget remaining, but not when the budget is spent', () => {
    const t = run([{ name: 'search', args: { q: 'DEN' } }], "I'm sorry, I cannot book this.");
    expect(classes(t, 10)).toEqual([['gave_up', 2]]);
    expect(classes(t, 2)).toEqual([]);
  });

  it('loop: the same call three times, or an A -> B -> A cycle', () => {
    const same = run([1, 2, 3].map(() => ({ name: 'search', args: { q: 'DEN' } })));
    expect(classes(same)).toEqual([['loop', 3]]);
    const cycle = run(
      ['search', 'book', 'search', 'book', 'search'].map((name) => ({
        name,
        args: name === 'search' ? { q: 'DEN' } : { flight_id: 'FL-1' },
      })),
    );
    expect(classes(cycle)).toEqual([['loop', 5]]);
  });
});

describe('the trajectory’s cost (max_cost budgets)', () => {
  it('is the ledger’s: reasoning tokens priced as output, the manifest’s prices else the bundled table', () => {
    const b = new RecordingBuilder();
    b.model({
      messages: [{ role: 'user', content: 'hi' }],
      text: 'Done.',
      model: 'gpt-4o-mini',
      usage: { inputUncached: 1000, cacheRead: 2000, output: 300, reasoning: 700 },
    });
    const recording = b.complete('Done.').build();
    const ledger = buildLedger(recording, { provenance: false });
    const t = trajectoryOf(recording);
    expect(ledger.run.total_llm_cost).toBeGreaterThan(0);
    expect(t.cost).toBeCloseTo(ledger.run.total_llm_cost ?? Number.NaN, 12);
    // gpt-4o-mini: 0.15 in, 0.075 cached, 0.60 out per million; reasoning billed as output.
    expect(t.cost).toBeCloseTo((1000 * 0.15 + 2000 * 0.075 + (300 + 700) * 0.6) / 1e6, 12);
  });
});
