// Bare weekdays (`on Friday`, `Friday's flight`, `am Freitag`, `vendredi`, `下周五`, `금요일`) read
// against the run's day, generated over days and languages, against the object the sentence names
// (`{ depart_date }`): the coming one is same, another weekday never is (a false pass), the date
// written as a weekday is never refuted (a false fail: before, a bare weekday was not read at all).
// Where it is no one day (a habit, a range, a name, a weekday beside its date) it is not read.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLinearIn } from '../../test/support/linear-time.js';
import { DAY, days, dateVerdicts as verdicts, ymd } from '../../test/support/run-days.js';
import { FactIndex, mentionsIn } from './index.js';

const RUNS = { seed: 20261127, numRuns: 150 };
const AT = { pos: 1, stepId: 1, label: 'step 1' };

/** Weekday names (0 Sunday) and a sentence in each language that names one day. */
const LANGUAGES: Array<[string[], (name: string) => string]> = [
  [
    ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'],
    (d) => `Your flight leaves on ${d}.`,
  ],
  [
    ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'],
    (d) => `I have you on ${d}'s flight to Denver.`,
  ],
  [['Sonntag', 'Montag', 'Dienstag', 'Mittwoch', 'Donnerstag', 'Freitag', 'Samstag'], (d) => `Ihr Flug geht am ${d}.`],
  [['dimanche', 'lundi', 'mardi', 'mercredi', 'jeudi', 'vendredi', 'samedi'], (d) => `Votre vol part ${d}.`],
  [['domingo', 'lunes', 'martes', 'miércoles', 'jueves', 'viernes', 'sábado'], (d) => `Su vuelo sale el ${d}.`],
  [['domenica', 'lunedì', 'martedì', 'mercoledì', 'giovedì', 'venerdì', 'sabato'], (d) => `Il volo parte ${d}.`],
  [
    ['domingo', 'segunda-feira', 'terça-feira', 'quarta-feira', 'quinta-feira', 'sexta-feira', 'sábado'],
    (d) => `O seu voo sai na ${d}.`,
  ],
  [
    ['zondag', 'maandag', 'dinsdag', 'woensdag', 'donderdag', 'vrijdag', 'zaterdag'],
    (d) => `Uw vlucht vertrekt op ${d}.`,
  ],
  [['星期日', '周一', '周二', '星期三', '周四', '周五', '周六'], (d) => `您的航班${d}起飞。`],
  [['日曜日', '月曜日', '火曜日', '水曜日', '木曜日', '金曜日', '土曜日'], (d) => `フライトは${d}に出発します。`],
  [['일요일', '월요일', '화요일', '수요일', '목요일', '금요일', '토요일'], (d) => `항공편은 ${d}에 출발합니다.`],
];

describe('a bare weekday', () => {
  it('is the coming one: that day is same, any other day of the fortnight is not; unread with no run day', () => {
    fc.assert(
      fc.property(days, fc.integer({ min: 0, max: 6 }), fc.constantFrom(...LANGUAGES), (today, w, [names, say]) => {
        const day = { today: [ymd(today)], source: 'test' };
        const answer = say(names[w]!);
        const wd = new Date(today).getUTCDay();
        const ahead = (w - wd + 7) % 7;
        // Said on that weekday it is today or a week on: either grounds it.
        for (const n of ahead === 0 ? [0, 7] : [ahead])
          expect(verdicts(ymd(today + n * DAY), answer, day), `${answer} ${n}`).toEqual(['same']);
        for (let n = -6; n <= 13; n++)
          if (n !== ahead && !(ahead === 0 && n === 7))
            expect(verdicts(ymd(today + n * DAY), answer, day), `${answer} ${n}`).toEqual(['different']);
        expect(verdicts(ymd(today + ahead * DAY), answer, undefined), answer).toEqual(['unread']);
      }),
      RUNS,
    );
  });

  it('in the past tense it is also the last one; a word that says which decides', () => {
    const day = { today: ['2026-11-24'], source: "the run's clock" }; // a Tuesday
    const cases: Array<[string, string[], string[]]> = [
      ['Your flight left on Friday.', ['2026-11-20', '2026-11-27'], ['2026-11-21', '2026-12-04']],
      ['I booked it on Friday.', ['2026-11-20', '2026-11-27'], ['2026-11-13']],
      ['Ihr Flug war am Freitag.', ['2026-11-20', '2026-11-27'], ['2026-11-26']],
      ['Votre vol était vendredi.', ['2026-11-20', '2026-11-27'], ['2026-11-28']],
      ['Your flight is scheduled for Friday.', ['2026-11-27'], ['2026-11-20']],
      ['vendredi prochain', ['2026-11-27', '2026-12-04'], ['2026-11-20']],
      ['vendredi dernier', ['2026-11-20', '2026-11-13'], ['2026-11-27']],
      ['el viernes pasado', ['2026-11-20'], ['2026-11-27']],
      ['el próximo viernes', ['2026-11-27', '2026-12-04'], ['2026-11-20']],
      ['nächsten Freitag', ['2026-11-27', '2026-12-04'], ['2026-11-20']],
      ['letzten Freitag', ['2026-11-20'], ['2026-11-27']],
      ['venerdì scorso', ['2026-11-20'], ['2026-11-27']],
      ['vorige vrijdag', ['2026-11-20'], ['2026-11-27']],
      // Chinese, Japanese, Korean: next week's Friday is that week's, never this week's.
      ['下周五', ['2026-12-04'], ['2026-11-27']],
      ['上周五', ['2026-11-20'], ['2026-11-27']],
      ['本周五', ['2026-11-27'], ['2026-12-04']],
      ['来週の金曜日', ['2026-12-04'], ['2026-11-27']],
      ['다음 주 금요일', ['2026-12-04'], ['2026-11-27']],
      ['this coming Friday', ['2026-11-27'], ['2026-12-04']],
    ];
    for (const [answer, right, wrong] of cases) {
      for (const d of right) expect(verdicts(d, answer, day), `${answer} ${d}`).toEqual(['same']);
      for (const d of wrong) expect(verdicts(d, answer, day), `${answer} ${d}`).toEqual(['different']);
    }
  });

  it('a weekday observed grounds the date claimed, and the time beside it is still read', () => {
    const day = { today: ['2026-11-24'], source: 'test' };
    const index = new FactIndex({ day });
    index.addValue({ flight: 'F9 1021', departs: 'Friday 14:00' }, AT);
    const read = (answer: string) => mentionsIn(answer, { day }).map((m) => `${m.kind} ${index.verdict(m).verdict}`);
    expect(read('Departs November 27.')).toEqual(['date same']);
    // A weekday and a time are one fact (weekday-times.ts), grounded by the day and the time observed.
    expect(read('Departs Friday at 14:00.')).toEqual(['date same']);
    expect(read('Departs Friday at 15:00.')).toEqual(['date different']);
    expect(read('Departs Thursday at 14:00.')).toEqual(['date different']);
    expect(read('Departs November 28.')).toEqual(['date different']);
  });

  it('is not read where it is no one day: a habit, a range, a name, a weekday beside its date', () => {
    const day = { today: ['2026-11-24'], source: 'test' };
    for (const text of [
      'Open every Friday.',
      'Open Monday to Friday.',
      'Open Monday–Friday.',
      'du lundi au vendredi',
      'de lunes a viernes',
      'von Montag bis Freitag',
      'Montag-Freitag',
      'jeden Freitag',
      'Le vendredi, le marché est ouvert.',
      'los viernes',
      'Black Friday deals',
      'Good Friday',
      'the Sunday Times',
      'Plácido Domingo sings',
      'Mardi gras',
      'Viernes Santo',
      'Fridays are busy.',
      'Friday the 13th',
      '每周五',
      '周一至周五',
      '月曜日から金曜日',
      '매주 금요일',
      '一周一次',
    ])
      expect(
        mentionsIn(text, { day }).filter((m) => m.kind === 'date'),
        text,
      ).toEqual([]);
    // Beside its date the date is read, and the weekday with it (never a second, other day).
    const beside: Array<[string, string]> = [
      ['Friday, December 4', 'Friday, December 4'],
      ['vendredi 4 décembre', '4 décembre'],
      ['Dec 4 (Friday)', 'Dec 4'],
      ['2026-12-04 (Friday)', '2026-12-04'],
      ['Freitag, den 4. Dezember', '4. Dezember'],
      ['12月4日（金曜日）', '12月4日'],
    ];
    for (const [text, date] of beside)
      expect(
        mentionsIn(text, { day })
          .filter((m) => m.kind === 'date')
          .map((m) => m.text),
        text,
      ).toEqual([date]);
  });

  it('each hostile shape takes time linear in its length', () => {
    const day = { today: ['2026-11-24'], source: 'test' };
    for (const unit of ['on Friday ', 'Friday ', 'Monday to ', 'Black Friday ', 'el viernes ', '周五', '下周', 'a'])
      expectLinearIn(unit, unit, (text) => mentionsIn(text, { day }));
  });
});
