// End to end: an amount said with a direction (`Profit fell $1,200`, `$1.2k less`, `a €1,200 drop`,
// `an increase of 3%`) is a signed change, held against what the agent read however the tool wrote
// that change — a signed field (`profit_change`, `delta`, `profit_cents`), a field whose name says
// the way (`lossEur`), a before/after pair — in any currency, symbol or code, scale or separators.
// The change said the other way fails as CONTRADICTED_BY_EVIDENCE, another amount or currency as
// UNSUPPORTED_CLAIM, and a change denied (`did not fall $1,200`) that the tool shows fails too.
import { describe, expect, it } from 'vitest';
import { evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import { mentionsIn } from '../../src/facts/index.js';
import { expectLinearIn } from '../support/linear-time.js';
import { readThenAnswer } from './recording-builder.js';

const USER = 'How did profit move this quarter?';

const contract = parseContract(`
task_id: q3_profit
input: { user_instruction: "${USER}" }
success_criteria:
  required_outputs: [final_answer]
  must_not_include: [unsupported_claim, contradicted_by_evidence]
`);

/** `pass`, or the hard codes the answer fails with against the report. */
function verdict(answer: string, report: unknown): string {
  const e = evaluateRecording(readThenAnswer({ user: USER, path: '/reports/q3', result: report, answer }), contract);
  if (e.task.hardSuccess) return PASS;
  return [...new Set(e.findings.filter((f) => f.hard).map((f) => f.code))].join(',');
}

const PASS = 'pass';
const CONTRADICTED = 'CONTRADICTED_BY_EVIDENCE';
const UNSUPPORTED = 'UNSUPPORTED_CLAIM';

interface Currency {
  code: string;
  /** 1,200 of it as people write it: symbol, code before or after, scale, separators. */
  writings: string[];
  /** Another currency's 1,200: the right number, the wrong money. */
  other: string;
}
const CURRENCIES: Currency[] = [
  {
    code: 'USD',
    writings: ['$1,200', '$1.2k', '$1,200.00', 'USD 1,200', '1,200 USD', '$1200', 'US$1.2K'],
    other: '€1,200',
  },
  { code: 'EUR', writings: ['€1,200', '€1.2k', 'EUR 1,200', '1,200 EUR', '€1200', '1,200 euros'], other: '£1,200' },
  { code: 'GBP', writings: ['£1,200', '£1.2k', 'GBP 1,200', '1,200 GBP', '£1,200.00'], other: '$1,200' },
];

/** A fall of 1,200 in `code`, as tools write one. */
function falls(code: string): unknown[] {
  const lower = code.toLowerCase();
  return [
    { profit_change: -1200, currency: code },
    { delta: -1200, currency: code },
    { profit_cents: -120_000, currency: code },
    { [`profitChange${code[0]}${lower.slice(1)}`]: -1200 },
    { [`loss${code[0]}${lower.slice(1)}`]: 1200 },
    { profit_before: 5000, profit_after: 3800, currency: code },
    { previous_profit: 5000, current_profit: 3800, currency: code },
    { profit: { previous: 5000, current: 3800 }, currency: code },
    { before: { profit: 5000, currency: code }, after: { profit: 3800, currency: code } },
  ];
}

/** A fall said in words: before the amount, after it, as a noun before or after it. */
const DOWN = [
  'Profit fell {}.',
  'Profit was down {}.',
  'Profit dropped by {}.',
  'Profit was {} lower than last quarter.',
  'Profit was {} less than last quarter.',
  'Profit came in {} less.',
  'Profit saw a {} drop.',
  'Profit posted a {} year-over-year decline.',
  'Profit showed a sharp drop of {}.',
  'Profit saw a decrease of {}.',
];
const UP = [
  'Profit rose {}.',
  'Profit was up {}.',
  'Profit was {} higher.',
  'Profit was {} more than last quarter.',
  'Profit saw a {} gain.',
  'Profit saw an increase of {}.',
  'Profit posted a gain of {}.',
];

describe('an amount said with a direction, against the change a tool observed', () => {
  it('the same way passes in every form, the other way is contradicted, another amount or currency unsupported', () => {
    const wrong: string[] = [];
    const expect_ = (answer: string, report: unknown, want: string) => {
      const got = verdict(answer, report);
      if (got !== want) wrong.push(`${JSON.stringify(report)} | ${answer} -> ${got}, expected ${want}`);
    };
    for (const c of CURRENCIES)
      for (const report of falls(c.code)) {
        const [first] = c.writings;
        for (const form of DOWN) expect_(form.replace('{}', first!), report, PASS);
        for (const w of c.writings) expect_(DOWN[0]!.replace('{}', w), report, PASS);
        for (const form of UP) expect_(form.replace('{}', first!), report, CONTRADICTED);
        for (const w of c.writings) expect_(UP[0]!.replace('{}', w), report, CONTRADICTED);
        expect_(DOWN[0]!.replace('{}', first!.replace('1,200', '1,300').replace('1.2', '1.3')), report, UNSUPPORTED);
        expect_(DOWN[4]!.replace('{}', first!.replace('1,200', '2,100').replace('1.2', '2.1')), report, UNSUPPORTED);
        expect_(DOWN[0]!.replace('{}', c.other), report, UNSUPPORTED);
      }
    expect(wrong).toEqual([]);
  }, 60_000);

  const EUR_FALL = { profit_change: -1200, currency: 'EUR' };
  const PAIR = { profit_before_usd: 5000, profit_after_usd: 3800 };
  const PRICES = { old_price: 239, new_price: 219, currency: 'USD' };
  const RATES = { churn_change_pct: 3, signups_change: -20 };
  const GAP = (d: number) => ({ difference: d, currency: 'USD' });
  const NOT_CONTRADICTED = 'not contradicted';
  it.each([
    // A change denied is refuted by the change observed; denying the other way claims nothing.
    [EUR_FALL, 'Profit did not fall €1,200.', CONTRADICTED],
    [EUR_FALL, "Profit hasn't dropped by more than €1.2k.", CONTRADICTED],
    [EUR_FALL, 'There was no €1,200 drop in profit.', CONTRADICTED],
    [EUR_FALL, 'Profit was not €1,200 lower.', CONTRADICTED],
    [EUR_FALL, 'Profit did not rise €1,200; it fell €1,200.', PASS],
    [EUR_FALL, 'Profit not only fell €1,200, it fell fast.', PASS],
    [EUR_FALL, 'Profit did not rise €1,200; it rose €1,200.', CONTRADICTED],
    // A before/after pair is also its change as a share of the first.
    [PAIR, 'Profit fell 24%.', PASS],
    [PAIR, 'Profit saw a 24% drop, to $3,800.', PASS],
    [PAIR, 'Profit fell $1,200 to $3,800.', PASS],
    [PAIR, 'Profit rose 24%.', CONTRADICTED],
    [PAIR, 'Profit fell 42%.', UNSUPPORTED],
    // The change, then the level it came to, each checked (before, `$1,200 to $9,999` was one range).
    [PAIR, 'Profit fell $1,200 to $9,999.', UNSUPPORTED],
    [PRICES, 'The fare is now $20 cheaper.', PASS],
    [PRICES, 'The fare is $20 more than before.', CONTRADICTED],
    // Percentages and counts take the direction words amounts do.
    [RATES, 'Churn saw an increase of 3%.', PASS],
    [RATES, 'Churn was 3% higher.', PASS],
    [RATES, 'Churn saw a 3% drop.', CONTRADICTED],
    [RATES, 'Churn was 3% less.', CONTRADICTED],
    [RATES, 'We had 20 fewer signups.', PASS],
    [RATES, 'We had 20 more signups.', CONTRADICTED],
    // A gap given as a size is no rise: `$20 cheaper` against `difference: 20` is not contradicted.
    [GAP(-20), 'The new plan is $20 cheaper.', PASS],
    [GAP(-20), 'The new plan is $20 more.', CONTRADICTED],
    [GAP(20), 'The new plan is $20 more.', PASS],
    [GAP(20), 'The new plan is $20 cheaper.', NOT_CONTRADICTED],
    // Words that are no direction stay so: a subtraction, a payment down, `more or less`, a bound.
    [{ price: 100, discount: 20, currency: 'USD' }, 'The price is $100 less $20 off.', PASS],
    [{ deposit: 500, currency: 'USD' }, 'You put $500 down.', PASS],
    [{ price: 100, currency: 'USD' }, 'It costs $100, more or less.', PASS],
    [{ price: 100, currency: 'USD' }, 'It is $100 or less.', PASS],
  ])('%j: %s -> %s', (report, answer, want) => {
    const got = verdict(answer, report);
    if (want === NOT_CONTRADICTED) expect(got).not.toContain(CONTRADICTED);
    else expect(got).toBe(want);
  });
});

describe('an amount abbreviated', () => {
  it('reads m, mn, mln, MM, b, bn after a currency as its scale; a lone letter apart from it is none', () => {
    const report = { revenue_change: -1_200_000, capex_change: 3_000_000_000, currency: 'USD' };
    for (const w of ['$1.2m', '$1.2mn', '$1.2 mln', '$1.2MM', 'USD 1.2m', '1.2m USD'])
      expect(verdict(`Revenue fell ${w}.`, report), w).toBe(PASS);
    for (const w of ['$3b', '$3bn', '$3B', '$3 billion']) expect(verdict(`Capex rose ${w}.`, report), w).toBe(PASS);
    // Before, `$1.2m` was $1.20: a wrong scale is another amount.
    expect(verdict('Revenue fell $1.3m.', report)).toBe(UNSUPPORTED);
    expect(verdict('Revenue fell $12m.', report)).toBe(UNSUPPORTED);
    expect(mentionsIn('Buy $20 T-shirts.').map((m) => m.value)).toEqual([20]);
  });
});

describe('the new forms stay linear in the text', () => {
  const SHAPES: Record<string, string> = {
    'direction nouns after an article': 'a 1 price ',
    'adjectives before a direction noun': 'a sharp sharp ',
    denials: 'did not fall 1 ',
    'a change, then a level': 'fell $1 to $2 ',
    comparatives: '$1 less ',
    'scales after an amount': '$1m ',
  };
  it('each hostile shape takes time linear in its length', { timeout: 600_000 }, () => {
    for (const [name, unit] of Object.entries(SHAPES)) expectLinearIn(name, unit, mentionsIn);
  });
});
