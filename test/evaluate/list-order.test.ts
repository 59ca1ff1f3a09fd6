// A contract's `equals` over a list: the ids of the flights booked or a note's tags are the same in
// any order (a multiset: each element once), a ranking is not — said by its key (`ranking`, `top_ids`,
// `route`) or by the contract (`ordered: true`, `ordered: [key]`, `ordered: false`).
import { describe, expect, it } from 'vitest';
import { MAX_UNORDERED, subsetMatch } from '../../src/diff/match.js';
import { evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import { RecordingBuilder } from './recording-builder.js';

function run(body: Record<string, unknown>) {
  const b = new RecordingBuilder();
  const think = b.model({
    messages: [{ role: 'user', content: 'Book both flights and send me the ranked shortlist.' }],
    toolCalls: [{ id: 'c1', name: 'book', arguments: body }],
  });
  b.tool(think, {
    name: 'book',
    args: body,
    result: { ok: true },
    mutating: true,
    http: { method: 'POST', url: 'http://127.0.0.1:8931/bookings', body },
  });
  b.model({ messages: [], text: 'Done.' });
  return b.complete('Done.').build();
}

function passes(equals: string, body: Record<string, unknown>, ordered = ''): boolean {
  const contract = parseContract(`
task_id: book_both
success_criteria: { required_outputs: [final_answer] }
expected_state:
  requests:
    - { method: POST, url: /bookings, count: 1, equals: ${equals}${ordered === '' ? '' : `, ordered: ${ordered}`} }
`);
  const e = evaluateRecording(run(body), contract);
  return e.diff.expectations.every((x) => x.passed);
}

const BOOKED = { flight_ids: ['FL-102', 'FL-101'], tags: ['work', 'urgent'], ranking: ['H-3', 'H-1', 'H-2'] };

describe('equals over a list', () => {
  it.each([
    // Order carries no meaning: any order passes, and a different set still fails.
    ['{ flight_ids: [FL-101, FL-102] }', '', true],
    ['{ flight_ids: [FL-102, FL-101] }', '', true],
    ['{ tags: [urgent, work] }', '', true],
    ['{ flight_ids: [FL-101, FL-103] }', '', false],
    ['{ flight_ids: [FL-101, FL-101] }', '', false],
    ['{ flight_ids: [FL-101] }', '', false],
    ['{ flight_ids: [FL-101, FL-102, FL-103] }', '', false],
    // A ranking by its key: in order.
    ['{ ranking: [H-3, H-1, H-2] }', '', true],
    ['{ ranking: [H-1, H-2, H-3] }', '', false],
    // The contract says which: every list, none, or the keys named.
    ['{ flight_ids: [FL-101, FL-102] }', 'true', false],
    ['{ flight_ids: [FL-102, FL-101] }', 'true', true],
    ['{ flight_ids: [FL-101, FL-102] }', '[flight_ids]', false],
    ['{ tags: [urgent, work] }', '[flight_ids]', true],
    ['{ ranking: [H-1, H-2, H-3] }', 'false', true],
  ])('%s (ordered: %s) -> %s', (equals, ordered, expected) => {
    expect(passes(equals, BOOKED, ordered)).toBe(expected);
  });

  it('matches each element to one of its own, in any form the facts allow', () => {
    const body = { amounts: [{ price_cents: 12999 }, { price_cents: 4500 }] };
    expect(passes("{ amounts: [{ price_cents: '$45.00' }, { price_cents: '$129.99' }] }", body)).toBe(true);
    expect(passes("{ amounts: [{ price_cents: '$45.00' }, { price_cents: '$45.00' }] }", body)).toBe(false);
  });
});

/** Whether an execution expectation's parameters hold the booking (its `ordered` as given). */
function executionPasses(parameters: string, body: Record<string, unknown>, ordered = ''): boolean {
  const contract = parseContract(`
task_id: book_both
success_criteria: { required_outputs: [final_answer] }
execution:
  action: { tool: book }
  parameters: ${parameters}${ordered === '' ? '' : `\n  ordered: ${ordered}`}
`);
  const e = evaluateRecording(run(body), contract);
  return !e.findings.some((f) => f.code === 'WRONG_EXECUTION_PARAMETERS');
}

describe("an execution's parameters over a list", () => {
  const booked = { ...BOOKED, trip: { route: ['OSL', 'CPH', 'ARN'], tags: ['a', 'b'] } };
  it.each([
    ['{ flight_ids: [FL-101, FL-102] }', '', true],
    ['{ flight_ids: [FL-101, FL-103] }', '', false],
    ['{ ranking: [H-1, H-2, H-3] }', '', false],
    ['{ flight_ids: [FL-101, FL-102] }', 'true', false],
    ['{ flight_ids: [FL-102, FL-101] }', 'true', true],
    ['{ flight_ids: [FL-101, FL-102] }', '[flight_ids]', false],
    ['{ ranking: [H-1, H-2, H-3] }', 'false', true],
    // A list inside a parameter goes by its own key: a route in order, tags in any.
    ['{ trip: { route: [OSL, CPH, ARN], tags: [b, a] } }', '', true],
    ['{ trip: { route: [ARN, CPH, OSL] } }', '', false],
    ['{ trip: { route: [ARN, CPH, OSL] } }', 'false', true],
  ])('%s (ordered: %s) -> %s', (parameters, ordered, expected) => {
    expect(executionPasses(parameters, booked, ordered)).toBe(expected);
  });
});

describe('a long list', () => {
  const ids = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `ID-${from + i}`);
  it('matches in any order, loosely where it must, in bounded time, and never overflows the stack', () => {
    const started = performance.now();
    const n = MAX_UNORDERED;
    expect(subsetMatch(ids(n), ids(n).reverse(), 'ids')).toBe(true);
    // Past the bound: equal elements pair at once, whatever their order.
    expect(subsetMatch(ids(5_000), ids(5_000).reverse(), 'ids')).toBe(true);
    expect(subsetMatch(ids(5_000), [...ids(4_999), 'ID-x'].reverse(), 'ids')).toBe(false);
    // ...and the few left are read loosely: 12999 cents as "$129.99".
    const prices = [...ids(200), '$129.99'];
    expect(subsetMatch(prices, [129.99, ...ids(200)].reverse(), 'price')).toBe(true);
    expect(subsetMatch(prices, [139.99, ...ids(200)].reverse(), 'price')).toBe(false);
    // A repeated element is held once per copy.
    expect(subsetMatch([...ids(100), 'ID-1'], [...ids(100), 'ID-2'], 'ids')).toBe(false);
    // A hostile contract's list of 100,000 elements against as many, none equal: decided, not a RangeError.
    expect(subsetMatch(ids(100_000), ids(100_000, 1e6), 'ids')).toBe(false);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
