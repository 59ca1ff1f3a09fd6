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

/**
 * Function words of languages that write dates day first (French, German, Spanish, Italian,
 * Portuguese, Dutch) and that English does not use: `le 03/04/2026`, `am 03/04/2026 und`. In lower
 * case only: a name (`Le Meridien`, `Des Moines`) is no French.
 */
const DAY_FIRST_WORDS =
  /(?<![\p{L}\p{N}'’])(?:le|les|du|des|est|avec|pour|dans|und|ist|mit|für|nicht|der|das|vom|zum|el|los|las|del|para|una|está|il|della|sono|è|het|een|voor|niet|não|com|uma|você)(?![\p{L}\p{N}'’])/gu;

/** Whether a text is written in one of those languages: two or more of their words, fewer of English's. */
function dayFirstLanguage(text: string): boolean {
  const theirs = new Set<string>();
  for (const m of text.matchAll(DAY_FIRST_WORDS)) {
    theirs.add(m[0]);
    if (theirs.size >= 3) break;
  }
  if (theirs.size < 2) return false;
  const english = text.match(/\b(?:the|and|is|are|of|to|for|with|your|you|on|in|at)\b/gi)?.length ?? 0;
  return english < theirs.size;
}

/** The conventions `text` shows (each test a single linear scan). */
export function conventionsOf(text: string): Conventions {
  const decimalComma = DECIMAL_COMMA.test(text);
  const monthFirst = MONTH_FIRST.test(text);
  return {
    // A text's language decides only where its dates and numbers do not.
    dayFirst: decimalComma || DAY_FIRST.test(text) || (!monthFirst && dayFirstLanguage(text)),
    monthFirst,
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
