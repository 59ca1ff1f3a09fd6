// Dates as other languages write them: `1. Dezember 2026`, `1er décembre 2026`, `1 de diciembre de
// 2026`, `1º de dezembro de 2026`, `1° dicembre 2026`, `1 december 2026`, `2026年12月1日`,
// `2026년 12월 1일`. Unread, they were read as pieces: `15. Dezember 2026` a count of 15 (a false
// fail), `2. Dezember 2026` a year the run held (a false pass against December 1).

import { dayOf } from './dates.js';
import { type Pass, pass } from './readings.js';
import { foldText, MONTH as ENGLISH_MONTHS } from './written.js';

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
    /(?<![\w.,])(\d{1,2})(?:\.|er|º|°|ª)?\s{1,3}(?:de\s+)?(\p{L}{3,10})(?!\p{L})\.?(?:,?\s{1,3}(?:de\s+|del\s+)?(\d{4})(?![\d.,]\d))?/gu,
    (m) => {
      const name = foldText(m[2]!);
      const y = m[3] === undefined ? undefined : Number(m[3]);
      const month = MONTH.get(name) ?? (y === undefined ? undefined : MONTH_WITH_YEAR.get(name));
      return month === undefined ? undefined : dayOf(y, month, Number(m[1]));
    },
  ),
  // Chinese, Japanese and Korean: 2026年12月1日, 12月1号, 2026년 12월 1일.
  pass(/(?<!\d)(?:(\d{4})\s?[年년]\s?)?(\d{1,2})\s?[月월]\s?(\d{1,2})\s?[日号號일]/g, (m) =>
    dayOf(m[1] === undefined ? undefined : Number(m[1]), Number(m[2]), Number(m[3])),
  ),
];
