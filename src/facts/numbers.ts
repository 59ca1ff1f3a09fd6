// Numbers as people write them: percentages, quantities with units, magnitudes (12.5k), ordinals,
// plain numbers and number words.

import { CURRENCY_WORD, CURRENCY_WORDS } from './currencies.js';
import { moneyClaim, moneyObserved } from './money.js';
import {
  ambiguousMention,
  at,
  bareObserved,
  digitKeys,
  halfUnit,
  type Made,
  num,
  type Pass,
  pass,
  plainClaim,
  type Reading,
} from './readings.js';
import { NUMBER_WORDS, wordsValue } from './words.js';
import {
  FRACTION,
  FRACTIONS,
  INDIAN,
  MAGNITUDE,
  NUM,
  NUM_START,
  parseNumber,
  SPACED,
  UNIT_ALT,
  UNITS,
} from './written.js';

const FRACTION_CHARS = Object.keys(FRACTIONS).join('');
/** A percentage P% is P as a percentage, P/100 as a fraction, and P as a bare number only from 1 up (0.15% is not 0.15). */
export function percentClaim(value: number, tolerance: number): Reading[] {
  const out = [at('pct', value, tolerance), num(value / 100, tolerance / 100)];
  if (Math.abs(value) >= 1) out.push(num(value, tolerance));
  return out;
}

export function percentObserved(value: number): Reading[] {
  // As with a claim, 0.15% does not restate a bare 0.15; 15% restates 15.
  const out = [at('pct', value), at('q', value / 100)];
  if (Math.abs(value) >= 1) out.push(at('q', value));
  return out;
}

/** Percentages, quantities, magnitudes and ordinals: read before ids. */
export const QUANTITY_PASSES: Pass[] = [
  // Percentages: 25%, 25 percent. Read as 25 or 0.25.
  pass(new RegExp(`${NUM_START}${NUM}\\s?(%|percent\\b|per cent\\b|pct\\b)`, 'g'), (m) => {
    const value = parseNumber(m[1]!);
    return { kind: 'percent', value, claim: percentClaim(value, halfUnit(m[1]!)), observed: percentObserved(value) };
  }),
  // Quantities with units: 1.5 s, 250ms, 3 kg, 24 hours, a 90-minute call (not an id).
  pass(new RegExp(`${NUM_START}${NUM}(?:\\s|-)?(${UNIT_ALT})(?![A-Za-z0-9])`, 'g'), (m) => {
    const [dim, factor] = UNITS[m[2]!]!;
    const value = parseNumber(m[1]!);
    const base = at(dim, value * factor, halfUnit(m[1]!) * factor);
    return { kind: 'unit', value, claim: [num(value), base], observed: [at('q', value), at(dim, value * factor)] };
  }),
  // ISO 8601 durations: PT1H30M, P2DT3H, PT90M, PT1.5S, P2W — as a time in seconds. Years and
  // months (P1Y, P3M) have no length in seconds and are not read.
  pass(
    /(?<![\w-])P(?=T?\d)(?:(\d+)W)?(?:(\d+)D)?(?:T(?=\d)(?:(\d+(?:[.,]\d+)?)H)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)S)?)?(?![\w-])/g,
    (m) => {
      if (m.slice(1).every((g) => g === undefined) || m[0].endsWith('T')) return undefined;
      const part = (i: number) => Number((m[i] ?? '0').replace(',', '.'));
      const seconds = part(1) * 604800 + part(2) * 86400 + part(3) * 3600 + part(4) * 60 + part(5);
      return { kind: 'unit', value: seconds, claim: [at('time', seconds)], observed: [at('time', seconds)] };
    },
  ),
  // Magnitudes: 12.5k, 1.2M, 3 million.
  pass(
    new RegExp(`${NUM_START}${NUM}(?:(k|K|M|bn|B)(?![A-Za-z0-9])|\\s(thousand|million|billion|trillion)\\b)`, 'g'),
    (m) => {
      const scale = MAGNITUDE[m[2] ?? m[3]!]!;
      const value = parseNumber(m[1]!) * scale;
      return {
        kind: 'number',
        value,
        claim: plainClaim(value, halfUnit(m[1]!) * scale),
        observed: bareObserved(value),
      };
    },
  ),
  // Ordinals: 21st.
  pass(/(?<![\w.-])(\d+)(?:st|nd|rd|th)\b/g, (m) => {
    const value = Number(m[1]);
    return { kind: 'number', value, claim: plainClaim(value), observed: [num(value)] };
  }),
];

/** A plain number's readings; its digits as written also match an id typed without its prefix. */
function plainNumber(value: number, digits: string): Made & { value: number } {
  return {
    kind: 'number',
    value,
    claim: [...plainClaim(value), ...digitKeys(digits, 'claim')],
    observed: [...bareObserved(value), ...digitKeys(digits, 'observed')],
  };
}

/** Plain numbers and number words: read last. */
export const NUMBER_PASSES: Pass[] = [
  // Plain numbers: 12,500, 189.00, #7713, −25. A lone `1,234` or `12.999` is read by the rest of
  // the text: with a decimal comma elsewhere `1,234` is 1.234 and `12.999` is 12999; with both
  // conventions shown it is ambiguous; with neither, `1,234` is thousands and `12.999` a decimal.
  // Groups of three after a space, a no-break or a thin space are one number (`1 299`, `1\u202f299`),
  // as are Indian lakhs (`1,29,999`): never `299` or `1,29` read out of them.
  pass(
    new RegExp(
      `(?<![\\w.,])#?[-−]?(?:${FRACTION}|(?:${INDIAN}|${SPACED}|\\d{1,3}(?:,\\d{3})+|\\d+)(?:\\.\\d+)?(?![\\w${FRACTION_CHARS}])(?!,\\d{3}))`,
      'g',
    ),
    (m, c) => {
      const written = m[0].replace(/^#/, '');
      const digits = written.replace(/^[-−]/, '');
      const lone = /^\d{1,3},\d{3}$/.test(digits) || /^\d+\.\d{3}$/.test(digits);
      if (FRACTIONS[digits.at(-1)!] !== undefined) {
        const value = parseNumber(written);
        return { kind: 'number', value, claim: plainClaim(value, halfUnit(written)), observed: bareObserved(value) };
      }
      if (!lone || !c().decimalComma) return plainNumber(parseNumber(written), digits);
      const sign = digits === written ? 1 : -1;
      const thousands = plainNumber(sign * Number(digits.replace(/[.,]/, '')), digits);
      const decimal = plainNumber(sign * Number(digits.replace(',', '.')), digits);
      if (!c().decimalPoint) return digits.includes(',') ? decimal : thousands;
      return ambiguousMention('number', `${written}: thousands or decimals?`, [
        { as: String(thousands.value), claim: thousands.claim, observed: thousands.observed },
        { as: String(decimal.value), claim: decimal.claim, observed: decimal.observed },
      ]);
    },
  ),
  // Number words: three, twenty-five, one hundred twenty, a dozen, one point two million; with a
  // currency word after them an amount (`twelve dollars`), in that currency and no other.
  pass(
    new RegExp(`(?:(?<![\\w-])(-))?(${NUMBER_WORDS})(?:\\s+(${CURRENCY_WORD})\\b)?`, 'gi'),
    (m) => {
      const read = wordsValue(m[2]!);
      if (read === undefined) return undefined;
      const value = m[1] === undefined ? read.value : -read.value;
      const currencies = m[3] === undefined ? undefined : CURRENCY_WORDS[m[3].toLowerCase()];
      if (currencies !== undefined)
        return {
          kind: 'money',
          value,
          claim: moneyClaim(value, read.tolerance, currencies),
          observed: moneyObserved(value, currencies),
        };
      return { kind: 'number', value, claim: plainClaim(value, read.tolerance), observed: bareObserved(value) };
    },
    false,
  ),
];
