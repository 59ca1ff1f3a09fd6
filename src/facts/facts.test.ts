import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FactIndex, mentionsIn, sameFact } from './index.js';

const AT = { pos: 5, stepId: 5, label: 'step 5' };
const USER = { pos: -1, label: "the user's message" };

function indexOf(observed: unknown, source: { pos: number; stepId?: number; label: string } = AT): FactIndex {
  const index = new FactIndex();
  if (typeof observed === 'string') index.add(observed, source);
  else index.add(JSON.stringify(observed), source);
  return index;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const LONG = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const pad = (n: number) => String(n).padStart(2, '0');
const clock = (h: number, mi: number) => `${h % 12 === 0 ? 12 : h % 12}:${pad(mi)} ${h < 12 ? 'AM' : 'PM'}`;

/** A timestamp as an API writes it, and every way the answer may restate its date. */
const timestamp = fc
  .record({
    y: fc.integer({ min: 2020, max: 2024 }),
    m: fc.integer({ min: 1, max: 12 }),
    d: fc.integer({ min: 1, max: 28 }),
    h: fc.integer({ min: 0, max: 23 }),
    mi: fc.integer({ min: 0, max: 59 }),
  })
  .map((t) => ({ ...t, iso: `${t.y}-${pad(t.m)}-${pad(t.d)}T${pad(t.h)}:${pad(t.mi)}:00Z` }));
const dateForms = (t: { y: number; m: number; d: number; h: number; mi: number }) => [
  `${MONTHS[t.m - 1]} ${t.d}`,
  `${MONTHS[t.m - 1]} ${t.d}, ${t.y}`,
  `${LONG[t.m - 1]} ${t.d}, ${t.y}`,
  `${t.d} ${LONG[t.m - 1]} ${t.y}`,
  ...(t.d > 12 || t.d === t.m ? [`${t.m}/${t.d}/${t.y}`] : []),
  `${t.y}-${pad(t.m)}-${pad(t.d)}`,
  `${MONTHS[t.m - 1]} ${t.d}, ${clock(t.h, t.mi)}`,
  `${MONTHS[t.m - 1]} ${t.d}, ${t.y} at ${clock(t.h, t.mi)}`,
  clock(t.h, t.mi),
  `${pad(t.h)}:${pad(t.mi)}`,
];

const id = fc
  .record({ prefix: fc.stringMatching(/^[A-M]{1,3}$/), digits: fc.integer({ min: 1000, max: 4999 }) })
  .map(({ prefix, digits }) => ({ prefix, digits: String(digits), id: `${prefix}-${digits}` }));
const idForms = (x: { prefix: string; digits: string; id: string }) => [
  x.id,
  x.id.toLowerCase(),
  `${x.prefix}${x.digits}`,
  `${x.prefix} ${x.digits}`,
  `${x.prefix}_${x.digits}`,
  `#${x.digits}`,
  x.digits,
];

describe('any observed number, amount, percentage, quantity, date or id, restated, is grounded', () => {
  it('integers: as written, with thousands separators, as 12.5k, in words', () => {
    fc.assert(
      fc.property(fc.integer({ min: 10, max: 9_999_999 }), (n) => {
        const index = indexOf({ count: n });
        const forms = [String(n), n.toLocaleString('en-US')];
        if (n % 100 === 0 && n >= 1000) forms.push(`${n / 1000}k`);
        if (n % 100_000 === 0 && n >= 1_000_000) forms.push(`${n / 1_000_000}M`, `${n / 1_000_000} million`);
        for (const form of forms) expect(index.groundText(form), form).toBeDefined();
      }),
    );
    const small = indexOf({ seats: 3, rows: 25 });
    expect(small.groundText('three')).toBeDefined();
    expect(small.groundText('twenty-five')).toBeDefined();
  });

  it('cents as dollars, in any currency notation', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9_999_999 }), fc.constantFrom('total_cents', 'amountCents'), (c, key) => {
        const index = indexOf({ order: { [key]: c } });
        const dollars = (c / 100).toFixed(2);
        for (const form of [
          `$${dollars}`,
          `${dollars} USD`,
          `USD ${dollars}`,
          `${c} cents`,
          `$${Number(dollars).toLocaleString('en-US', { minimumFractionDigits: 2 })}`,
        ])
          expect(index.groundText(form), form).toMatchObject({ source: AT, observed: `${key}: ${c}` });
      }),
    );
  });

  it('fractions as percentages and back', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99 }), (k) => {
        expect(indexOf({ discount_rate: k / 100 }).groundText(`${k}%`)).toBeDefined();
        expect(indexOf({ discount_rate: k / 100 }).groundText(`${k} percent`)).toBeDefined();
        expect(indexOf(`a discount of ${k}%`).groundText(String(k / 100))).toBeDefined();
      }),
    );
  });

  it('quantities in other units (milliseconds as seconds, kilometres as metres)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9999 }), (k) => {
        const ms = k * 100;
        const index = indexOf({ latency_ms: ms, distance_km: k });
        for (const form of [`${ms / 1000} s`, `${ms / 1000} seconds`, `${ms}ms`, `${k * 1000} m`])
          expect(index.groundText(form), form).toBeDefined();
      }),
    );
  });

  it('ISO timestamps as dates and times people write', () => {
    fc.assert(
      fc.property(timestamp, (t) => {
        const index = indexOf({ delivered_at: t.iso });
        for (const form of dateForms(t)) expect(index.groundText(form), form).toBeDefined();
      }),
    );
  });

  it('ids in another case, without their dash, with a space, or as the bare number', () => {
    fc.assert(
      fc.property(id, (x) => {
        const index = indexOf({ order: { id: x.id } });
        for (const form of idForms(x)) expect(index.groundId(form), form).toMatchObject({ observed: `id: ${x.id}` });
        // And the other way: the user typed "#7713"; the agent's O-7713 is grounded by it.
        const typed = indexOf(`my order #${x.digits} arrived cracked`, USER);
        expect(typed.groundId(x.id)).toMatchObject({ source: USER, observed: `#${x.digits}` });
        expect(typed.groundId(x.id.toLowerCase())).toBeDefined();
      }),
    );
  });
});

describe('a number, date or id never observed is not grounded, in any format', () => {
  it('numbers and amounts outside everything observed', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 10_000, max: 49_999 }), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 60_000, max: 99_999 }),
        (seen, m) => {
          const index = indexOf({ items: seen.map((c) => ({ total_cents: c, qty: c })) });
          const forms = [String(m), m.toLocaleString('en-US'), `$${m}`, `$${(m / 100).toFixed(2)}`, `${m}%`, `${m} ms`];
          if (m % 100 === 0) forms.push(`${m / 1000}k`);
          for (const form of forms) expect(index.groundText(form), form).toBeUndefined();
        },
      ),
    );
  });

  it('dates of other years and ids with other digits', () => {
    fc.assert(
      fc.property(timestamp, id, fc.integer({ min: 6000, max: 9999 }), (t, x, other) => {
        const index = indexOf({ delivered_at: t.iso, id: x.id });
        const later = { ...t, y: t.y + 6 };
        for (const form of dateForms(later).filter((f) => f.includes(String(later.y))))
          expect(index.groundText(form), form).toBeUndefined();
        const stranger = { prefix: x.prefix, digits: String(other), id: `${x.prefix}-${other}` };
        for (const form of idForms(stranger)) expect(index.groundId(form), form).toBeUndefined();
      }),
    );
  });

  it('two prefixed ids never ground each other by their digits', () => {
    const index = indexOf({ refund: { id: 'RF-0001' } });
    expect(index.groundId('BK-0001')).toBeUndefined();
    expect(index.groundId('RF-0001')).toBeDefined();
    expect(index.groundId('FL-1020')).toBeUndefined();
  });
});

describe('reading mentions', () => {
  it('reads each fact once, the most specific reading winning', () => {
    const kinds = mentionsIn(
      'Refunded $129.99 (order O-7731, delivered Nov 20) — RF-0001. Took 1.5 s, 12.5k rows, 25%, on 2026-11-25 at 13:05, 5-10 days.',
    ).map((m) => `${m.kind}:${m.text}`);
    expect(kinds).toEqual([
      'money:$129.99',
      'id:O-7731',
      'date:Nov 20',
      'id:RF-0001',
      'unit:1.5 s',
      'number:12.5k',
      'percent:25%',
      'date:2026-11-25',
      'time:13:05',
      'unit:5-10 days',
    ]);
  });

  it('names the source and the observed form that grounds a claim', () => {
    const index = new FactIndex();
    index.add('Hi, my order #7713 arrived cracked.', USER);
    index.add('{"order":{"id":"O-7713","total_cents":8950}}', AT);
    expect(index.groundText('$89.50')).toEqual({ source: AT, observed: 'total_cents: 8950' });
    expect(index.groundId('O-7713')).toEqual({ source: USER, observed: '#7713' });
    // Known at a point of the run: what came later does not count.
    expect(index.groundText('$89.50', 4)).toBeUndefined();
  });

  it('compares structured values by what they state', () => {
    expect(sameFact(129.99, 12999, { expected: 'amount_usd', actual: 'amount_cents' })).toBe(true);
    expect(sameFact('2026-11-20', '2026-11-20T14:05:00Z')).toBe(true);
    expect(sameFact('o7731', 'O-7731')).toBe(true);
    expect(sameFact('O-7713', 'O-7731')).toBe(false);
    expect(sameFact(8950, 12999, { actual: 'amount_cents' })).toBe(false);
  });
});
