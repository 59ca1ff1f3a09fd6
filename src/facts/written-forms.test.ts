// Forms a careful engineer writes that the reader once failed: ISO week dates, ISO 8601
// durations, vulgar fractions, numbers in words and with magnitudes, ordinals, ¥12.999, Stripe's
// minor units, Indian grouping, Swiss and French spacing. Both directions: the form is the world's
// value, and the same form of another value is not.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FactIndex, factVerdict, mentionsIn, sameFact } from './index.js';

const RUNS = { seed: 20261130, numRuns: 100 };
const AT = { pos: 1, stepId: 1, label: 'step 1' };
const pad = (n: number) => String(n).padStart(2, '0');
const DAY = 86_400_000;

function verdicts(obs: unknown, answer: string): string[] {
  const index = new FactIndex();
  index.addValue(obs, AT);
  return mentionsIn(answer).map((m) => index.verdict(m).verdict);
}

/** The ISO week date of a day, computed independently of the reader (the Thursday rule). */
function isoWeek(t: number): string {
  const day = (new Date(t).getUTCDay() + 6) % 7;
  const thursday = new Date(t + (3 - day) * DAY);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY)) + 1;
  return `${year}-W${pad(week)}-${day + 1}`;
}

describe('ISO week dates', () => {
  it('2026-W49-2 is December 1, 2026, in either form, and the next day is not', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(2000, 0, 1) / DAY, max: Date.UTC(2040, 0, 1) / DAY }), (days) => {
        const t = days * DAY;
        const iso = new Date(t).toISOString().slice(0, 10);
        const week = isoWeek(t);
        expect(verdicts({ date: iso }, `due ${week}`), `${week} vs ${iso}`).toEqual(['same']);
        expect(verdicts({ date: iso }, `due ${week.replaceAll('-', '')}`)).toEqual(['same']);
        expect(verdicts({ date: new Date(t + DAY).toISOString().slice(0, 10) }, `due ${week}`)).toEqual(['different']);
        expect(sameFact(week, iso)).toBe(true);
      }),
      RUNS,
    );
    expect(verdicts({ date: '2026-12-01' }, '2026-W49-2')).toEqual(['same']);
    // 2026 has 53 ISO weeks, 2027 has 52: 2027-W53 is no date.
    expect(mentionsIn('2027-W53-1').some((m) => m.kind === 'date')).toBe(false);
    expect(verdicts({ date: '2026-12-31' }, '2026-W53-4')).toEqual(['same']);
  });
});

describe('ISO 8601 durations', () => {
  it('PT1H30M is 90 min, 1.5 h, 5400 s; P2DT3H is 51 h; a minute off is not', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 23 }),
        fc.integer({ min: 1, max: 59 }),
        (d, h, mi) => {
          const seconds = d * 86400 + h * 3600 + mi * 60;
          const iso = `P${d > 0 ? `${d}D` : ''}T${h > 0 ? `${h}H` : ''}${mi}M`;
          expect(verdicts({ timeout: iso }, `${seconds / 60} minutes`), iso).toEqual(['same']);
          expect(verdicts({ timeout_s: seconds }, iso), iso).toEqual(['same']);
          expect(verdicts({ timeout: iso }, `${seconds / 60 + 1} minutes`), iso).toEqual(['different']);
          expect(verdicts({ timeout_s: seconds + 60 }, iso), iso).toEqual(['different']);
        },
      ),
      RUNS,
    );
    expect(verdicts({ window: 'PT1H30M' }, '1.5 h')).toEqual(['same']);
    expect(verdicts({ window: 'P2W' }, '14 days')).toEqual(['same']);
    // Years and months have no length in seconds: not read as a time.
    expect(mentionsIn('P1Y').filter((m) => m.kind === 'unit')).toEqual([]);
  });
});

describe('fractions', () => {
  it('1½ h is 1.5 h to the nearest half hour; ¾ kg is 750 g; 1½ is never 1', () => {
    expect(verdicts({ duration_min: 90 }, '1½ h')).toEqual(['same']);
    expect(verdicts({ duration_min: 100 }, '1½ h')).toEqual(['same']);
    expect(verdicts({ duration_min: 110 }, '1½ h')).toEqual(['different']);
    expect(verdicts({ weight_g: 750 }, '¾ kg')).toEqual(['same']);
    expect(verdicts({ weight_g: 500 }, '¾ kg')).toEqual(['different']);
    expect(sameFact('1½', 1.5)).toBe(true);
    expect(sameFact('1½', 1)).toBe(false);
    expect(sameFact('2¼ cups', 2.25)).toBe(true);
  });
});

const ONES = 'zero one two three four five six seven eight nine'.split(' ');
const TENS = ['', 'ten', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

describe('numbers in words, magnitudes and ordinals', () => {
  it('twelve, a dozen, 1.2M, 3k, 1.2 million, one point two million, twenty-first', () => {
    fc.assert(
      fc.property(fc.integer({ min: 11, max: 99 }), (n) => {
        const tenths = n * 100_000;
        for (const form of [
          `${n / 10}M`,
          `${n / 10} million`,
          `${ONES[Math.floor(n / 10)]} point ${ONES[n % 10]} million`,
        ])
          expect(verdicts({ users: tenths }, form), form).toEqual(['same']);
        expect(verdicts({ users: n * 1000 }, `${n}k`)).toEqual(['same']);
        if (n >= 20 && n % 10 !== 0) {
          const ordinal = `${TENS[Math.floor(n / 10)]}-${['', 'first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth'][n % 10]}`;
          expect(verdicts({ rank: n }, `${ordinal} place`), ordinal).toEqual(['same']);
          expect(verdicts({ rank: n + 1 }, `${ordinal} place`), ordinal).toEqual(['different']);
        }
      }),
      RUNS,
    );
    expect(verdicts({ eggs: 12 }, 'a dozen eggs')).toEqual(['same']);
    expect(verdicts({ eggs: 24 }, 'two dozen eggs')).toEqual(['same']);
    // Half a dozen is six, not twelve: it is not read as twelve.
    expect(verdicts({ eggs: 12 }, 'half a dozen eggs')).not.toContain('same');
    // "one second" is a duration, not 1 + 2.
    expect(verdicts({ n: 3 }, 'one second')).not.toContain('same');
    expect(verdicts({ total: 1_200_000, currency: 'USD' }, '1.2 million dollars')).toEqual(['same']);
    // Dollars and cents in words or digits; a 90-minute call is a quantity, not an id.
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99 }), fc.integer({ min: 1, max: 99 }), (d, c) => {
        const teens = 'ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split(' ');
        const words = (n: number) =>
          n < 10 ? ONES[n] : n < 20 ? teens[n - 10] : `${TENS[Math.floor(n / 10)]}${n % 10 ? `-${ONES[n % 10]}` : ''}`;
        for (const form of [`${d} dollars and ${c} cents`, `${words(d)} dollars and ${words(c)} cents`].filter(
          (f) => !/undefined/.test(f),
        )) {
          expect(verdicts({ total: d + c / 100, currency: 'USD' }, form), form).toEqual(['same']);
          expect(verdicts({ total: d + c / 100, currency: 'EUR' }, form), form).toEqual(['different']);
          expect(verdicts({ total: d, currency: 'USD' }, form), form).toEqual(['different']);
        }
      }),
      RUNS,
    );
    expect(verdicts({ call_s: 5400 }, 'a 90-minute call')).toEqual(['same']);
    expect(verdicts({ call_s: 5460 }, 'a 90-minute call')).toEqual(['different']);
  });
});

describe('money written as its country writes it', () => {
  it('₹1,29,999, CHF 1’299.00, 1 299,00 € with U+202F or U+00A0, 1 299 items', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100_000, max: 999_999_999 }), (cents) => {
        const v = cents / 100;
        const fixed = { minimumFractionDigits: 2, maximumFractionDigits: 2 };
        expect(verdicts({ price: v, currency: 'INR' }, `₹${v.toLocaleString('en-IN', fixed)}`)).toEqual(['same']);
        expect(verdicts({ price: v, currency: 'CHF' }, `CHF ${v.toLocaleString('de-CH', fixed)}`)).toEqual(['same']);
        const fr = v.toLocaleString('fr-FR', fixed);
        expect(verdicts({ price: v, currency: 'EUR' }, `${fr} €`)).toEqual(['same']);
        expect(verdicts({ price: v, currency: 'EUR' }, `${fr.replaceAll('\u202f', '\u00a0')} €`)).toEqual(['same']);
        expect(verdicts({ count: cents }, `${cents.toLocaleString('fr-FR')} items`)).toEqual(['same']);
      }),
      RUNS,
    );
  });

  it('¥12.999 is twelve thousand yen in a run in yen, twelve yuan in a run in yuan, undecided in neither', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 999 }), fc.integer({ min: 1, max: 999 }), (k, r) => {
        const written = `¥${k}.${String(r).padStart(3, '0')}`;
        const thousands = k * 1000 + r;
        expect(verdicts({ price: thousands, currency: 'JPY' }, written)).toEqual(['same']);
        expect(verdicts({ price: thousands + 1, currency: 'JPY' }, written)).toEqual(['different']);
        expect(verdicts({ price: k + r / 1000, currency: 'CNY' }, `${written} (¥1.50 fee)`)).toEqual([
          'same',
          'different',
        ]);
        expect(verdicts({ price: thousands }, written)).toEqual(['cant-tell']);
      }),
      RUNS,
    );
  });

  it("Stripe's amounts are in the currency's minor unit, by the object's shape and lower-case currency", () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 9_999_999 }), (c) => {
        const usd = (v: number) => `$${v.toLocaleString('en-US', { minimumFractionDigits: 2 })}`;
        const price = { id: 'price_1', object: 'price', unit_amount: c, currency: 'usd' };
        expect(verdicts(price, usd(c / 100))).toEqual(['same']);
        expect(verdicts(price, usd(c))).toEqual(['different']);
        const session = { amount_total: c, amount_subtotal: c, currency: 'usd' };
        expect(verdicts(session, usd(c / 100))).toEqual(['same']);
        expect(verdicts({ ...session, currency: 'jpy' }, `¥${c}`)).toEqual(['same']);
        // Not Stripe's: a fraction among its amounts, or an upper-case currency with a plain `amount`.
        expect(verdicts({ amount_total: c + 0.5, currency: 'usd' }, usd(c + 0.5))).toEqual(['same']);
        expect(verdicts({ amount: c, currency: 'USD' }, usd(c / 100))).toEqual(['cant-tell']);
      }),
      RUNS,
    );
    expect(factVerdict('$129.99', 12999, { actual: 'unit_amount_cents' }).verdict).toBe('same');
  });
});
