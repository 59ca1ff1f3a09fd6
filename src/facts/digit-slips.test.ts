// Digit slips and hostile shapes: a value written right in one of many forms, then one digit
// changed, is never the same value; and each form the reader learned stays linear in the text.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLinearIn } from '../../test/support/linear-time.js';
import { FactIndex, mentionsIn } from './index.js';

const AT = { pos: 1, stepId: 1, label: 'step 1' };
const RUNS = { seed: 20261130, numRuns: 150 };
const pad = (n: number) => String(n).padStart(2, '0');

function verdicts(obs: unknown, answer: string): string[] {
  const index = new FactIndex();
  index.addValue(obs, AT);
  return mentionsIn(answer).map((m) => index.verdict(m).verdict);
}

/*
 * Digit slips: a value written right in one of many forms (money in ten notations, dates, times in
 * zones and 12-hour clocks, percentages, quantities, basis points, ISO durations, ids), then one
 * digit changed. The slip is never the same: a date that does not exist grounds nothing, an hour
 * over 12 before AM is no time, a timestamp seconds off is another instant.
 */
const MONTHS = Array.from({ length: 12 }, (_, i) =>
  new Date(Date.UTC(2000, i, 1)).toLocaleString('en-US', { month: 'long', timeZone: 'UTC' }),
);
/** A value observed and an answer that writes it right. */
type G = { obs: unknown; right: string };
const money = (c: number, f: number): G => {
  const v = c / 100;
  const o2 = { minimumFractionDigits: 2, maximumFractionDigits: 2 };
  const forms: Array<[string, string]> = [
    ['USD', `$${v.toLocaleString('en-US', o2)}`],
    ['EUR', `${v.toLocaleString('de-DE', o2)} €`],
    ['EUR', `€${v.toLocaleString('en-IE', o2)}`],
    ['GBP', `£${v.toLocaleString('en-GB', o2)}`],
    ['INR', `₹${v.toLocaleString('en-IN', o2)}`],
    ['CHF', `CHF ${v.toLocaleString('de-CH', o2)}`],
    ['EUR', `${v.toLocaleString('fr-FR', o2)} €`],
    ['USD', `USD ${v.toLocaleString('en-US', o2)}`],
    ['JPY', `¥${c.toLocaleString('en-US')}`],
    ['CAD', `C$${v.toLocaleString('en-US', o2)}`],
  ];
  const [cur, s] = forms[f % forms.length]!;
  return {
    obs:
      cur === 'JPY'
        ? { price: c, currency: cur }
        : f % 3 === 0
          ? { price_cents: c, currency: cur }
          : { price: v, currency: cur },
    right: s,
  };
};
const date = (days: number, f: number): G => {
  const d = new Date(Date.UTC(2000, 0, 1) + days * 86400000);
  const [y, m, dd] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
  const forms = [
    `${y}-${pad(m)}-${pad(dd)}`,
    `${MONTHS[m - 1]} ${dd}, ${y}`,
    `${dd} ${MONTHS[m - 1]} ${y}`,
    `${pad(dd)}.${pad(m)}.${y}`,
    `${MONTHS[m - 1]!.slice(0, 3)} ${dd}, ${y}`,
  ];
  return { obs: { date: `${y}-${pad(m)}-${pad(dd)}` }, right: forms[f % forms.length]! };
};
const time = (min: number, f: number): G => {
  const h = Math.floor(min / 60),
    mi = min % 60;
  const h12 = `${h % 12 === 0 ? 12 : h % 12}:${pad(mi)} ${h < 12 ? 'AM' : 'PM'}`;
  const forms = [
    `${pad(h)}:${pad(mi)} UTC`,
    `${h12} UTC`,
    `2026-12-01T${pad(h)}:${pad(mi)}:00Z`,
    `December 1, 2026 at ${h12} UTC`,
  ];
  return { obs: { at: `2026-12-01T${pad(h)}:${pad(mi)}:00Z` }, right: forms[f % forms.length]! };
};
const qty = (n: number, f: number): G => {
  const forms: Array<[unknown, string]> = [
    [{ rate: n / 10000 }, `${n / 100}%`],
    [{ latency_ms: n }, `${n / 1000} s`],
    [{ weight_g: n }, `${n / 1000} kg`],
    [{ count: n }, `${n.toLocaleString('en-US')} items`],
    [{ spread_bps: n }, `${n} bps`],
    [{ d: `PT${n}S` }, `${n} seconds`],
  ];
  const [obs, s] = forms[f % forms.length]!;
  return { obs, right: s };
};
const id = (n: number, f: number): G => {
  const forms = [`O-${n}`, `ORD-${String(n).slice(0, 2)}-${String(n).slice(2)}`, `BK${n}`];
  const s = forms[f % forms.length]!;
  return { obs: { id: s }, right: s.toLowerCase().replace('-', '_') };
};
const gen = fc.oneof(
  fc.tuple(fc.integer({ min: 100, max: 99_999_999 }), fc.nat()).map(([c, f]) => money(c, f)),
  fc.tuple(fc.integer({ min: 0, max: 15000 }), fc.nat()).map(([d, f]) => date(d, f)),
  fc.tuple(fc.integer({ min: 0, max: 1439 }), fc.nat()).map(([m, f]) => time(m, f)),
  fc.tuple(fc.integer({ min: 11, max: 999_999 }), fc.nat()).map(([n, f]) => qty(n, f)),
  fc.tuple(fc.integer({ min: 1000, max: 999_999 }), fc.nat()).map(([n, f]) => id(n, f)),
);

describe('one digit slipped is never the same value', () => {
  it('an hour over 12 before AM or PM is no time, not its hour modulo 12', () => {
    fc.assert(
      fc.property(fc.integer({ min: 13, max: 99 }), fc.integer({ min: 0, max: 59 }), fc.boolean(), (h, mi, pm) => {
        const at = `2026-12-01T${pad((h % 12) + (pm ? 12 : 0))}:${pad(mi)}:00Z`;
        for (const form of [`${h}:${pad(mi)} ${pm ? 'PM' : 'AM'} UTC`, `${h}:${pad(mi)} ${pm ? 'pm' : 'am'}`])
          expect(verdicts({ at }, form), `${form} vs ${at}`).not.toContain('same');
      }),
      RUNS,
    );
  });

  it('in every form the reader knows', () => {
    fc.assert(
      fc.property(gen, fc.nat(), fc.integer({ min: 0, max: 9 }), (g, pos, digit) => {
        expect(verdicts(g.obs, g.right), `${g.right} vs ${JSON.stringify(g.obs)}`).toEqual(
          mentionsIn(g.right).map(() => 'same'),
        );
        const at = [...g.right].flatMap((ch, i) => (/\d/.test(ch) ? [i] : []));
        const i = at[pos % at.length]!;
        if (g.right[i] === String(digit)) return;
        const slip = `${g.right.slice(0, i)}${digit}${g.right.slice(i + 1)}`;
        expect(verdicts(g.obs, slip), `${slip} vs ${JSON.stringify(g.obs)}`).not.toContain('same');
      }),
      { seed: 20261130, numRuns: 2000 },
    );
  });
});

describe('the new forms stay linear in the text', () => {
  // Hostile runs of the forms this file reads: each start of a pattern that may fail late costs a
  // few steps, never the rest of the run (a quadratic reader took a minute on 256 KiB of `one `).
  const SHAPES: Record<string, string> = {
    'number words': 'one ',
    'number words with a point': 'one point ',
    'dollars and cents, unfinished': 'one dollars and ',
    'spaced groups': '1 000 ',
    'Indian groups, unfinished': '1,2',
    'signs in words': 'minus ',
    'half a': 'half a ',
    'ISO durations': 'PT1',
    'week dates, unfinished': '2026-W',
    // unseen-forms.test.ts's forms; a run of plain 3-digit groups once took five minutes (bounded to six).
    'ranges, unfinished': '$1-',
    'between, unfinished': 'between 1 ',
    'ASCII fractions': '1 1/',
    'scientific notation': '1.2e',
    'temperatures, unfinished': '1 degrees ',
    'spaced lists': '123 ',
    // unread-kinds.test.ts's forms.
    "other scripts' digits": '١٢٣٫',
    'astral digits': '\u{1d7cf}\u{1d7d0} ',
    'dates abroad, unfinished': '1. de ',
    'dates abroad, no month': '12 Dezembers ',
    'CJK dates, unfinished': '2026年12月',
    // Dot groups and a decimal comma in plain numbers (unseen-forms.test.ts).
    'dot groups, no comma': '234.',
    'dot groups before a comma, unfinished': '1.234,',
    'decimal commas': '1,23 ',
    'spaced groups before a comma': '1 234,5',
    'compound times': '1h ',
    'compound times in words': '1 hour and ',
  };
  it('each hostile shape takes time linear in its length', { timeout: 600_000 }, () => {
    for (const [name, unit] of Object.entries(SHAPES)) expectLinearIn(name, unit, mentionsIn);
  });
});
