// The words around a number: a direction (`fell 3.2%`, `up $1,200`, `a 3.2% drop`) is the sign of
// the change claimed, and a hedge (`about 130`, `over 1,200 rows`, `nearly 2 hours`) the values the
// claim is still true of. Generated over values, words and kinds; each a false pass or fail before.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FactIndex, mentionsIn } from './index.js';

const RUNS = { seed: 20261201, numRuns: 60 };
const AT = { pos: 1, stepId: 1, label: 'step 1' };

/** The verdict on the one fact `claim` states, against `obs` observed. */
function verdict(obs: unknown, claim: string): string {
  const index = new FactIndex();
  index.addValue(obs, AT);
  const [m, ...more] = mentionsIn(claim);
  expect(more, claim).toEqual([]);
  const v = index.verdict(m!);
  return v.verdict === 'different' && index.oppositeOf(m!) !== undefined ? 'opposite' : v.verdict;
}

const DOWN = [
  'fell {}',
  'fell by {}',
  'was down {}',
  'dropped {}',
  'declined {}',
  'decreased by {}',
  'saw a drop of {}',
  'was {} lower',
  'posted a {} decline',
  'was cut by {}',
];
const UP = [
  'rose {}',
  'rose by {}',
  'was up {}',
  'grew {}',
  'increased by {}',
  'saw a rise of {}',
  'was {} higher',
  'posted a {} increase',
  'jumped {}',
];
/** 1% to 99.9% (below 1%, `0.15%` is never a bare 0.15), and whole amounts of 10 to 99,999. */
const pct = fc.integer({ min: 10, max: 999 }).map((n) => n / 10);
const dollars = fc.integer({ min: 10, max: 99_999 });
const usd = (n: number) => `$${n.toLocaleString('en-US')}`;

describe('a change said with a direction takes its sign', () => {
  it('a percentage against a signed change observed: same way grounded, the other way refuted', () => {
    fc.assert(
      fc.property(pct, (p) => {
        for (const form of DOWN) {
          const said = `Revenue ${form.replace('{}', `${p}%`)}.`;
          expect(verdict({ revenue: { change: -p } }, said), said).toBe('same');
          expect(verdict({ revenue_change_pct: p }, said), said).toBe('opposite');
          expect(verdict({ revenue_growth: -p / 100 }, said), said).toBe('same');
          expect(verdict({ note: `Revenue fell ${p}% in Q3` }, said), said).toBe('same');
          // A fall's size under a key that says so is the fall.
          expect(verdict({ decline_pct: p }, said), said).toBe('same');
        }
        for (const form of UP) {
          const said = `Revenue ${form.replace('{}', `${p}%`)}.`;
          expect(verdict({ revenue_change_pct: p }, said), said).toBe('same');
          expect(verdict({ revenue: { change: -p } }, said), said).toBe('opposite');
          expect(verdict({ revenue_growth: -p / 100 }, said), said).toBe('opposite');
          // Text that says it fell: the size is right, the way is not settled by a bare size.
          expect(verdict({ note: `Revenue fell ${p}% in Q3` }, said), said).toBe('cant-tell');
        }
      }),
      RUNS,
    );
  });

  it('an amount against a signed change; a size with no sign leaves a direction undecided', () => {
    fc.assert(
      fc.property(dollars, (d) => {
        const down = `Revenue dropped by ${usd(d)}.`;
        const up = `Revenue increased by ${usd(d)}.`;
        const change = (v: number) => ({ revenue_change: v, currency: 'USD' });
        expect(verdict(change(-d), down)).toBe('same');
        expect(verdict(change(d), down)).toBe('opposite');
        expect(verdict(change(d), up)).toBe('same');
        expect(verdict(change(-d), up)).toBe('opposite');
        expect(verdict({ discount: d, currency: 'USD' }, down)).toBe('same');
        expect(verdict({ amount: d, currency: 'USD' }, down)).toBe('cant-tell');
      }),
      RUNS,
    );
  });

  it('no direction: as before (a level, a plain number, a payment down)', () => {
    expect(verdict({ revenue: 1200, currency: 'USD' }, 'Revenue fell to $1,200.')).toBe('same');
    expect(verdict({ deposit: 500, currency: 'USD' }, 'You put $500 down.')).toBe('same');
    expect(verdict({ revenue_change_pct: 3.2 }, 'Revenue changed 3.2%.')).toBe('same');
    expect(verdict({ revenue: { change: -3.2 } }, 'Revenue changed 3.2%.')).toBe('different');
    expect(verdict({ revenue: { change: -3.2 } }, 'Revenue changed -3.2%.')).toBe('same');
    // A key that names a percentage is one beside a currency (before, it was read as -$3.20).
    expect(verdict({ revenue_change_pct: -3.2, currency: 'USD' }, 'Revenue changed -3.2%.')).toBe('same');
    expect(verdict({ revenue_change_pct: -3.2, currency: 'USD' }, 'Revenue changed -$3.20.')).toBe('different');
  });
});

describe('a hedged number is grounded within what its hedge allows, never far off', () => {
  const cases: Array<[string, unknown, string]> = [
    // about / ~ / roughly: within the rounding the written number shows, at most 5%.
    ['The price is about $130.', { price: 129.99, currency: 'USD' }, 'same'],
    ['The price is ~$130.', { price: 125.5, currency: 'USD' }, 'same'],
    ['The price is roughly $130.', { price: 140, currency: 'USD' }, 'different'],
    ['The price is about $300.', { price: 129.99, currency: 'USD' }, 'different'],
    ['The import has about 1,200 rows.', { row_count: 1214 }, 'same'],
    ['The import has around 1,200 rows.', { row_count: 1251 }, 'different'],
    ['The import has 1,200 rows or so.', { row_count: 1214 }, 'same'],
    ['The import has approx. 1,200 rows.', { row_count: 1214 }, 'same'],
    ['The import has ca. 1,200 rows.', { row_count: 1214 }, 'same'],
    ['The import has ca. 1,300 rows.', { row_count: 1214 }, 'different'],
    // A sentence's end between a hedge and the number: not its hedge.
    ['Roughly: 1,200 rows.', { row_count: 1214 }, 'different'],
    ['The import has about 100 rows.', { row_count: 129 }, 'different'],
    // over / more than / at least: above it, by at most 5%.
    ['The import has over 1,200 rows.', { row_count: 1214 }, 'same'],
    ['The import has more than 1,200 rows.', { row_count: 1259 }, 'same'],
    ['The import has more than 1,200 rows.', { row_count: 1270 }, 'different'],
    ['The import has 1,200+ rows.', { row_count: 1200 }, 'same'],
    ['The import has over 1,200 rows.', { row_count: 1199 }, 'different'],
    ['The import has over 1,300 rows.', { row_count: 1214 }, 'different'],
    ['The import has over 100 rows.', { row_count: 1214 }, 'different'],
    ['The import has at least 1,214 rows.', { row_count: 1214 }, 'same'],
    // nearly / almost / under: below it, by at most 5% (or the written number's rounding).
    ['The call took nearly 2 hours.', { duration_minutes: 112 }, 'same'],
    ['The import has nearly 1,250 rows.', { row_count: 1214 }, 'same'],
    ['The import has almost 1,200 rows.', { row_count: 1214 }, 'different'],
    ['The import has under 2,000 rows.', { row_count: 1214 }, 'different'],
    ['The refund is almost €50.', { refund: 49.5, currency: 'EUR' }, 'same'],
    ['The refund is almost €50.', { refund: 49.5, currency: 'USD' }, 'different'],
    // A bound the user set is repeated, not measured: its number itself grounds it.
    ['I looked for flights under $500.', { budget: 500, currency: 'USD' }, 'same'],
    ['The import has over 1,200 rows.', { min_rows: 1200 }, 'same'],
  ];
  it.each(cases)('%s against %j is %s', (claim, obs, expected) => {
    expect(verdict(obs, claim)).toBe(expected);
  });

  it('generated: about N grounds N±rounding (5% at most); over N grounds (N, 1.05N]; never 20% off', () => {
    fc.assert(
      fc.property(fc.integer({ min: 12, max: 999 }), (k) => {
        const n = k * 100;
        const text = n.toLocaleString('en-US');
        expect(verdict({ rows: n + 40 }, `about ${text} rows`)).toBe('same');
        expect(verdict({ rows: Math.round(n * 1.2) }, `about ${text} rows`)).toBe('different');
        expect(verdict({ rows: n + 1 }, `over ${text} rows`)).toBe('same');
        expect(verdict({ rows: n - 1 }, `over ${text} rows`)).toBe('different');
        expect(verdict({ rows: Math.round(n * 1.2) }, `over ${text} rows`)).toBe('different');
        expect(verdict({ rows: n - 1 }, `nearly ${text} rows`)).toBe('same');
        expect(verdict({ rows: Math.round(n * 0.8) }, `nearly ${text} rows`)).toBe('different');
      }),
      RUNS,
    );
  });
});
