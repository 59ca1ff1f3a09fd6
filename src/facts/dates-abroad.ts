// Dates as other languages write them: `1. Dezember 2026`, `1er décembre 2026`, `1 de diciembre de
// 2026`, `1º de dezembro de 2026`, `1° dicembre 2026`, `1 december 2026`, `2026年12月1日`,
// `2026년 12월 1일`. Unread, they were read as pieces: `15. Dezember 2026` a count of 15 (a false
// fail), `2. Dezember 2026` a year the run held (a false pass against December 1).

import { dayFirst } from './conventions.js';
import { clockOf, DATED_AFTER, DATED_BEFORE, dayOf } from './dates.js';
import { type Conventions, type Made, type Pass, pass } from './readings.js';
import { MONTH as ENGLISH_MONTHS, foldText, WEEKDAY_NAME } from './written.js';

const NAMES: Array<[number, string]> = [
  [1, 'januar janner janvier enero gennaio janeiro januari'],
  [2, 'februar fevrier febrero febbraio fevereiro februari'],
  [3, 'marz marzo maart'],
  [4, 'april avril abril aprile'],
  [5, 'mai mayo maggio maio mei'],
  [6, 'juni juin junio giugno junho'],
  [7, 'juli juillet julio luglio julho'],
  [8, 'august aout agosto augustus'],
  [9, 'september septembre septiembre setiembre settembre setembro'],
  [10, 'oktober octobre octubre ottobre outubro'],
  [11, 'november novembre noviembre novembro'],
  [12, 'dezember decembre diciembre dicembre dezembro december'],
];
/**
 * Names that are also words or names (`12 Mars bars`, `Marco`) and abbreviations (`3 ago`, `12 out
 * of`, `4 set`): a month only with a year after them (`12 mars 2026`, `3 ago 2026`).
 */
const WITH_YEAR: Array<[number, string]> = [
  [1, 'jan jän janv ene gen'],
  [2, 'feb fevr fev'],
  [3, 'mars marco mrt mär'],
  [4, 'avr abr apr'],
  [5, 'mag may'],
  [6, 'giu jun'],
  [7, 'juil lug jul'],
  [8, 'ago aug'],
  [9, 'sept sep set'],
  [10, 'okt oct ott out'],
  [11, 'nov'],
  [12, 'dez dec dic'],
];
const table = (rows: Array<[number, string]>) =>
  new Map(rows.flatMap(([m, names]) => names.split(' ').map((n) => [foldText(n), m] as const)));
const MONTH = table(NAMES);
const MONTH_WITH_YEAR = table(WITH_YEAR);
const ENGLISH_MONTH = new RegExp(`^${ENGLISH_MONTHS}$`, 'i');

/** Whether a word is a month's name or abbreviation in English or one of the languages above (`Dec`, `décembre`, `März`). */
export function isMonthWord(word: string): boolean {
  const folded = foldText(word);
  return ENGLISH_MONTH.test(word) || MONTH.has(folded) || MONTH_WITH_YEAR.has(folded);
}

export const DATE_ABROAD_PASSES: Pass[] = [
  // The day first, a dot or an ordinal mark after it, `de` before the month and the year.
  pass(
    /(?<![\w.,])(\d{1,2})(?:\.|er|º|°|ª)?\s{1,3}(?:de\s+)?(\p{L}{3,10})(?!\p{L})\.?(?:,?\s{1,3}(?:de\s+|del\s+)?(\d{4})(?![\d.,]\d))?(?:(?=(\s{1,3}(?:à|um|a\s+las?|alle|às|om)\s{1,3}\d|,?\s{1,3}\d{1,2}(?:[:h]\d\d|\s?(?:h|Uhr|uur)(?!\p{L}))))|)/gu,
    (m) => {
      const name = foldText(m[2]!);
      const y = m[3] === undefined ? undefined : Number(m[3]);
      // A name that is also a word (`mars`, `ago`) is a month with a year or a clock time after it (`4 mars à 14h`).
      const month = MONTH.get(name) ?? (y === undefined && m[4] === undefined ? undefined : MONTH_WITH_YEAR.get(name));
      return month === undefined ? undefined : dayOf(y, month, Number(m[1]));
    },
  ),
  // 03.04.26, 3.4.26, 03.04. (day first, a two-digit year or none) where a date stands: see dotted.
  pass(/(?<![\w.,@/:$€£¥₩₹+-])(\d{1,2})\.(\d{1,2})\.(\d{2}(?!\d))?(?![\w]|[.,:+-]?\d|-\w)/g, (m, c) => dotted(m, c)),
  // Clock times as other languages write them: 14 Uhr, um 14.30 Uhr, à 14h30, a las 14, alle 14, às 14h, om 14.00 uur.
  pass(
    /(?<![\p{L}\p{N}.,:])(?:(à|vers|dès|a\s+las?|hacia\s+las?|alle|às|as|om|um)\s{1,3})?(\d{1,2})(?:[.:h](\d{2}))?(?:\s?(Uhr|uur|h|heures?|horas?|ore)(?!\p{L}))?(?!\s?[\p{L}\p{N}%$€£¥₹₩]|[.,]\d)/giu,
    (m) => clockAbroad(m),
  ),
  // 14時30分, 14点, 14시 30분, 下午2点: after a date, a half of the day, or with its minutes.
  pass(
    /(?:(下午|上午|晚上|午後|午前|오후|오전)\s?)?(\d{1,2})\s?[時时点點시](?![間间간])(?:\s?(\d{1,2})\s?[分분])?/gu,
    (m) => clockCjk(m),
  ),
  // Chinese, Japanese and Korean: 2026年12月1日, 12月1号, 2026년 12월 1일.
  pass(/(?<!\d)(?:(\d{4})\s?[年년]\s?)?(\d{1,2})\s?[月월]\s?(\d{1,2})\s?[日号號일]/g, (m) =>
    dayOf(m[1] === undefined ? undefined : Number(m[1]), Number(m[2]), Number(m[3])),
  ),
];

/** Words after which `03.04.` is a date: `am`, `vom`, `bis`, `le`, `du`, `el`, `dal`, `op`, `em`, `Datum:`, a weekday (`Fr.`). */
const DOTTED_BEFORE = new RegExp(
  `(?<![\\p{L}])(?:am|vom|bis|zum|ab|seit|den|le|du|au|el|del|al|il|dal|op|van|tot|em|de|desde|hasta|entro|dès|depuis|datum|date|fecha|data|stand|termin|mo|di|mi|do|fr|sa|so|lun|mar|mer|jeu|ven|sam|dim|${WEEKDAY_NAME})\\.?,?:?\\s{1,3}$`,
  'iu',
);
/** A version or a release before it: `v1.2.3`, `Version 3.4.26`, `Ubuntu 22.04.` — no date. */
const VERSION_BEFORE =
  /(?:version|ver|release|rel|build|rev|revision|node|python|ubuntu|ios|android|macos|firefox|chrome|java|kernel|firmware|patch|sdk|api|update)\.?:?\s{0,3}$/i;
/** A clock time after it: `03.04. um 14 Uhr`, `03.04.26 14:00`, `le 03.04. à 14h`. */
const CLOCK_AFTER = /^,?\s{1,3}(?:(?:um|à|a\s+las?|alle|às|om|at)\s{1,3}\d|\d{1,2}[:.h]\d\d)/i;

/**
 * `03.04.26`, `3.4.26`, `03.04.`: day first (no convention writes dots month first), a two-digit
 * year this century's or none. A date only where one stands — a word before it (`am`, `le`, `on`,
 * a weekday), a clock time after it, a text that writes day first (German, a decimal comma); with a
 * year also a piece with a leading zero. Never after a version's word (`Version 3.4.26`). With a
 * year and none of that it is unread (a date or a version?); with none it stays a number (`15.04.`
 * ends a sentence after a decimal as often).
 */
function dotted(m: RegExpExecArray, c: () => Conventions): Made | undefined {
  const [d, mo] = [Number(m[1]), Number(m[2])];
  const y = m[3] === undefined ? undefined : 2000 + Number(m[3]);
  if (d < 1 || d > 31 || mo < 1 || mo > 12) return undefined;
  const before = m.input.slice(Math.max(0, m.index - 24), m.index);
  if (VERSION_BEFORE.test(before)) return undefined;
  const after = m.input.slice(m.index + m[0].length, m.index + m[0].length + 20);
  const stands =
    DOTTED_BEFORE.test(before) ||
    DATED_BEFORE.test(before) ||
    CLOCK_AFTER.test(after) ||
    DATED_AFTER.test(after) ||
    (y !== undefined && /^0|\.0/.test(m[0])) ||
    dayFirst(c()) === true;
  if (stands) return dayOf(y, mo, d);
  return y === undefined
    ? undefined
    : { kind: 'date', claim: [], observed: [], unread: `${m[0]}: a date (day first) or a version?` };
}

/** `14 Uhr`, `à 14h30`, `a las 14`: a clock time by its unit (`Uhr`) or the word before it; else not one (`14h` may be a length). */
function clockAbroad(m: RegExpExecArray): Made | undefined {
  const [, before, h, mi, unit] = m;
  const uhr = unit !== undefined && /^uhr$/i.test(unit);
  if (!uhr && before === undefined) return undefined;
  return clockOf(Number(h), Number(mi ?? 0));
}

/** `14時`, `下午2点`, `14시 30분`: a clock time after a date (`日`, `号`, `일`), a half of the day, or with minutes. */
function clockCjk(m: RegExpExecArray): Made | undefined {
  const [, half, h, mi] = m;
  const dated = /[日号號일]\s?$/u.test(m.input.slice(Math.max(0, m.index - 2), m.index));
  if (half === undefined && mi === undefined && !dated) return undefined;
  const pm = half !== undefined && /下午|晚上|午後|오후/u.test(half);
  const hour = Number(h);
  if (half !== undefined && hour > 12) return undefined;
  return clockOf(pm && hour < 12 ? hour + 12 : half !== undefined && hour === 12 && !pm ? 0 : hour, Number(mi ?? 0));
}
