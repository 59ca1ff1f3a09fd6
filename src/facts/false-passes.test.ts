// Adversarial pairs: an observation and an answer that states a value close in form to the one
// observed but not it — transposed digits, another currency, cents read as dollars in a Stripe
// object, a date a day off across a zone, a time 12 hours off, a percentage for its basis points,
// a sign dropped, a figure rounded from outside its interval, an id regrouped, a number in words,
// part of a longer number. Each is never "same"; the true value, in the same form, always is.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FactIndex, mentionsIn } from './index.js';

const RUNS = { seed: 20261130, numRuns: 150 };
const AT = { pos: 1, stepId: 1, label: 'step 1' };
const pad = (n: number) => String(n).padStart(2, '0');
const fmt = (locale: string) => (v: number) =>
  v.toLocaleString(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const en = fmt('en-US');
const de = fmt('de-DE');
const fr = fmt('fr-FR');
const india = fmt('en-IN');
const swiss = fmt('de-CH');

/** The claim check's verdict on each fact the answer states, against `obs` observed. */
function verdicts(obs: unknown, answer: string): string[] {
  const index = new FactIndex();
  index.addValue(obs, AT);
  return mentionsIn(answer).map((m) => index.verdict(m).verdict);
}

/** An observation, the answer that states it, and answers close in form that do not. */
interface Case {
  what: string;
  obs: unknown;
  right: string;
  wrong: string[];
}

const ONES =
  'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen'.split(
    ' ',
  );
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const words = (n: number) => (n < 20 ? ONES[n]! : `${TENS[Math.floor(n / 10)]}${n % 10 ? `-${ONES[n % 10]}` : ''}`);

/** Digits with two neighbours swapped (the first unequal pair from `at`), or undefined if all are equal. */
function transposed(n: number, at: number): number | undefined {
  const d = String(n).split('');
  for (let k = 0; k < d.length - 1; k++) {
    const i = (at + k) % (d.length - 1);
    if (d[i] !== d[i + 1] && !(i === 0 && d[1] === '0')) {
      [d[i], d[i + 1]] = [d[i + 1]!, d[i]!];
      return Number(d.join(''));
    }
  }
  return undefined;
}

const MONEY_FORMS: Array<[string, (v: number) => string]> = [
  ['USD', (v) => `$${en(v)}`],
  ['EUR', (v) => `${de(v)} €`],
  ['EUR', (v) => `${fr(v)} €`], // U+202F between the groups
  ['INR', (v) => `₹${india(v)}`], // 1,29,999.00
  ['CHF', (v) => `CHF ${swiss(v)}`], // 1’299.00
];

const transposedDigits = fc
  .record({ cents: fc.integer({ min: 1000, max: 99_999_999 }), at: fc.nat(), form: fc.constantFrom(...MONEY_FORMS) })
  .filter(({ cents, at }) => transposed(cents, at) !== undefined)
  .map(({ cents, at, form: [currency, write] }): Case => {
    const v = cents / 100;
    return {
      what: 'transposed digits',
      obs: { total: v, currency },
      right: write(v),
      wrong: [write(transposed(cents, at)! / 100)],
    };
  });

const SYMBOLS: Array<[string, (v: number) => string]> = [
  ['USD', (v) => `US$${en(v)}`],
  ['EUR', (v) => `€${en(v)}`],
  ['GBP', (v) => `£${en(v)}`],
  ['INR', (v) => `₹${en(v)}`],
  ['CAD', (v) => `C$${en(v)}`],
  ['AUD', (v) => `A$${en(v)}`],
  ['CHF', (v) => `CHF ${en(v)}`],
];

const anotherCurrency = fc
  .record({
    cents: fc.integer({ min: 1, max: 99_999_999 }),
    a: fc.nat(SYMBOLS.length - 1),
    b: fc.nat(SYMBOLS.length - 2),
    nested: fc.boolean(),
  })
  .map(({ cents, a, b, nested }): Case => {
    const [code, write] = SYMBOLS[a]!;
    const other = SYMBOLS.filter((_, i) => i !== a)[b]!;
    const v = cents / 100;
    // Nested: an order's line items name no currency; they are in the order's.
    const obs = nested ? { order: { currency: code, items: [{ price: v, qty: 1 }] } } : { price: v, currency: code };
    return { what: `${code} as ${other[0]}`, obs, right: write(v), wrong: [other[1](v)] };
  });

/** Stripe's objects: every amount in cents, nested line items and prices included. */
const stripeCents = fc
  .record({ cents: fc.integer({ min: 1000, max: 9_999_999 }), nested: fc.boolean() })
  .map(({ cents, nested }): Case => {
    const item = nested
      ? { amount_total: cents, description: 'Pro plan' }
      : {
          object: 'item',
          amount_total: cents,
          currency: 'usd',
          price: { object: 'price', unit_amount: cents, currency: 'usd' },
        };
    return {
      what: 'Stripe cents as dollars',
      obs: {
        object: 'checkout.session',
        currency: 'usd',
        // The session's total holds shipping: the answer's line amount is found in the line item alone.
        amount_total: cents + 499,
        amount_subtotal: cents + 499,
        line_items: { object: 'list', data: [item] },
      },
      right: `$${en(cents / 100)}`,
      wrong: [`$${en(cents)}`, `$${cents.toLocaleString('en-US')}`],
    };
  });

/** A UTC instant: its date is right, two days off never, the next or last day at most undecided (some zone has it). */
const zoneDay = fc.record({ h: fc.integer({ min: 0, max: 23 }), mi: fc.integer({ min: 0, max: 59 }) }).map(
  ({ h, mi }): Case => ({
    what: 'a date across zones',
    obs: { refunded_at: `2026-12-01T${pad(h)}:${pad(mi)}:00Z` },
    right: 'December 1, 2026',
    wrong: ['December 3, 2026', 'November 29, 2026', 'Nov 30', 'Dec 2', '2026-12-02', '30/11/2026'],
  }),
);

/** A time 12 hours off: AM for PM. */
const meridiem = fc
  .record({ h: fc.integer({ min: 0, max: 23 }), mi: fc.integer({ min: 0, max: 59 }), zoned: fc.boolean() })
  .map(({ h, mi, zoned }): Case => {
    const at = (hour: number) => `${hour % 12 === 0 ? 12 : hour % 12}:${pad(mi)} ${hour < 12 ? 'AM' : 'PM'}`;
    const zone = zoned ? ' UTC' : '';
    return {
      what: 'AM for PM',
      obs: { at: `2026-12-01T${pad(h)}:${pad(mi)}:00${zoned ? 'Z' : ''}` },
      right: `${at(h)}${zone}`,
      wrong: [`${at((h + 12) % 24)}${zone}`],
    };
  });

/** Seconds: a timestamp a few seconds off is another instant; written to the minute it is the same. */
const seconds = fc
  .record({
    mi: fc.integer({ min: 0, max: 1439 }),
    s: fc.integer({ min: 0, max: 59 }),
    d: fc.integer({ min: 1, max: 59 }),
  })
  .map(({ mi, s, d }): Case => {
    const hm = `${pad(Math.floor(mi / 60))}:${pad(mi % 60)}`;
    return {
      what: 'seconds off',
      obs: { at: `2026-12-01T${hm}:${pad(s)}Z` },
      right: `2026-12-01T${hm}:${pad(s)}Z`,
      wrong: [`2026-12-01T${hm}:${pad((s + d) % 60)}Z`, `${hm}:${pad((s + d) % 60)} UTC`],
    };
  });

/** Basis points: 150 bps is 1.5%, never 150%; a percentage is not as many basis points. */
const basisPoints = fc.integer({ min: 11, max: 9_999 }).chain((b) =>
  fc.constantFrom<Case>(
    { what: 'bps key as percent', obs: { spread_bps: b }, right: `${b / 100}%`, wrong: [`${b}%`, `${b / 10}%`] },
    { what: 'bps text as percent', obs: { note: `spread of ${b} bps` }, right: `${b / 100}%`, wrong: [`${b}%`] },
    {
      what: 'percent as bps',
      obs: { fee_pct: b / 100 },
      right: `${b} bps`,
      wrong: [`${b / 100} bps`, `${b * 100} basis points`],
    },
  ),
);

/** A sign: minus in words, a negative balance stated bare, a positive one stated negative. */
const signs = fc.integer({ min: 10, max: 99 }).chain((n) =>
  fc.constantFrom<Case>(
    {
      what: 'minus in words',
      obs: { change: n },
      right: `${n}`,
      wrong: [`minus ${n}`, `negative ${n}`, `minus ${words(n)}`],
    },
    { what: 'minus kept', obs: { change: -n }, right: `minus ${words(n)}`, wrong: [`${words(n)}`, `${n}`] },
    { what: 'a balance owed', obs: { balance: -n }, right: `-$${n}.00`, wrong: [`$${n}.00`, `${n} dollars`] },
    { what: 'money in minus', obs: { total: n }, right: `$${n}`, wrong: [`minus $${n}`] },
  ),
);

/** A figure rounded from outside its interval: $1.3k is [1250, 1350), $1,300 is 1300 to the dollar. */
const rounding = fc.integer({ min: 1_000, max: 999_000 }).map((n): Case => {
  const k = Math.round(n / 100);
  const thousands = (t: number) => `$${(t / 10).toFixed(1)}k`;
  return {
    what: 'rounded from outside',
    obs: { total: n },
    right: thousands(k),
    wrong: [thousands(k - 1), thousands(k + 1), ...(n === k * 100 ? [] : [`$${(k * 100).toLocaleString('en-US')}`])],
  };
});

/** An id whose digits are grouped otherwise: A-1-23 is not A-12-3. */
const regrouped = fc
  .record({
    prefix: fc.constantFrom('SKU', 'ORD', 'A', 'INV'),
    digits: fc.integer({ min: 1000, max: 9_999_999 }).map(String),
    i: fc.nat(),
    j: fc.nat(),
  })
  .filter(({ digits, i, j }) => i % (digits.length - 1) !== j % (digits.length - 1))
  .map(({ prefix, digits, i, j }): Case => {
    const split = (k: number) =>
      `${digits.slice(0, 1 + (k % (digits.length - 1)))}-${digits.slice(1 + (k % (digits.length - 1)))}`;
    return {
      what: 'id regrouped',
      obs: { sku: `${prefix}-${split(i)}` },
      right: `${prefix.toLowerCase()}_${split(i).replace('-', '_')}`,
      wrong: [`${prefix}-${split(j)}`],
    };
  });

/** Numbers in words, a dozen, a point in words, a magnitude. */
const inWords = fc.integer({ min: 13, max: 98 }).chain((n) =>
  fc.constantFrom<Case>(
    { what: 'words', obs: { count: n }, right: `${words(n)} items`, wrong: [`${words(n + 1)} items`] },
    {
      what: 'dozens',
      obs: { count: 12 * (n % 8) + 12 },
      right: `${ONES[(n % 8) + 1]} dozen`,
      wrong: [`${ONES[(n % 8) + 2]} dozen`],
    },
    {
      what: 'point in words',
      obs: { users: n * 100_000 },
      right: `${ONES[Math.floor(n / 10)]} point ${ONES[n % 10]} million`,
      wrong: [`${ONES[Math.floor(n / 10) + 1]} point ${ONES[n % 10]} million`, `${ONES[n % 10]} million`],
    },
    {
      what: '1.2M',
      obs: { users: n * 100_000 + 50_000 },
      right: `${(n + 0.5) / 10}M users`,
      wrong: [`${((n + 2) / 10).toFixed(1)}M users`, `${((n - 1) / 10).toFixed(1)} million users`],
    },
    {
      what: 'currency words',
      obs: { total: n, currency: 'EUR' },
      right: `${words(n)} euros`,
      wrong: [`${words(n)} dollars`, `${n} dollars`],
    },
    { what: 'pesos are not dollars', obs: { total: n, currency: 'MXN' }, right: `${n} pesos`, wrong: [`${n} dollars`] },
  ),
);

/** Part of a longer number: `1 299` is not 299 (a space or U+202F groups thousands). */
const partOfLonger = fc.integer({ min: 100_000, max: 9_999_999 }).chain((n) =>
  fc.constantFrom<Case>(
    {
      what: 'spaced thousands',
      obs: { count: n % 1000 },
      right: `${n % 1000} items`,
      wrong: [`${1 + (Math.floor(n / 1000) % 9)} ${String(n % 1000).padStart(3, '0')} items`],
    },
    {
      what: 'Swiss apostrophe',
      obs: { count: n % 1000 },
      right: `${n % 1000} Stück`,
      wrong: [
        `${n.toLocaleString('de-CH')} Stück`,
        `${1 + (Math.floor(n / 1000) % 999)}'${String(n % 1000).padStart(3, '0')} Stück`,
      ],
    },
    {
      what: 'narrow no-break space',
      obs: { count: n % 1000 },
      right: `${n % 1000} items`,
      wrong: [`${n.toLocaleString('fr-FR')} items`],
    },
  ),
);

describe('answers close in form to the world are never judged the same', () => {
  const suites: Array<[string, fc.Arbitrary<Case>]> = [
    ['transposed digits, in five locales', transposedDigits],
    ['another currency', anotherCurrency],
    ["Stripe's cents, nested or not", stripeCents],
    ['a date one or two days off across zones', zoneDay],
    ['a time 12 hours off', meridiem],
    ['a timestamp seconds off', seconds],
    ['percentages and basis points', basisPoints],
    ['signs, in symbols and words', signs],
    ['a figure rounded from outside its interval', rounding],
    ['ids regrouped across their digits', regrouped],
    ['numbers in words and magnitudes', inWords],
    ['part of a longer number', partOfLonger],
  ];
  for (const [name, cases] of suites)
    it(name, () => {
      fc.assert(
        fc.property(cases, (c) => {
          expect(verdicts(c.obs, c.right), `${c.what}: ${c.right} vs ${JSON.stringify(c.obs)}`).toEqual(['same']);
          for (const w of c.wrong)
            expect(verdicts(c.obs, w), `${c.what}: ${w} vs ${JSON.stringify(c.obs)}`).not.toContain('same');
        }),
        RUNS,
      );
    });

  it('the Indian form, read whole, is not its first groups', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100_000, max: 999_999_999 }), (n) => {
        const written = n.toLocaleString('en-IN');
        const head = Number(written.split(',').slice(0, 2).join('.'));
        expect(verdicts({ price: head }, `₹${written}`)).toEqual(['different']);
        expect(verdicts({ price: head }, `${written} units`)).toEqual(['different']);
        expect(verdicts({ price: n }, `₹${written}`)).toEqual(['same']);
        expect(verdicts({ price: n }, `${written} units`)).toEqual(['same']);
        // Read as money in rupees, not as a bare number any amount grounds.
        expect(verdicts({ price: n, currency: 'USD' }, `₹${written}`)).toEqual(['different']);
      }),
      RUNS,
    );
  });

  it("a range's bare end is an amount in its start's currency: $10-20 is not grounded by €20", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9_999 }), fc.integer({ min: 1, max: 9_999 }), (lo, d) => {
        const hi = lo + d;
        for (const join of ['-', '–', ' – ', ' to ']) {
          const range = `$${lo}${join}${hi}`;
          // A range is one claim (see unseen-forms.test.ts): a dollar amount in it grounds it, a euro one never.
          expect(verdicts({ low_usd: lo, high_usd: hi }, range), range).toEqual(['same']);
          expect(verdicts({ fee: { amount_eur: hi }, rank: lo }, range), range).toEqual(['different']);
          expect(verdicts({ low: lo, high: hi, currency: 'EUR' }, range), range).not.toContain('same');
        }
      }),
      RUNS,
    );
  });

  it('an amount is never grounded by a count: $20 is not qty: 20, though it is price: 20 or "total 20"', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 10, max: 99_999 }),
        fc.constantFrom('qty', 'count', 'nights', 'seats', 'rank'),
        (n, key) => {
          expect(verdicts({ [key]: n }, `$${n}`), `$${n} vs ${key}: ${n}`).toEqual(['different']);
          expect(verdicts({ [key]: n }, `${n}`)).toEqual(['same']);
          expect(verdicts({ price: n }, `$${n}`)).toEqual(['same']);
          expect(verdicts({ note: `total ${n}` }, `$${n}`)).toEqual(['same']);
          expect(verdicts({ low: n, currency: 'USD' }, `$${n}`)).toEqual(['same']);
        },
      ),
      RUNS,
    );
  });

  it('a cent off is another amount however large: $12,345,678.91 is not $12,345,678.90', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 100_000_000n, max: 999_999_999_999n }), fc.constantFrom(-1, 1), (c, d) => {
        const v = Number(c) / 100;
        const off = (Number(c) + d) / 100;
        expect(verdicts({ price: v }, `$${en(v)}`)).toEqual(['same']);
        expect(verdicts({ price: v }, `$${en(off)}`), `$${en(off)} vs ${v}`).toEqual(['different']);
        expect(verdicts({ price_cents: Number(c) }, `$${en(off)}`)).toEqual(['different']);
      }),
      RUNS,
    );
  });

  it('an amount is never read out of a longer number: $1,299.999 is not $1,299.99', () => {
    fc.assert(
      fc.property(fc.integer({ min: 100_000, max: 99_999_999 }), fc.integer({ min: 1, max: 9 }), (c, d) => {
        const v = c / 100;
        expect(verdicts({ price: v }, `$${en(v)}${d}`)).not.toContain('same');
        expect(verdicts({ price: v }, `${de(v)}${d} €`)).not.toContain('same');
      }),
      RUNS,
    );
  });
});
