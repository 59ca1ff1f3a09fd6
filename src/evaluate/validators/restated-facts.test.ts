import { describe, expect, it } from 'vitest';
import { RecordingBuilder } from '../../../test/evaluate/recording-builder.js';
import { parseContract } from '../contract.js';
import { evaluateRecording } from '../evaluate.js';

/**
 * A refund run on a world the engines never saw: the customer types "#7713", the agent reads
 * O-7713 (amounts in cents, an ISO delivery time), refunds 12999 cents and answers in dollars.
 */
function refundRun(answer: string, refundArgs: Record<string, unknown> = { order_id: 'O-7713', amount_cents: 12999 }) {
  const b = new RecordingBuilder();
  const messages: unknown[] = [{ role: 'user', content: 'Hi, my order #7713 arrived cracked. Please refund it.' }];
  const order = { id: 'O-7713', item: 'Aurora blender', total_cents: 12999, delivered_at: '2026-11-20T14:05:00Z' };
  const think = b.model({
    messages: [...messages],
    toolCalls: [{ id: 'g', name: 'get_order', arguments: { order_id: 'O-7713' } }],
  });
  b.tool(think, {
    name: 'GET /orders/O-7713',
    args: {},
    result: { order },
    http: { method: 'GET', url: 'http://127.0.0.1:1/orders/O-7713' },
  });
  messages.push({ role: 'tool', tool_call_id: 'g', content: JSON.stringify({ order }) });
  const act = b.model({
    messages: [...messages],
    toolCalls: [{ id: 'r', name: 'issue_refund', arguments: refundArgs }],
  });
  const refund = { id: 'RF-0001', ...refundArgs, status: 'issued' };
  b.tool(act, {
    name: 'POST /refunds',
    args: refundArgs,
    result: { refund },
    mutating: true,
    http: { method: 'POST', url: 'http://127.0.0.1:1/refunds', body: refundArgs, status: 201 },
  });
  messages.push({ role: 'tool', tool_call_id: 'r', content: JSON.stringify({ refund }) });
  b.model({ messages: [...messages], text: answer });
  return b.complete(answer).build();
}

const contract = (parameters = '{ amount_cents: 12999 }') =>
  parseContract(`
task_id: refund_001
input: { user_instruction: "Hi, my order #7713 arrived cracked. Please refund it." }
success_criteria:
  required_outputs: [final_answer]
  must_include: [confirmation_id]
  must_not_include: [unsupported_claim]
  execution_result:
    required: true
    must_include: [execution_status, confirmation_id, execution_target, execution_parameters]
fields: { confirmation_id: 'RF-\\d{4}' }
execution:
  action: { method: POST, url: /refunds }
  target: { order_id: O-7713 }
  parameters: ${parameters}
  confirmation_id_pattern: 'RF-\\d{4}'
`);

const GOOD = 'Refunded $129.99 for your Aurora blender (order o7713, delivered Nov 20, 2:05 PM) — refund RF-0001.';

describe('a correct run that restates observations in other formats passes the hard gate', () => {
  it('cents as dollars, an ISO timestamp as a date and time, an id in another case: no UNSUPPORTED_CLAIM', () => {
    const e = evaluateRecording(refundRun(GOOD), contract());
    expect(e.findings).toEqual([]);
    expect(e.task.hardSuccess).toBe(true);
    const claims = e.validators.find((v) => v.validatorName === 'claim_fact')!;
    expect(claims.diagnosticMessage).toBe('4/4 key claims grounded in observations');
    // The matched source is named: the dollars come from the order's cents at step 2.
    expect(claims.evidenceRefs).toContainEqual({
      kind: 'claim',
      ref: '$129.99 = total_cents: 12999 (step 2)',
      stepId: 2,
    });
  });

  it('execution_parameters: an amount in cents is found restated in dollars, and a bound in dollars holds cents', () => {
    expect(evaluateRecording(refundRun(GOOD), contract('{ amount: 129.99 }')).findings).toEqual([]);
    expect(evaluateRecording(refundRun(GOOD), contract('{ max_amount: 150 }')).findings).toEqual([]);
    const over = evaluateRecording(refundRun(GOOD), contract('{ max_amount: 100 }'));
    expect(over.findings.map((f) => f.code)).toContain('WRONG_EXECUTION_PARAMETERS');
    expect(over.findings.find((f) => f.code === 'WRONG_EXECUTION_PARAMETERS')?.message).toMatch(
      /amount_cents=12999 \(expected max amount 100\)/,
    );
  });

  it('execution_parameters: an amount in millionths (`amount_micros`) is in dollars, as cents are', () => {
    const micros = { order_id: 'O-7713', amount_micros: 129_990_000 };
    expect(evaluateRecording(refundRun(GOOD, micros), contract('{ amount: 129.99 }')).findings).toEqual([]);
    expect(evaluateRecording(refundRun(GOOD, micros), contract('{ amount_cents: 12999 }')).findings).toEqual([]);
    expect(evaluateRecording(refundRun(GOOD, micros), contract('{ max_amount: 150 }')).findings).toEqual([]);
    const codes = (args: Record<string, unknown>, parameters: string) =>
      evaluateRecording(refundRun(GOOD, args), contract(parameters)).findings.map((f) => f.code);
    expect(codes(micros, '{ max_amount: 100 }')).toContain('WRONG_EXECUTION_PARAMETERS');
    expect(codes({ order_id: 'O-7713', amount_micros: 12_999_000 }, '{ amount: 129.99 }')).toContain(
      'WRONG_EXECUTION_PARAMETERS',
    );
    // A bound in millionths holds an amount the answer states in dollars.
    expect(evaluateRecording(refundRun(GOOD, micros), contract('{ min_amount_micros: 100000000 }')).findings).toEqual(
      [],
    );
  });

  it('the user typed #7713: acting on O-7713 is not hallucinated state', () => {
    const e = evaluateRecording(refundRun(GOOD), contract());
    expect(e.task.trajectoryFailureClasses).toEqual([]);
  });

  it('a number, date or id nobody observed still fails the gate', () => {
    const e = evaluateRecording(
      refundRun('Refunded $139.99 for order O-7713 (delivered Nov 23) — refund RF-0001, case CS-5521.'),
      contract(),
    );
    expect(e.task.hardSuccess).toBe(false);
    expect(e.findings.filter((f) => f.code === 'UNSUPPORTED_CLAIM').map((f) => f.message.split(',')[0])).toEqual([
      'the answer states amount $139.99',
      'the answer states date Nov 23',
      'the answer states id CS-5521',
    ]);
    const wrongAmount = evaluateRecording(refundRun(GOOD, { order_id: 'O-7713', amount_cents: 1299 }), contract());
    expect(wrongAmount.findings.map((f) => f.code)).toContain('WRONG_EXECUTION_PARAMETERS');
  });
});
