// Relative dates read against the run's day, and slash dates read as dates: generated over days and
// wordings. The date a wording names is "same"; a day off never is (a false pass); the date as the
// run holds it, written any of these ways, always is (a false fail: before, `03/04/26` was three
// numbers and `in 14 days` a count). Without a run day a relative date is unread: no verdict.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLinearIn } from '../../test/support/linear-time.js';
import { DAY, days, dateVerdicts as verdicts, ymd } from '../../test/support/run-days.js';
import { mentionsIn } from './index.js';
import { runDayOf } from './relative-dates.js';

const RUNS = { seed: 20261124, numRuns: 120 };

const FORWARD: Array<[string, number]> = [
  ['tomorrow', 1],
  ['the day after tomorrow', 2],
  ['in 3 days', 3],
  ['in three days', 3],
  ['3 days from now', 3],
  ['in a week', 7],
  ['in two weeks', 14],
  ['yesterday', -1],
  ['3 days ago', -3],
  ['two weeks ago', -14],
  ['morgen', 1],
  ['übermorgen', 2],
  ['demain', 1],
  ['mañana', 1],
  ['domani', 1],
  ['amanhã', 1],
  ['gisteren', -1],
  ['gestern', -1],
  ['vorgestern', -2],
  ['avant-hier', -2],
  ['ayer', -1],
  ['anteayer', -2],
  ['antes de ayer', -2],
  ['ieri', -1],
  ["l'altro ieri", -2],
  ['avantieri', -2],
  ['ontem', -1],
  ['anteontem', -2],
  ['eergisteren', -2],
  ['前天', -2],
  ['一昨日', -2],
  ['おととい', -2],
  ['きのう', -1],
  ['어제', -1],
  ['그저께', -2],
  ['the day before yesterday', -2],
  ['in 3 Tagen', 3],
  ['dans 3 jours', 3],
  ['hace 3 días', -3],
  ['3 giorni fa', -3],
  ['over 3 dagen', 3],
  ['明天', 1],
  ['昨天', -1],
  ['내일', 1],
];

describe('relative dates', () => {
  it('each names its day from the run day: that day is same, a day either side never is', () => {
    fc.assert(
      fc.property(days, fc.constantFrom(...FORWARD), (today, [word, n]) => {
        const day = { today: [ymd(today)], source: 'test' };
        const answer = `Your flight is ${word}.`;
        expect(verdicts(ymd(today + n * DAY), answer, day), word).toEqual(['same']);
        expect(verdicts(ymd(today + (n + 1) * DAY), answer, day), word).toEqual(['different']);
        expect(verdicts(ymd(today + (n - 1) * DAY), answer, day), word).toEqual(['different']);
        // No run day: no verdict, and never its pieces (`in 14 days` is no count of 14).
        expect(verdicts(ymd(today + n * DAY), answer, undefined), word).toEqual(['unread']);
      }),
      RUNS,
    );
  });

  it('next/this/last weekday: both readings ground it, a day between them does not', () => {
    fc.assert(
      fc.property(days, fc.integer({ min: 0, max: 6 }), (today, w) => {
        const names = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
        const day = { today: [ymd(today)], source: 'test' };
        const wd = new Date(today).getUTCDay();
        const ahead = (w - wd + 7) % 7 || 7;
        for (const n of [ahead, ahead + 7])
          expect(verdicts(ymd(today + n * DAY), `next ${names[w]}`, day)).toEqual(['same']);
        expect(verdicts(ymd(today + (ahead + 3) * DAY), `next ${names[w]}`, day)).toEqual(['different']);
        const behind = (wd - w + 7) % 7 || 7;
        expect(verdicts(ymd(today - behind * DAY), `last ${names[w]}`, day)).toEqual(['same']);
        expect(verdicts(ymd(today + DAY * ((w - wd + 7) % 7)), `this ${names[w]}`, day)).toEqual(['same']);
        // (`this Saturday` said on a Saturday is today: the run's day grounds it.)
        if (w !== wd) expect(verdicts(ymd(today + 16 * DAY), `this ${names[w]}`, day)).toEqual(['different']);
      }),
      RUNS,
    );
  });

  it('"today" is the run day itself; "next week" any day of it, either start', () => {
    const day = { today: ['2026-11-24'], source: "the run's clock" }; // a Tuesday
    expect(verdicts('2026-01-01', 'Anything else today?', day)).toEqual(['same']);
    for (const d of ['2026-11-29', '2026-11-30', '2026-12-06'])
      expect(verdicts(d, 'next week', day), d).toEqual(['same']);
    for (const d of ['2026-11-28', '2026-12-07']) expect(verdicts(d, 'next week', day), d).toEqual(['different']);
  });

  it('French `hier` is yesterday in French, never German or Dutch "here"', () => {
    const day = { today: ['2026-11-24'], source: 'test' };
    for (const t of [
      'Votre vol est parti hier soir.',
      'Nous avons réservé hier le vol pour vous.',
      "Le prix d'hier était plus bas.",
    ]) {
      expect(verdicts('2026-11-23', t, day), t).toEqual(['same']);
      expect(verdicts('2026-11-24', t, day), t).toEqual(['different']);
    }
    for (const t of [
      'Klicken Sie hier, um den Flug zu buchen.',
      'Hier ist Ihre Buchung.',
      'Klik hier om de vlucht te boeken.',
      'hier is je ticket',
    ])
      expect(verdicts('2026-11-23', t, day), t).toEqual([]);
    // `그제서야` is "only then", no day.
    expect(verdicts('2026-11-22', '그제서야 알았습니다', day)).toEqual([]);
  });

  it("the run day: what the run stated wins, else the clock in the zone, else every zone's date", () => {
    const clock = [Date.parse('2026-11-24T13:00:05Z')];
    expect(runDayOf({ stated: ['Today is 2026-11-20. Book it.'], clock })?.today).toEqual(['2026-11-20']);
    expect(runDayOf({ stated: ['As of Nov 21, 2026 the fares are'], clock })?.today).toEqual(['2026-11-21']);
    expect(runDayOf({ clock })?.today).toEqual(['2026-11-24', '2026-11-25']);
    expect(runDayOf({ clock, timeZone: 'America/New_York' })?.today).toEqual(['2026-11-24']);
    expect(runDayOf({ clock, timeZone: 'Pacific/Kiritimati' })?.today).toEqual(['2026-11-25']);
    expect(runDayOf({ clock: [0, 'x', Number.NaN], fallback: '2026-11-24T13:00:05Z', timeZone: 'UTC' })?.today).toEqual(
      ['2026-11-24'],
    );
    // A hostile clock that jumps years is read at its ends, never as every day between.
    expect(runDayOf({ clock: [...clock, Date.parse('2090-01-01T00:00Z')], timeZone: 'UTC' })?.today).toHaveLength(2);
    expect(runDayOf({})).toBeUndefined();
  });
});

describe('slash dates as dates', () => {
  it('a two-digit year, no year (after a date word or with a leading zero), dashes: either reading grounds it', () => {
    fc.assert(
      fc.property(days, fc.constantFrom('Departs on', 'Due by', 'Friday'), (t, lead) => {
        const d = new Date(t);
        const [y, m, dd] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
        const p = (n: number) => String(n).padStart(2, '0');
        const yy = p(y % 100);
        const right = [
          `${p(m)}/${p(dd)}/${yy}`,
          `${p(dd)}/${p(m)}/${yy}`,
          `${p(m)}-${p(dd)}-${y}`,
          `${m}/${dd}`,
          `${dd}.${m}.${y}`,
        ];
        for (const w of right) expect(verdicts(ymd(t), `${lead} ${w}.`, undefined), w).toEqual(['same']);
        const off = new Date(t + DAY);
        const wrong = `${p(off.getUTCMonth() + 1)}/${p(off.getUTCDate())}/${yy}`;
        if (!(off.getUTCMonth() + 1 === dd && off.getUTCDate() === m))
          expect(verdicts(ymd(t), `${lead} ${wrong}.`, undefined), wrong).not.toContain('same');
      }),
      RUNS,
    );
  });

  it('not a date: 24/7, a score, a fraction', () => {
    for (const t of ['Open 24/7.', 'Rated 7/10.', 'Add 3/4 cup.'])
      expect(
        mentionsIn(t).filter((m) => m.kind === 'date'),
        t,
      ).toEqual([]);
  });

  it('each hostile shape takes time linear in its length', () => {
    const day = { today: ['2026-11-24'], source: 'test' };
    for (const unit of [
      'in 3 ',
      'next ',
      'on 3/',
      '03/04/',
      'day after ',
      'hace 3 ',
      '3 days ',
      'la mañana ',
      'Today is ',
    ])
      expectLinearIn(unit, unit, (text) => {
        mentionsIn(text, { day });
        runDayOf({ stated: [text] });
      });
  });
});
