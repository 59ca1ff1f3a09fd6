// Verdicts on values written in forms the reader had not met: accounting negatives, currencies
// by prefix, code and decimals, Stripe-style minor units, dates and numbers whose convention the
// rest of the text (or nothing) settles, and the date a timestamp has in some zone. Each verdict
// is "same", "different" or "can't tell" — never a guess.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FactIndex, factVerdict, mentionsIn, sameFact } from './index.js';

const RUNS = { seed: 20261129, numRuns: 100 };
const AT = { pos: 1, stepId: 1, label: 'step 1' };
const pad = (n: number) => String(n).padStart(2, '0');
const en = (v: number) => v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const de = (v: number) => v.toLocaleString('de-DE', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** The claim check's verdict on every fact `claim` mentions, against `obs` observed. */
function verdicts(obs: unknown, claim: string): string[] {
  const index = new FactIndex();
  index.addValue(obs, AT);
  return mentionsIn(claim).map((m) => index.verdict(m).verdict);
}

const cents = fc.integer({ min: 1, max: 9_999_999 });

describe('accounting negatives are negative', () => {
  it('($25.00), -$25, $-25, −$25 (U+2212), 25.00 CR are -25; 25.00 DR is +25', () => {
    fc.assert(
      fc.property(cents, (c) => {
        const v = c / 100;
        for (const form of [`($${en(v)})`, `-$${en(v)}`, `$-${en(v)}`, `−$${en(v)}`, `(${de(v)} €)`, `${en(v)} CR`]) {
          expect(sameFact(form, -v), form).toBe(true);
          expect(sameFact(form, v), form).toBe(false);
        }
        expect(sameFact(`−${en(v)}`, -v)).toBe(true);
        expect(sameFact(`${en(v)} DR`, v)).toBe(true);
        expect(sameFact(`${en(v)} DR`, -v)).toBe(false);
        // A refund stated as a negative restates refund_cents, with its sign.
        expect(sameFact(`($${en(v)})`, -c, { actual: 'refund_cents' })).toBe(true);
      }),
      RUNS,
    );
  });

  it('a parenthesised aside with no currency is not a negative', () => {
    expect(mentionsIn('(25.00)').map((m) => m.value)).toEqual([25]);
  });

  it('an amount in parentheses right after another restates it: not a negative', () => {
    // `129.99 GBP (£129.99)` was read as +129.99 and −129.99: UNSUPPORTED_CLAIM on a right answer.
    fc.assert(
      fc.property(cents, (c) => {
        const v = c / 100;
        for (const text of [
          `Total: ${en(v)} GBP (£${en(v)}).`,
          `Total: $${en(v)} (USD ${en(v)}).`,
          `Total: ${de(v)} € (€${en(v)})`,
          `Total: ${en(v)} (${en(v)} USD)`,
        ])
          expect(
            mentionsIn(text).map((m) => m.value),
            text,
          ).toEqual([v, v]);
        // Alone, or after words, they are still the accounting negative.
        expect(mentionsIn(`Refund ($${en(v)})`).map((m) => m.value)).toEqual([-v]);
        expect(mentionsIn(`Refund of three items ($${en(v)})`).map((m) => m.value)).toEqual([3, -v]);
      }),
      RUNS,
    );
  });
});

describe('currencies: by prefix, code, symbol family and decimals', () => {
  const PREFIXES: Array<[string, string]> = [
    ['C$', 'CAD'],
    ['CA$', 'CAD'],
    ['A$', 'AUD'],
    ['AU$', 'AUD'],
    ['US$', 'USD'],
    ['NZ$', 'NZD'],
    ['HK$', 'HKD'],
    ['S$', 'SGD'],
  ];

  it('a prefixed dollar is its currency and no other; a bare $ may be any dollar, € never', () => {
    fc.assert(
      fc.property(cents, fc.constantFrom(...PREFIXES), (c, [prefix, code]) => {
        const v = c / 100;
        const price = { price: v, currency: code };
        expect(verdicts(price, `${prefix}${en(v)}`), prefix).toEqual(['same']);
        expect(sameFact(`${prefix}${en(v)}`, `${en(v)} ${code}`), prefix).toBe(true);
        for (const [, other] of PREFIXES.filter(([, o]) => o !== code)) {
          expect(verdicts({ price: v, currency: other }, `${prefix}${en(v)}`), `${prefix} vs ${other}`).toEqual([
            'different',
          ]);
        }
        expect(verdicts(price, `$${en(v)}`)).toEqual(['same']);
        expect(verdicts(price, `€${en(v)}`)).toEqual(['different']);
      }),
      RUNS,
    );
  });

  it('ISO codes before or after, either separator, Swiss apostrophes', () => {
    fc.assert(
      fc.property(cents, (c) => {
        const v = c / 100;
        for (const form of [`EUR ${de(v)}`, `${de(v)} €`, `${de(v)} EUR`, `€${en(v)}`])
          expect(sameFact(form, `${en(v)} EUR`), form).toBe(true);
        const swiss = en(v).replace(/,/g, "'");
        expect(sameFact(`CHF ${swiss}`, v, { actual: 'price_chf' }), swiss).toBe(true);
        expect(sameFact(`CHF ${swiss}`, v, { actual: 'price_eur' }), swiss).toBe(false);
      }),
      RUNS,
    );
  });

  it('yen and won have no minor unit, dinars three: minor-unit keys and 12.999 are read by the currency', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1000, max: 9_999_999 }), (n) => {
        for (const code of ['JPY', 'KRW']) {
          expect(sameFact(`${n} ${code}`, n, { actual: `amount_minor_${code.toLowerCase()}` }), code).toBe(true);
          expect(sameFact(`${n / 100} ${code}`, n, { actual: `amount_minor_${code.toLowerCase()}` }), code).toBe(false);
        }
        expect(sameFact(`${(n / 1000).toFixed(3)} KWD`, n, { actual: 'amount_minor_kwd' })).toBe(true);
        expect(sameFact(`${(n / 100).toFixed(2)} KWD`, n, { actual: 'amount_minor_kwd' })).toBe(false);
      }),
      RUNS,
    );
    expect(mentionsIn('12.999 JPY')[0]?.value).toBe(12999);
    // ¥ is yen or yuan: 12.999 is then thousands or decimals.
    expect(mentionsIn('¥12.999')[0]?.ambiguous).toBeDefined();
    expect(mentionsIn('KWD 1.250')[0]?.value).toBe(1.25);
    expect(mentionsIn('BHD1000')[0]?.kind).toBe('id');
  });

  it('Stripe-style `amount` with a currency beside it: cents or units cannot be told, unless the currency has no minor unit', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 9_999_999 }), (n) => {
        const usd = { amount: n, currency: 'usd' };
        expect(verdicts(usd, `$${en(n / 100)}`)).toEqual(['cant-tell']);
        expect(verdicts(usd, `$${en(n)}`)).toEqual(['cant-tell']);
        expect(verdicts(usd, `$${en(n + 1)}`)).toEqual(['different']);
        const jpy = { amount: n, currency: 'jpy' };
        expect(verdicts(jpy, `¥${n}`)).toEqual(['same']);
        if (n % 100 !== 0) expect(verdicts(jpy, `¥${(n / 100).toFixed(2)}`)).toEqual(['different']);
      }),
      RUNS,
    );
  });

  it("an amount with no currency is in the run's one currency; beside amounts in another it cannot be told", () => {
    fc.assert(
      fc.property(cents, (c) => {
        const v = c / 100;
        expect(verdicts({ price: v }, `€${en(v)}`)).toEqual(['same']);
        expect(verdicts({ price: v, fee: { amount_eur: 3 } }, `€${en(v)}`)).toEqual(['same']);
        expect(verdicts({ price: v, fee: { amount_eur: 3 } }, `$${en(v)}`)).toEqual(['cant-tell']);
        expect(verdicts({ price: v, fee: { amount_usd: 3 } }, `$${en(v)}`)).toEqual(['same']);
        // A plain amount claimed names no currency: it restates the amount in any.
        expect(verdicts({ price: v, currency: 'EUR' }, en(v))).toEqual(['same']);
      }),
      RUNS,
    );
  });
});

describe('dates: day or month first is read from the text, else the world may settle it', () => {
  const ambiguous = fc
    .record({
      y: fc.integer({ min: 2000, max: 2040 }),
      a: fc.integer({ min: 1, max: 12 }),
      b: fc.integer({ min: 1, max: 12 }),
    })
    .filter((t) => t.a !== t.b);

  it('another date that can only be one way, a decimal comma or the language decides; with nothing, either reading grounds it', () => {
    fc.assert(
      fc.property(ambiguous, ({ y, a, b }) => {
        const slash = `${pad(a)}/${pad(b)}/${y}`;
        const monthFirst = `${y}-${pad(a)}-${pad(b)}`;
        const dayFirst = `${y}-${pad(b)}-${pad(a)}`;
        expect(verdicts({ d: dayFirst }, `Out ${slash}, back 25/12/${y}.`)).toEqual(['same', 'different']);
        expect(verdicts({ d: monthFirst }, `Out ${slash}, back 12/25/${y}.`)).toEqual(['same', 'different']);
        expect(verdicts({ d: dayFirst }, `Out ${slash} for 1.299,00 €.`)[0]).toBe('same');
        expect(verdicts({ d: monthFirst }, `Out ${slash} for 1.299,00 €.`)[0]).toBe('different');
        // Nothing to go by: either reading observed grounds it (an answer means one of them), neither is "different".
        expect(verdicts({ d: dayFirst }, `Out ${slash}.`)).toEqual(['same']);
        expect(verdicts({ d: monthFirst }, `Out ${slash}.`)).toEqual(['same']);
        expect(verdicts({ d: [dayFirst, monthFirst] }, `Out ${slash}.`)).toEqual(['same']);
        expect(verdicts({ d: `${y + 1}-01-01` }, `Out ${slash}.`)).toEqual(['different']);
        // Two values compared (a contract's against a request's) state one reading: the API read it one way.
        expect(factVerdict(dayFirst, slash).verdict).toBe('cant-tell');
        // The text's language decides: French, German, Spanish… write the day first.
        expect(verdicts({ d: dayFirst }, `Le vol est le ${slash}, avec retour le lendemain.`)).toEqual(['same']);
        expect(verdicts({ d: monthFirst }, `Le vol est le ${slash}, avec retour le lendemain.`)).toEqual(['different']);
        expect(verdicts({ d: monthFirst }, `Der Flug ist am ${slash} und nicht später.`)).toEqual(['different']);
        // A name is no language: Le Meridien in Des Moines is an English text.
        expect(verdicts({ d: monthFirst }, `Le Meridien in Des Moines, ${slash}.`)).toEqual(['same']);
        // Both ways in one text: can't tell either.
        expect(verdicts({ d: dayFirst }, `${slash}, 25/12/${y}, 12/25/${y}`)[0]).toBe('cant-tell');
      }),
      RUNS,
    );
  });

  it('1st Dec and Dec. 1 are December 1', () => {
    for (const form of ['1st Dec', 'Dec. 1', '1st of December', 'December 1st'])
      expect(verdicts({ d: '2026-12-01' }, `on ${form}`), form).toEqual(['same']);
  });

  it("a timestamp's date in another zone is can't tell, the UTC date same, a date no zone has different", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), (h, mi) => {
        const at = { at: `2026-12-01T${pad(h)}:${pad(mi)}:00Z` };
        const minutes = h * 60 + mi;
        expect(verdicts(at, 'December 1, 2026')).toEqual(['same']);
        // UTC−12 is 12 hours behind: before noon UTC it is still November 30 there.
        expect(verdicts(at, 'November 30, 2026')).toEqual([minutes < 720 ? 'cant-tell' : 'different']);
        // UTC+14 is 14 hours ahead: from 10:00 UTC it is December 2 there.
        expect(verdicts(at, 'December 2, 2026')).toEqual([minutes >= 600 ? 'cant-tell' : 'different']);
        expect(verdicts(at, 'December 3, 2026')).toEqual(['different']);
      }),
      RUNS,
    );
  });
});

describe('numbers: 1,234 and 12.999 read by the rest of the text', () => {
  it('with a decimal comma elsewhere 1,234 is 1.234 and 12.999 is 12999; with both conventions ambiguous', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 999 }), fc.integer({ min: 1, max: 999 }), (k, r) => {
        const comma = `${k},${String(r).padStart(3, '0')}`;
        const dot = `${k}.${String(r).padStart(3, '0')}`;
        const [thousands, decimal] = [k * 1000 + r, k + r / 1000];
        expect(mentionsIn(`${comma} units`)[0]?.value).toBe(thousands);
        expect(mentionsIn(`${dot} units`)[0]?.value).toBeCloseTo(decimal, 9);
        expect(mentionsIn(`${comma} units, 2,5 kg`)[0]?.value).toBeCloseTo(decimal, 9);
        expect(mentionsIn(`${dot} units, 2,5 kg`)[0]?.value).toBe(thousands);
        expect(verdicts({ n: decimal }, `${comma} units at 2,50 € and $1.50`)[0]).toBe('cant-tell');
        expect(verdicts({ n: [decimal, thousands] }, `${comma} units at 2,50 € and $1.50`)[0]).toBe('same');
      }),
      RUNS,
    );
  });

  it('magnitudes and percentages: 1.2k, 3.5M, 12% vs 0.12', () => {
    expect(sameFact('1.2k', 1200)).toBe(true);
    expect(sameFact('3.5M', 3_500_000)).toBe(true);
    expect(sameFact('3.5M', 3_600_000)).toBe(false);
    expect(sameFact('12%', 0.12)).toBe(true);
    expect(sameFact(0.12, '12%', { expected: 'rate' })).toBe(true);
    expect(sameFact('12%', 0.012)).toBe(false);
    expect(sameFact('0.12%', 0.12)).toBe(false);
  });
});
