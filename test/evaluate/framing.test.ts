// End to end: a data agent's report against what it read — a change said the wrong way fails the
// gate as CONTRADICTED_BY_EVIDENCE (the number is right, the claim wrong), the right way passes, and a
// hedged number passes within its hedge and fails beyond it.
import { describe, expect, it } from 'vitest';
import { evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import { readThenAnswer } from './recording-builder.js';

const USER = 'How did Q3 go?';

const contract = parseContract(`
task_id: q3_report
input: { user_instruction: "${USER}" }
success_criteria:
  required_outputs: [final_answer]
  must_not_include: [unsupported_claim, contradicted_by_evidence]
`);

function codes(answer: string, report: unknown): { pass: boolean; codes: string[] } {
  const e = evaluateRecording(readThenAnswer({ user: USER, path: '/reports/q3', result: report, answer }), contract);
  return { pass: e.task.hardSuccess, codes: [...new Set(e.findings.filter((f) => f.hard).map((f) => f.code))] };
}

const REPORT = { revenue: 1_214_000, currency: 'USD', revenue_change_pct: -3.2, churn_change_pct: 1.5, rows: 1214 };

describe('a change said with a direction', () => {
  it.each([
    ['Revenue fell 3.2% to $1,214,000.', true, []],
    ['Revenue was down 3.2%.', true, []],
    ['Revenue saw a 3.2% decline; churn rose 1.5%.', true, []],
    ['Revenue rose 3.2%.', false, ['CONTRADICTED_BY_EVIDENCE']],
    ['Revenue was up 3.2%.', false, ['CONTRADICTED_BY_EVIDENCE']],
    ['Revenue fell 3.2% and churn fell 1.5%.', false, ['CONTRADICTED_BY_EVIDENCE']],
    ['Revenue fell 4.2%.', false, ['UNSUPPORTED_CLAIM']],
  ] as const)('%s -> pass %s %j', (answer, pass, found) => {
    expect(codes(answer, REPORT)).toEqual({ pass, codes: found });
  });
});

describe('a hedged number', () => {
  it.each([
    ['Revenue was about $1.2M across over 1,200 rows.', true, []],
    ['Revenue was roughly $1,210,000.', true, []],
    ['Revenue was nearly $1.3M.', false, ['UNSUPPORTED_CLAIM']],
    ['Revenue was about $2M.', false, ['UNSUPPORTED_CLAIM']],
    ['The report has over 1,300 rows.', false, ['UNSUPPORTED_CLAIM']],
    ['The report has over 100 rows.', false, ['UNSUPPORTED_CLAIM']],
  ] as const)('%s -> pass %s %j', (answer, pass, found) => {
    expect(codes(answer, REPORT)).toEqual({ pass, codes: found });
  });
});

describe('a change observed under a key that names its direction', () => {
  // [what the tool returned, the answer, pass, the hard codes]: before, a fall's size under
  // `decline_pct`, `loss_usd`, `discount` grounded a rise of it, and a rise's under `increase_pct`
  // made a fall of it can't tell; `lost $1,200` against `loss_usd: 1200` was can't tell.
  it.each([
    [{ decline_pct: 3.2 }, 'Revenue fell 3.2%.', true, []],
    [{ decline_pct: 3.2 }, 'Revenue saw a 3.2% decline.', true, []],
    [{ decline_pct: 3.2 }, 'Revenue moved 3.2%.', true, []],
    [{ decline_pct: 3.2 }, 'Revenue rose 3.2%.', false, ['CONTRADICTED_BY_EVIDENCE']],
    [{ loss_usd: 1200 }, 'We lost $1,200.', true, []],
    [{ loss_usd: 1200 }, 'A $1,200 loss.', true, []],
    [{ loss_usd: 1200 }, 'We gained $1,200.', false, ['CONTRADICTED_BY_EVIDENCE']],
    [{ discount: 20, currency: 'USD' }, 'A $20 discount applies.', true, []],
    [{ discount: 20, currency: 'USD' }, 'The price was cut by $20.', true, []],
    [{ discount: 20, currency: 'USD' }, 'The price rose $20.', false, ['CONTRADICTED_BY_EVIDENCE']],
    [{ increase_pct: 3.2 }, 'Usage grew 3.2%.', true, []],
    [{ increase_pct: 3.2 }, 'Usage was 3.2% higher.', true, []],
    [{ increase_pct: 3.2 }, 'Usage dropped 3.2%.', false, ['CONTRADICTED_BY_EVIDENCE']],
    [{ profit_usd: 1200 }, 'A loss of $1,200.', false, ['CONTRADICTED_BY_EVIDENCE']],
    [{ down_payment: 500, currency: 'USD' }, 'The down payment is $500.', true, []],
  ] as const)('%j: %s -> pass %s %j', (report, answer, pass, found) => {
    expect(codes(answer, report)).toEqual({ pass, codes: found });
  });
});
