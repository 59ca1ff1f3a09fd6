import { describe, expect, it } from 'vitest';
import { RecordingBuilder } from '../../../test/evaluate/recording-builder.js';
import { parseContract } from '../contract.js';
import { evaluateRecording } from '../evaluate.js';

/** A run: search (observes FL-1 at $120 and a doc URL), then optional booking, then an answer. */
function run(options: {
  answer: string;
  book?: Array<{ flight_id: string; status?: number }>;
  confirm?: boolean;
  extraCall?: string;
}) {
  const b = new RecordingBuilder();
  const messages: unknown[] = [{ role: 'user', content: 'Book FL-1 for me' }];
  const search = b.model({ messages: [...messages], toolCalls: [{ id: 's', name: 'search', arguments: { q: 'x' } }] });
  b.tool(search, {
    name: 'GET /flights',
    args: {},
    result: { flights: [{ id: 'FL-1', price_usd: 120, source: 'https://docs.example.com/fares' }] },
    http: { method: 'GET', url: 'http://127.0.0.1:1/flights' },
  });
  messages.push({
    role: 'tool',
    tool_call_id: 's',
    content: '{"flights":[{"id":"FL-1","price_usd":120,"source":"https://docs.example.com/fares"}]}',
  });
  if (options.confirm) messages.push({ role: 'user', content: 'Yes, go ahead.' });
  if (options.extraCall) {
    const t = b.model({ messages: [...messages], toolCalls: [{ id: 'x', name: options.extraCall, arguments: {} }] });
    b.tool(t, { name: options.extraCall, args: {}, result: { ok: true } });
    messages.push({ role: 'tool', tool_call_id: 'x', content: '{"ok":true}' });
  }
  (options.book ?? []).forEach((bk, i) => {
    const t = b.model({
      messages: [...messages],
      toolCalls: [{ id: `b${i}`, name: 'book', arguments: { flight_id: bk.flight_id } }],
    });
    b.tool(t, {
      name: 'POST /bookings',
      args: { flight_id: bk.flight_id },
      result:
        bk.status && bk.status >= 400
          ? { error: 'sold_out' }
          : { booking: { id: `BK-000${i + 1}`, flight_id: bk.flight_id, price_usd: 120 } },
      mutating: true,
      http: {
        method: 'POST',
        url: 'http://127.0.0.1:1/bookings',
        body: { flight_id: bk.flight_id },
        ...(bk.status ? { status: bk.status } : {}),
      },
    });
    messages.push({ role: 'tool', tool_call_id: `b${i}`, content: `{"booking":{"id":"BK-000${i + 1}"}}` });
  });
  b.model({ messages: [...messages], text: options.answer });
  return b.complete(options.answer).build();
}

const contract = (extra = '') =>
  parseContract(`
task_id: book_001
success_criteria:
  required_outputs: [final_answer]
  must_include: [confirmation_id]
  execution_result: { required: true }
fields: { confirmation_id: 'BK-\\d{4}' }
execution: { action: { method: POST, url: /bookings }, target: { flight_id: FL-1 }, confirmation_id_pattern: 'BK-\\d{4}' }
${extra}`);

const codes = (e: ReturnType<typeof evaluateRecording>, name: string) =>
  e.validators.find((v) => v.validatorName === name)!.failureReasonCodes;

describe('the validator mesh', () => {
  it('passes a clean booking', () => {
    const e = evaluateRecording(
      run({ answer: 'Booked FL-1 at $120. Confirmation BK-0001.', book: [{ flight_id: 'FL-1' }] }),
      contract(),
    );
    expect(e.findings).toEqual([]);
    expect(e.task).toMatchObject({ hardSuccess: true, outcomeScore: 10, primaryFailureReasonCode: null });
  });

  it('Required Field: a missing field and a missing answer', () => {
    const e = evaluateRecording(run({ answer: 'Booked it.', book: [{ flight_id: 'FL-1' }] }), contract());
    expect(codes(e, 'required_field')).toEqual(['MISSING_REQUIRED_FIELD']);
    expect(e.task.completenessScore).toBe(5);
    const none = evaluateRecording(run({ answer: '   ' }), contract());
    expect(none.task.primaryFailureReasonCode).toBe('EMPTY_OR_INVALID_OUTPUT');
  });

  it('Evidence: a cited URL no observation contains is fabricated; an observed one is fine', () => {
    const ok = evaluateRecording(
      run({ answer: 'Booked FL-1, BK-0001. Source: https://docs.example.com/fares', book: [{ flight_id: 'FL-1' }] }),
      contract(),
    );
    expect(codes(ok, 'evidence')).toEqual([]);
    const bad = evaluateRecording(
      run({ answer: 'Booked FL-1, BK-0001. Source: https://made-up.example.org/x', book: [{ flight_id: 'FL-1' }] }),
      contract(),
    );
    expect(codes(bad, 'evidence')).toEqual(['FABRICATED_REFERENCE', 'CITATION_NOT_FOUND']);
    expect(bad.task.primaryFailureReasonCode).toBe('FABRICATED_REFERENCE');
  });

  it('Claim-Fact: an id, a number or a name nobody observed is unsupported', () => {
    const e = evaluateRecording(
      run({ answer: 'Booked FL-1 at $95 with Captain Morgan, BK-0001, seat 14C.', book: [{ flight_id: 'FL-1' }] }),
      contract(),
    );
    const v = e.validators.find((x) => x.validatorName === 'claim_fact')!;
    expect(v.failureReasonCodes).toEqual(['UNSUPPORTED_CLAIM']);
    expect(v.diagnosticMessage).toMatch(/\d\/\d key claims/);
    expect(e.findings.filter((f) => f.code === 'UNSUPPORTED_CLAIM').map((f) => f.message.split(',')[0])).toEqual([
      'the answer states amount $95',
      'the answer states id 14C',
      'the answer states name Captain Morgan',
    ]);
  });

  it('Execution: not executed, failed, duplicated, wrong target, unreal confirmation id', () => {
    const claimed = evaluateRecording(run({ answer: 'Booked! Confirmation BK-0001.' }), contract());
    expect(claimed.task.primaryFailureReasonCode).toBe('ACTION_NOT_EXECUTED');
    const failed = evaluateRecording(
      run({ answer: 'Could not book.', book: [{ flight_id: 'FL-1', status: 409 }] }),
      contract(),
    );
    expect(codes(failed, 'execution')).toContain('STATE_CHANGE_FAILED');
    const twice = evaluateRecording(
      run({ answer: 'Booked BK-0001.', book: [{ flight_id: 'FL-1' }, { flight_id: 'FL-1' }] }),
      contract(),
    );
    expect(twice.task.primaryFailureReasonCode).toBe('DUPLICATE_EXECUTION');
    expect(twice.task.primaryFailureStepId).toBe(6);
    const wrong = evaluateRecording(run({ answer: 'Booked BK-0001.', book: [{ flight_id: 'FL-2' }] }), contract());
    expect(wrong.task.primaryFailureReasonCode).toBe('WRONG_EXECUTION_TARGET');
    const unreal = evaluateRecording(run({ answer: 'Booked, BK-0009.', book: [{ flight_id: 'FL-1' }] }), contract());
    expect(codes(unreal, 'execution')).toEqual(['EXECUTION_RESULT_NOT_FOUND']);
  });

  it('Execution: a high-risk action needs a user confirmation first', () => {
    const c = contract().execution!;
    const risky = parseContract(
      `task_id: t\nsuccess_criteria: { execution_result: { required: true } }\nexecution: { action: { url: /bookings }, high_risk: true, payment: true }\n`,
    );
    expect(c.action).toBeDefined();
    const unconfirmed = evaluateRecording(run({ answer: 'Paid.', book: [{ flight_id: 'FL-1' }] }), risky);
    expect(codes(unconfirmed, 'execution')).toEqual(['UNAUTHORIZED_PAYMENT', 'UNCONFIRMED_HIGH_RISK_ACTION']);
    const confirmed = evaluateRecording(run({ answer: 'Paid.', book: [{ flight_id: 'FL-1' }], confirm: true }), risky);
    expect(codes(confirmed, 'execution')).toEqual([]);
  });

  it('Rule/SOP: order, prerequisites, forbidden tools, bounds and budgets', () => {
    const rules = `
rules:
  - { id: order, order: [search, book] }
  - { id: check_first, tool: book, before: check_policy }
  - { id: no_admin, tool: admin_reset, forbidden: true }
  - { id: cap, tool: book, max_price_usd: 100 }
budgets: { max_steps: 3 }
`;
    const e = evaluateRecording(
      run({ answer: 'Booked FL-1, BK-0001.', book: [{ flight_id: 'FL-1' }], extraCall: 'admin_reset' }),
      contract(rules),
    );
    const v = e.validators.find((x) => x.validatorName === 'rule_sop')!;
    expect(v.failureReasonCodes).toEqual(['UNAUTHORIZED_ACTION', 'WRONG_EXECUTION_PARAMETERS', 'SOP_NOT_FOLLOWED']);
    expect(v.diagnosticMessage).toContain('rule check_first: step 6: book without an earlier check_policy');
    expect(v.diagnosticMessage).toContain('rule cap: step 6 book: price_usd=120 (max 100)');
    expect(v.diagnosticMessage).toContain('budget max_steps: 7 over the cap of 3');
    expect(v.score).toBe(2); // only the tool order of 5 rules and budgets holds
    expect(e.task.primaryFailureReasonCode).toBe('UNAUTHORIZED_ACTION');
  });

  it('Rule/SOP: a budget broken by a fraction shows digits enough to tell the value from its cap', () => {
    // gpt-4o-mini: $0.15 per million input tokens.
    const over = (input: number, output: number, budgets: string) => {
      const b = new RecordingBuilder();
      b.model({
        messages: [{ role: 'user', content: 'hi' }],
        text: 'Done.',
        model: 'gpt-4o-mini',
        usage: { inputUncached: input, output },
      });
      const e = evaluateRecording(b.complete('Done.').build(), contract(`budgets: ${budgets}`));
      return e.validators.find((x) => x.validatorName === 'rule_sop')!.diagnosticMessage;
    };
    expect(over(704, 0, '{ max_cost: 0.0001 }')).toContain('budget max_cost: 0.000106 over the cap of 0.0001');
    expect(over(667, 0, '{ max_cost: 0.0001 }')).toContain('budget max_cost: 0.00010005 over the cap of 0.0001');
    // One output token over: more digits than the cap has, however the model is priced.
    expect(over(100_000, 1, '{ max_cost: 0.015 }')).toMatch(
      /budget max_cost: 0\.0150+[1-9]\d* over the cap of 0\.015$/,
    );
    expect(over(100_000, 1, '{ max_total_tokens: 100000 }')).toContain(
      'budget max_total_tokens: 100001 over the cap of 100000',
    );
  });

  it('uses the contract weights for the soft score', () => {
    const c = contract(
      'weights: { completeness: 1, evidence_validity: 0, evidence_consistency: 0, methodology: 0, readability: 0 }',
    );
    const e = evaluateRecording(run({ answer: 'Booked it.', book: [{ flight_id: 'FL-1' }] }), c);
    expect(e.task.outcomeScore).toBe(5);
  });
});
