// What a text shows of the way it writes numbers and dates, read from its unambiguous forms: a
// date that can only be day first (25/12/2026, 25.12.2026) or month first (12/25/2026), a decimal
// comma (1.299,00; 12,50 €; 1,5 kg) or a decimal point (1,299.00; $12.50). An ambiguous form in
// the same text (01/12/2026, 1,234, €12.999) is read by it; with no evidence, or evidence both
// ways, the form stays ambiguous.
import type { Conventions } from './readings.js';

const DAY_FIRST =
  /(?<![\w/.])(?:1[3-9]|2\d|3[01])[/.](?:0?[1-9]|1[0-2])[/.]\d{4}(?!\d)|(?<![\w.])\d{1,2}\.\d{1,2}\.\d{4}(?![\w]|\.\d)/;
const MONTH_FIRST = /(?<![\w/])(?:0?[1-9]|1[0-2])\/(?:1[3-9]|2\d|3[01])\/\d{4}(?!\d)/;
const MONEY_MARK = '(?:[$€£¥₩₹]|\\b[A-Z]{3}\\b)';
const UNIT_MARK = '(?:%|kg|km|cm|mm|g|l|h|min|s|ms)(?![A-Za-z])';
const DECIMAL_COMMA = new RegExp(
  `\\d\\.\\d{3},\\d{1,2}(?!\\d|[.,]\\d)|(?<![\\d.,])\\d+,\\d{1,2}\\s?(?:${MONEY_MARK}|${UNIT_MARK})|${MONEY_MARK}\\s?\\d+,\\d{1,2}(?!\\d|[.,]\\d)`,
);
const DECIMAL_POINT = new RegExp(
  `\\d,\\d{3}\\.\\d{1,2}(?!\\d|[.,]\\d)|(?<![\\d.,])\\d+\\.\\d{1,2}\\s?(?:${MONEY_MARK}|${UNIT_MARK})|${MONEY_MARK}\\s?\\d+\\.\\d{1,2}(?!\\d|[.,]\\d)`,
);

export const NO_CONVENTIONS: Conventions = {
  dayFirst: false,
  monthFirst: false,
  decimalComma: false,
  decimalPoint: false,
};

/** The conventions `text` shows (each test a single linear scan). */
export function conventionsOf(text: string): Conventions {
  const decimalComma = DECIMAL_COMMA.test(text);
  return {
    dayFirst: decimalComma || DAY_FIRST.test(text),
    monthFirst: MONTH_FIRST.test(text),
    decimalComma,
    decimalPoint: DECIMAL_POINT.test(text),
  };
}

/** Day first when only that is shown, month first when only that is, else undefined (can't tell). */
export function dayFirst(c: Conventions): boolean | undefined {
  return c.dayFirst === c.monthFirst ? undefined : c.dayFirst;
}

/** A decimal comma when only that is shown, a decimal point when only that is, else undefined. */
export function decimalComma(c: Conventions): boolean | undefined {
  return c.decimalComma === c.decimalPoint ? undefined : c.decimalComma;
}
