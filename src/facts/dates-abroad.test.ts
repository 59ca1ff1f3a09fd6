// Dotted short dates (`03.04.26`, `3.4.26`, `am 03.04.`: day first) and a date with its clock time in
// the forms languages write it (`4 mars à 14h`, `4. März um 14 Uhr`, `2026年3月4日 14時`), generated over
// days, against the object the sentence names (`{ departs_at }`): the day and time observed are same,
// a day or an hour off is not; the time is never a number or a length (`14h` was 14 hours, `14 Uhr`
// the number 14: a false fail), and decimals, versions and addresses are never dates.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLinearIn } from '../../test/support/linear-time.js';
import { FactIndex, mentionsIn } from './index.js';

const RUNS = { seed: 20260304, numRuns: 150 };
const AT = { pos: 1, stepId: 1, label: 'step 1' };
const DAY = 86_400_000;
/** A minute from 2001 to 2098 (ms since the epoch, UTC). */
const minutes = fc.integer({ min: 11_323 * 1440, max: 47_000 * 1440 }).map((n) => n * 60_000);
const p = (n: number) => String(n).padStart(2, '0');

/** Each fact the answer mentions: its kind and its verdict against a flight departing at `observed`. */
function verdicts(observed: string, answer: string): string[] {
  const index = new FactIndex();
  index.addValue({ flight: 'F9 1021', departs_at: observed }, AT);
  return mentionsIn(answer).map((m) => `${m.kind} ${m.unread !== undefined ? 'unread' : index.verdict(m).verdict}`);
}

describe('dotted short dates', () => {
  it('day first, with a two-digit year or none, where a date stands: the day is same, the next day is not', () => {
    fc.assert(
      fc.property(minutes, fc.integer({ min: 0, max: 5 }), (t, form) => {
        const d = new Date(t);
        const [y, m, dd] = [d.getUTCFullYear() % 100, d.getUTCMonth() + 1, d.getUTCDate()];
        const written = (m: number, dd: number, y: number) =>
          [
            `Abflug am ${p(dd)}.${p(m)}.${p(y)}.`,
            `Abflug am ${dd}.${m}.${p(y)}.`,
            `Departure ${dd}.${m}.${p(y)} 08:15`,
            `Abflug am ${dd}.${m}.`,
            `Départ le ${p(dd)}.${p(m)}. à 9h`,
            `Die Lieferung kommt ${dd}.${m}. mit der Post.`,
          ][form]!;
        const iso = d.toISOString().slice(0, 10);
        expect(
          verdicts(iso, written(m, dd, y)).filter((v) => v.startsWith('date')),
          written(m, dd, y),
        ).toEqual(['date same']);
        const next = new Date(t + DAY);
        const off = written(next.getUTCMonth() + 1, next.getUTCDate(), next.getUTCFullYear() % 100);
        expect(
          verdicts(iso, off).filter((v) => v.startsWith('date')),
          off,
        ).toEqual(['date different']);
      }),
      RUNS,
    );
  });

  it('decimals, versions and addresses are no dates; a date or a version with nothing beside it is unread', () => {
    for (const text of [
      'Pi is 3.14.',
      'The total is 15.04.',
      'It costs $3.05.',
      'Upgrade to v1.2.3 now.',
      'Version 3.4.26 is out.',
      'Ubuntu 22.04.',
      'node 18.12.1',
      'Host 192.168.1.1 and 10.0.0.1.',
      'See 2.3.4-beta.',
    ])
      expect(
        mentionsIn(text).filter((m) => m.kind === 'date'),
        text,
      ).toEqual([]);
    expect(verdicts('2030-02-01', 'Build 1.2.30 shipped.')).not.toContain('date same');
    expect(verdicts('2026-04-03', 'It is 3.4.26.')).toEqual(['date unread']);
  });
});

const MONTHS: Record<string, string> = {
  en: 'January February March April May June July August September October November December',
  fr: 'janvier février mars avril mai juin juillet août septembre octobre novembre décembre',
  de: 'Januar Februar März April Mai Juni Juli August September Oktober November Dezember',
  es: 'enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre',
  it: 'gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre',
  pt: 'janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro',
  nl: 'januari februari maart april mei juni juli augustus september oktober november december',
};
const month = (lang: string, mo: number) => MONTHS[lang]!.split(' ')[mo - 1]!;

/** A date and its clock time, as each language writes them (`h` 24-hour, `mi` minutes; some forms write no year or minutes). */
const WITH_TIME: Array<(y: number, mo: number, d: number, h: number, mi: number) => string> = [
  (y, mo, d, h, mi) => `${y}-${p(mo)}-${p(d)} ${p(h)}:${p(mi)}`,
  (y, mo, d, h, mi) => `${y}-${p(mo)}-${p(d)}T${p(h)}:${p(mi)}:00`,
  (y, mo, d, h, mi) => `${month('en', mo)} ${d}, ${y} at ${h % 12 || 12}:${p(mi)} ${h < 12 ? 'AM' : 'PM'}`,
  (y, mo, d, h, mi) => `le ${d} ${month('fr', mo)} ${y} à ${h}h${p(mi)}`,
  (_y, mo, d, h) => `le ${d} ${month('fr', mo)} à ${h}h`,
  (y, mo, d, h, mi) => `am ${d}. ${month('de', mo)} ${y} um ${h}.${p(mi)} Uhr`,
  (_y, mo, d, h) => `am ${d}. ${month('de', mo)} um ${h} Uhr`,
  (y, mo, d, h) => `am ${p(d)}.${p(mo)}.${y} um ${h} Uhr`,
  (y, mo, d, h, mi) => `el ${d} de ${month('es', mo)} de ${y} a las ${h}:${p(mi)}`,
  (_y, mo, d, h) => `il ${d} ${month('it', mo)} alle ${h}`,
  (y, mo, d, h) => `em ${d} de ${month('pt', mo)} de ${y} às ${h}h`,
  (_y, mo, d, h, mi) => `op ${d} ${month('nl', mo)} om ${h}.${p(mi)} uur`,
  (y, mo, d, h, mi) => `${y}年${mo}月${d}日 ${h}時${p(mi)}分`,
  (y, mo, d, h) => `${y}年${mo}月${d}日 ${h}時`,
  (_y, mo, d, h) => `${mo}月${d}日${h < 12 ? '上午' : '下午'}${h % 12 || 12}点`,
  (y, mo, d, h, mi) => `${y}년 ${mo}월 ${d}일 ${h}시 ${mi}분`,
];

describe('a date with its clock time', () => {
  it('the date and the time are each the ones observed; a day or an hour off is not; never a number', () => {
    fc.assert(
      fc.property(minutes, fc.integer({ min: 0, max: WITH_TIME.length - 1 }), (t, form) => {
        const d = new Date(t);
        const write = (at: Date) =>
          WITH_TIME[form]!(
            at.getUTCFullYear(),
            at.getUTCMonth() + 1,
            at.getUTCDate(),
            at.getUTCHours(),
            // Forms that write no minutes say the hour: observed on it.
            at.getUTCMinutes(),
          );
        const onHour = !/:|h\d|\.\d\d Uhr|\.\d\d uur|分/.test(write(new Date(Date.UTC(2026, 0, 1, 14, 30))));
        const at = onHour ? new Date(t - (t % 3_600_000)) : d;
        const right = write(at);
        const seen = at.toISOString().slice(0, 16);
        const read = verdicts(seen, right);
        expect(read.length, right).toBeGreaterThan(0);
        // Every fact it states is the one observed: no number, no length of 14 hours.
        for (const v of read) expect(v, `${right} ${read}`).toMatch(/^(date|time) same$/);
        const dayOff = write(new Date(at.getTime() + DAY));
        expect(verdicts(seen, dayOff), dayOff).toContain('date different');
        const hourOff = write(new Date(at.getTime() + 3_600_000));
        if (new Date(at.getTime() + 3_600_000).getUTCDate() === at.getUTCDate())
          expect(
            verdicts(seen, hourOff).some((v) => v.endsWith('different')),
            hourOff,
          ).toBe(true);
      }),
      RUNS,
    );
  });

  it('a month named by a word (`mars`, `ago`) is a month with a clock time after it as with a year', () => {
    expect(verdicts('2026-03-04T14:00', 'Départ le 4 mars à 14h.')).toEqual(['date same', 'time same']);
    expect(verdicts('2026-08-03T14:00', 'Partenza il 3 ago alle 14.')).toEqual(['date same', 'time same']);
    expect(verdicts('2026-03-04T14:00', 'Départ le 5 mars à 14h.')).toEqual(['date different', 'time same']);
  });

  it('a number after a word that is no clock stays a number (`alle 14 Tage`, `à 14 €`, `takes 14h`)', () => {
    expect(mentionsIn('alle 14 Tage').map((m) => m.kind)).toEqual(['number']);
    expect(mentionsIn('à 14 €').map((m) => m.kind)).toEqual(['money']);
    expect(mentionsIn('The flight takes 14h.').map((m) => m.kind)).toEqual(['unit']);
    expect(mentionsIn('12 Mars bars').map((m) => m.kind)).toEqual(['number']);
  });

  it('each hostile shape takes time linear in its length', () => {
    for (const unit of ['am 03.04. ', '3.4.', '1.1.1', 'à 14h ', 'um 14 ', '14時', '4 mars à '])
      expectLinearIn(unit, unit, (text) => mentionsIn(text));
  });
});
