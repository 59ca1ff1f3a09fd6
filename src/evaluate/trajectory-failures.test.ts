import { describe, expect, it } from 'vitest';
import { RecordingBuilder } from '../../test/evaluate/recording-builder.js';
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
