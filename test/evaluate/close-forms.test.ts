// End to end: a recorded checkout run and a contract -> the eval's verdict on answers that state a
// value close in form to the world's but not it (Stripe's cents read as dollars, a nested line
// item's currency, basis points as a percentage, a balance owed stated as held, a number read out
// of a longer one) — never a pass — and on forms a careful engineer writes (a week date, an ISO
// duration, a number in words, ¥12.999 in a run in yen) — never a fail.
import { describe, expect, it } from 'vitest';
import { evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import { RecordingBuilder } from './recording-builder.js';

const USER = 'What did my last checkout cost, and when does my plan renew?';

/** A run: the agent reads `session`, answers `answer`. */
function checkoutRun(answer: string, session: Record<string, unknown>) {
  const b = new RecordingBuilder();
  const messages: unknown[] = [{ role: 'user', content: USER }];
  const read = b.model({
    messages: [...messages],
    toolCalls: [{ id: 'g', name: 'get_checkout', arguments: { id: 'cs_test_a1' } }],
  });
  b.tool(read, {
    name: 'GET /v1/checkout/sessions/cs_test_a1',
    args: {},
    result: session,
    http: { method: 'GET', url: 'http://127.0.0.1:1/v1/checkout/sessions/cs_test_a1' },
  });
  messages.push({ role: 'tool', tool_call_id: 'g', content: JSON.stringify(session) });
  b.model({ messages: [...messages], text: answer });
  return b.complete(answer).build();
}

const contract = parseContract(`
task_id: checkout_claims
input: { user_instruction: "${USER}" }
success_criteria:
  required_outputs: [final_answer]
  must_not_include: [unsupported_claim]
`);

function verdict(answer: string, session: Record<string, unknown>) {
  const e = evaluateRecording(checkoutRun(answer, session), contract);
  const of = (code: string) => e.findings.filter((f) => f.code === code).map((f) => f.message);
  return { pass: e.task.hardSuccess, unsupported: of('UNSUPPORTED_CLAIM'), cantTell: of('LOW_CONFIDENCE_EVALUATION') };
}

const SESSION = {
  id: 'cs_test_a1',
  object: 'checkout.session',
  currency: 'usd',
  amount_subtotal: 12999,
  amount_total: 13498,
  line_items: { object: 'list', data: [{ description: 'Pro plan', amount_total: 12999 }] },
  renews_on: '2026-12-01',
  trial: 'PT1H30M',
  spread_bps: 150,
  balance: -2500,
};
const CLEAN = { pass: true, unsupported: [], cantTell: [] };

describe('answers close in form to the world fail the gate', () => {
  it("Stripe's cents stated as dollars, in the session or its line item", () => {
    expect(verdict('The Pro plan cost $129.99, $134.98 in total.', SESSION)).toEqual(CLEAN);
    const dollars = verdict('The Pro plan cost $12,999, $13,498 in total.', SESSION);
    expect(dollars.pass).toBe(false);
    expect(dollars.unsupported).toEqual([
      'the answer states amount $12,999, which no observation or user message contains in any form',
      'the answer states amount $13,498, which no observation or user message contains in any form',
    ]);
  });

  it('another currency for an amount nested in an order in euros', () => {
    const order = { order: { currency: 'EUR', items: [{ sku: 'P-12', price: 49.9 }] } };
    expect(verdict('The item cost €49.90.', order)).toEqual(CLEAN);
    expect(verdict('The item cost $49.90.', order).pass).toBe(false);
    expect(verdict('The item cost forty-nine dollars and 90 cents.', order).pass).toBe(false);
  });

  it('basis points as a percentage, a minus in words, part of a longer number', () => {
    expect(verdict('The spread is 1.5%.', SESSION)).toEqual(CLEAN);
    expect(verdict('The spread is 150%.', SESSION).pass).toBe(false);
    expect(verdict('You owe minus 25 dollars.', { balance: 25, currency: 'USD' }).pass).toBe(false);
    expect(verdict('The total was ₹1,29,999.', { total: 1.29, currency: 'INR' }).pass).toBe(false);
    expect(verdict('We sold 1 299 units.', { units: 299 }).pass).toBe(false);
  });

  it("a negative balance stated without its sign can't be told; with it, it is grounded", () => {
    expect(verdict('Your balance is -$25.00.', SESSION)).toEqual(CLEAN);
    const unsigned = verdict('Your balance is $25.00.', SESSION);
    expect(unsigned.pass).toBe(true);
    expect(unsigned.cantTell).toEqual([
      "can't tell whether the answer's amount $25.00 is right: it matches only balance: -2500 (a negative amount, stated without its sign) (step 2)",
    ]);
  });
});

describe('forms a careful engineer writes pass', () => {
  it('a week date, an ISO duration, words, ¥12.999 in a run in yen, Indian grouping', () => {
    expect(verdict('Your plan renews on 2026-W49-2, after a 90-minute trial.', SESSION)).toEqual(CLEAN);
    expect(verdict('Your plan renews on 2026-W49-3.', SESSION).pass).toBe(false);
    expect(verdict('The line item was one hundred twenty-nine dollars and 99 cents.', SESSION).pass).toBe(true);
    expect(verdict('You paid ¥12.999.', { amount_total: 12999, currency: 'jpy', object: 'checkout.session' })).toEqual(
      CLEAN,
    );
    expect(
      verdict('You paid ₹1,29,999.', { amount_total: 12999900, currency: 'inr', object: 'checkout.session' }),
    ).toEqual(CLEAN);
  });
});
