// Kinds the reader did not read, each a false pass or a false fail before: digits of other
// scripts (a claim in them went unchecked), dates in other languages (read as pieces), relative
// dates against the run's clock, negations against a count of 0 or `available: false`. Generated:
// the right value in the form is "same", a value off in it never is.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FactIndex, mentionsIn } from './index.js';

const RUNS = { seed: 20261202, numRuns: 150 };
const AT = { pos: 1, stepId: 1, label: 'step 1' };

function verdicts(obs: unknown, answer: string): string[] {
  const index = new FactIndex();
  index.addValue(obs, AT);
  return mentionsIn(answer).map((m) => index.verdict(m).verdict);
}

const cents = fc.integer({ min: 1001, max: 99_999_999 });
const fullwidth = (s: string) => s.replace(/[!-~]/g, (ch) => String.fromCharCode(ch.charCodeAt(0) + 0xfee0));
/** Mathematical bold digits: astral, two UTF-16 units each. */
const bold = (s: string) => s.replace(/\d/g, (d) => String.fromCodePoint(0x1d7ce + Number(d)));
/** The amount as each script writes it. */
const SCRIPTS: Record<string, (v: number) => string> = {
  'Arabic-Indic': (v) => v.toLocaleString('ar-EG', { minimumFractionDigits: 2 }),
  Persian: (v) => v.toLocaleString('fa-IR', { minimumFractionDigits: 2 }),
  Devanagari: (v) => v.toLocaleString('hi-IN-u-nu-deva', { minimumFractionDigits: 2 }),
  Bengali: (v) => v.toLocaleString('bn-BD-u-nu-beng', { minimumFractionDigits: 2 }),
  Thai: (v) => v.toLocaleString('th-TH-u-nu-thai', { minimumFractionDigits: 2 }),
  fullwidth: (v) => fullwidth(v.toLocaleString('en-US', { minimumFractionDigits: 2 })),
  'fullwidth dollars': (v) => fullwidth(`$${v.toFixed(2)}`),
  'mathematical bold': (v) => `$${bold(v.toFixed(2))}`,
};

describe("other scripts' digits are read: a claim in them is checked", () => {
  it('the right amount is grounded, an amount off is not (it went unchecked: a false pass)', () => {
    fc.assert(
      fc.property(cents, fc.constantFrom(...Object.keys(SCRIPTS)), (c, script) => {
        const write = SCRIPTS[script]!;
        const obs = { total: c / 100, currency: 'USD' };
        expect(verdicts(obs, `The total is ${write(c / 100)}.`), write(c / 100)).toEqual(['same']);
        expect(verdicts(obs, `The total is ${write((c + 1) / 100)}.`), write((c + 1) / 100)).toEqual(['different']);
        expect(verdicts(obs, `The total is ${write((c * 10) / 100)}.`)).toEqual(['different']);
      }),
      RUNS,
    );
  });

  it('a mention keeps its written span; observations in other scripts ground ASCII claims', () => {
    const [m] = mentionsIn('المجموع ١٢٩٫٩٩ دولار');
    expect(m).toMatchObject({ text: '١٢٩٫٩٩', value: 129.99 });
    const [b] = mentionsIn(`total ${bold('129')} ok`);
    expect(b?.text).toBe(bold('129'));
    expect(verdicts('कुल १२९ कमरे', '129')).toEqual(['same']);
    expect(verdicts({ order: 'ＯＲＤ-７７３１' }, 'ORD-7731')).toEqual(['same']);
    expect(verdicts({ rate: 15 }, '١٥٪')).toEqual(['same']);
  });
});

const day = fc
  .record({
    y: fc.integer({ min: 2000, max: 2099 }),
    m: fc.integer({ min: 1, max: 12 }),
    d: fc.integer({ min: 1, max: 28 }),
  })
  .map(({ y, m, d }) => ({ y, m, d, iso: `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}` }));
const LOCALES = ['de-DE', 'de-AT', 'fr-FR', 'es-ES', 'it-IT', 'pt-BR', 'nl-NL', 'ja-JP', 'zh-CN', 'zh-TW', 'ko-KR'];
const written = (y: number, m: number, d: number, locale: string, style: 'long' | 'medium' | 'full') =>
  new Date(Date.UTC(y, m - 1, d)).toLocaleDateString(locale, { dateStyle: style, timeZone: 'UTC' });

describe("other languages' dates are read as dates, not pieces", () => {
  it('the date in any language is the day observed; a day or a month off is not', () => {
    fc.assert(
      fc.property(day, fc.constantFrom(...LOCALES), fc.constantFrom('long', 'full', 'medium'), (t, locale, style) => {
        if (style === 'medium' && /^(ja|zh|ko|de)/.test(locale)) return; // written in digits: 2026/12/01, 01.12.2026
        const obs = { check_in: t.iso };
        const right = written(t.y, t.m, t.d, locale, style);
        expect(verdicts(obs, `Check-in: ${right}.`), right).toEqual(['same']);
        const nextDay = written(t.y, t.m, t.d + 1, locale, style);
        expect(verdicts(obs, `Check-in: ${nextDay}.`), nextDay).toEqual(['different']);
        const nextMonth = written(t.y, (t.m % 12) + 1, t.d, locale, style);
        expect(verdicts(obs, `Check-in: ${nextMonth}.`), nextMonth).not.toContain('same');
      }),
      RUNS,
    );
  });

  it('with no year, the month and day; a word that only may be a month needs its year', () => {
    expect(verdicts({ check_in: '2026-12-01' }, 'ab dem 1. Dezember')).toEqual(['same']);
    expect(verdicts({ check_in: '2026-12-01' }, '12月1日')).toEqual(['same']);
    expect(verdicts({ check_in: '2026-03-12' }, 'le 12 mars 2026')).toEqual(['same']);
    expect(verdicts({ bars: 12 }, 'I bought 12 Mars bars')).toEqual(['same']);
    expect(verdicts({ got: 12, of: 15 }, '12 out of 15')).toEqual(['same', 'same']);
    expect(verdicts({ check_in: '2026-02-31' }, '31. Februar 2026')).toEqual(['different']);
  });
});
