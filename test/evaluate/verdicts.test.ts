// End to end: a recorded run and a contract -> the eval's verdict on answers that write values in
// forms where the text or the world does not settle the fact: it says "can't tell" plainly
// (LOW_CONFIDENCE_EVALUATION, soft) rather than guess a pass or a fail.
import { describe, expect, it } from 'vitest';
import { evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import { RecordingBuilder } from './recording-builder.js';

const USER = 'Refund my last charge on order O-7713 and tell me what you refunded and when.';

/** A payment run: the agent reads `charge`, refunds it, and answers `answer`. */
function refundRun(answer: string, charge: Record<string, unknown>) {
  const b = new RecordingBuilder();
  const messages: unknown[] = [{ role: 'user', content: USER }];
  const read = b.model({
    messages: [...messages],
    toolCalls: [{ id: 'g', name: 'get_charge', arguments: { order: 'O-7713' } }],
  });
  b.tool(read, {
    name: 'GET /charges',
    args: {},
    result: { charge },
    http: { method: 'GET', url: 'http://127.0.0.1:1/charges?order=O-7713' },
  });
  messages.push({ role: 'tool', tool_call_id: 'g', content: JSON.stringify({ charge }) });
  const body = { order_id: 'O-7713' };
  const act = b.model({ messages: [...messages], toolCalls: [{ id: 'r', name: 'refund', arguments: body }] });
  const result = { refund: { id: 'RF-0001', status: 'succeeded' } };
  b.tool(act, {
    name: 'POST /refunds',
    args: body,
    result,
    mutating: true,
    http: { method: 'POST', url: 'http://127.0.0.1:1/refunds', body, status: 201 },
  });
  messages.push({ role: 'tool', tool_call_id: 'r', content: JSON.stringify(result) });
  b.model({ messages: [...messages], text: answer });
  return b.complete(answer).build();
}

const contract = parseContract(`
task_id: refund_verdicts
input: { user_instruction: "${USER}" }
success_criteria:
  required_outputs: [final_answer]
  must_not_include: [unsupported_claim]
execution:
  action: { method: POST, url: /refunds }
`);

function verdict(answer: string, charge: Record<string, unknown>) {
  const e = evaluateRecording(refundRun(answer, charge), contract);
  const of = (code: string) => e.findings.filter((f) => f.code === code).map((f) => f.message);
  return { pass: e.task.hardSuccess, unsupported: of('UNSUPPORTED_CLAIM'), cantTell: of('LOW_CONFIDENCE_EVALUATION') };
}

describe("the eval says can't tell when the text does not settle the fact", () => {
  it('01/12/2026 against December 1: grounded alone (either reading), beside 25/12/2026 too, unsupported beside 12/25/2026', () => {
    const charge = { id: 'ch_1', amount_cents: 12999, created: '2026-12-01' };
    const alone = verdict('Refunded RF-0001 for the charge of 01/12/2026.', charge);
    expect(alone).toEqual({ pass: true, unsupported: [], cantTell: [] });
    // Matching neither reading is never grounded.
    expect(verdict('Refunded RF-0001 for the charge of 02/12/2026.', charge).pass).toBe(false);
    const eu = verdict('Refunded RF-0001 for the charge of 01/12/2026 (statement of 25/12/2026).', {
      ...charge,
      statement: '2026-12-25',
    });
    expect(eu).toEqual({ pass: true, unsupported: [], cantTell: [] });
    const us = verdict('Refunded RF-0001 for the charge of 01/12/2026 (statement of 12/25/2026).', {
      ...charge,
      statement: '2026-12-25',
    });
    expect(us.pass).toBe(false);
    expect(us.unsupported).toHaveLength(1);
  });

  it("Stripe's amount with a currency beside it: $129.99 can't be told from 12999 (cents or dollars?), ¥12,999 can", () => {
    const usd = verdict('Refunded RF-0001: $129.99.', { id: 'ch_1', amount: 12999, currency: 'usd' });
    expect(usd.pass).toBe(true);
    expect(usd.cantTell).toEqual([
      "can't tell whether the answer's amount $129.99 is right: it matches only amount: 12999 (USD 12999 or 129.99?) (step 2)",
    ]);
    expect(verdict('Refunded RF-0001: ¥12,999.', { id: 'ch_1', amount: 12999, currency: 'jpy' })).toEqual({
      pass: true,
      unsupported: [],
      cantTell: [],
    });
    expect(verdict('Refunded RF-0001: ¥129.99.', { id: 'ch_1', amount: 12999, currency: 'jpy' }).pass).toBe(false);
  });

  it('an accounting negative, a prefixed dollar and a currency-less price beside euros', () => {
    expect(verdict('Refunded RF-0001: ($25.00).', { id: 'ch_1', refund_cents: -2500 }).pass).toBe(true);
    expect(verdict('Refunded RF-0001: ($25.00).', { id: 'ch_1', refund_cents: 2500 }).pass).toBe(false);
    expect(verdict('Refunded RF-0001: $129.99.', { id: 'ch_1', price: 129.99, currency: 'CAD' }).pass).toBe(true);
    expect(verdict('Refunded RF-0001: C$129.99.', { id: 'ch_1', price: 129.99, currency: 'USD' }).pass).toBe(false);
    const mixed = verdict('Refunded RF-0001: $129.99.', { id: 'ch_1', price: 129.99, fee: { amount_eur: 2 } });
    expect(mixed.pass).toBe(true);
    expect(mixed.cantTell).toEqual([
      "can't tell whether the answer's amount $129.99 is right: price: 129.99 (step 2) names no currency, and amounts are observed in EUR",
    ]);
  });

  it("a UTC timestamp's date for the user's zone: the day before can't be told, two days off is unsupported", () => {
    const charge = { id: 'ch_1', refunded_at: '2026-12-01T03:30:00Z' };
    expect(verdict('Refunded RF-0001 on December 1, 2026.', charge)).toEqual({
      pass: true,
      unsupported: [],
      cantTell: [],
    });
    expect(verdict('Refunded RF-0001 on November 30, 2026.', charge).cantTell).toHaveLength(1);
    expect(verdict('Refunded RF-0001 on November 29, 2026.', charge).pass).toBe(false);
  });
});
