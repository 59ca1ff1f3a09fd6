// Numbers as people write them: percentages, quantities with units, magnitudes (12.5k), ordinals,
// plain numbers and number words.

import { CURRENCY_WORD, CURRENCY_WORDS } from './currencies.js';
import { moneyClaim, moneyObserved } from './money.js';
import {
  ambiguousMention,
  at,
  bareObserved,
  baseReadings,
  type Conventions,
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
  DOT_GROUPED,
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
/**
 * A percentage P% is P as a percentage, P/100 as a fraction, and P as a bare number only from 1 up
 * (0.15% is not 0.15) and only where a percentage may stand (`n%`: free text, a rate's key): 15%
 * is not `qty: 15`.
 */
export function percentClaim(value: number, tolerance: number): Reading[] {
  const out = [at('pct', value, tolerance), num(value / 100, tolerance / 100)];
  if (Math.abs(value) >= 1) out.push(at('n%', value, tolerance));
  return out;
}

export function percentObserved(value: number): Reading[] {
  // As with a claim, 0.15% does not restate a bare 0.15; 15% restates 15.
  const out = [at('pct', value), at('q', value / 100)];
  if (Math.abs(value) >= 1) out.push(at('q', value));
  return out;
}

/** A written quantity's readings: the number as written and, in its dimension's base unit, what it measures. */
function quantity(value: number, base: (tolerance: number) => Reading[], tolerance: number): Made {
  return {
    kind: 'unit',
    value,
    claim: [num(value), ...base(tolerance)],
    observed: [at('q', value), ...base(0)],
  };
}

/** Degrees in °C from a scale's letter: an offset as well as a factor (68 °F is 20 °C). */
export function celsius(value: number, scale: string): number {
  return /^f/i.test(scale) ? ((value - 32) * 5) / 9 : value;
}

/** An ASCII fraction's denominators read (`1 1/2`, `3/4 kg`): a date's `24/7` or a score's `4/5` is not one. */
const ASCII_FRACTION = '(?:(\\d{1,4})\\s+)?(\\d{1,2})\\/(2|3|4|8|16)(?![\\w/.,])';

/** Units of a compound length of time, by their spellings: seconds each, largest first. */
const CLOCK_UNITS: Array<[RegExp, number]> = [
  [/^d(?:ays?)?$/i, 86400],
  [/^h(?:ours?|rs?)?$/i, 3600],
  [/^m(?:in(?:ute)?s?)?$/i, 60],
  [/^s(?:ec(?:ond)?s?)?$/i, 1],
];
const CLOCK_UNIT = '(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)';
const CLOCK_PART = `\\d{1,4}(?:[.,]\\d{1,2})?\\s?${CLOCK_UNIT}(?![A-Za-z])`;
/** Two to four parts: `2 hours 30 minutes`, `2h 30m`, `2h30m`, `1 day, 4 hours and 5 minutes`. */
const COMPOUND_TIME = new RegExp(
  `${NUM_START}${CLOCK_PART}(?:(?:,\\s?|\\s)(?:and\\s)?|\\s?)${CLOCK_PART}(?:(?:(?:,\\s?|\\s)(?:and\\s)?|\\s?)${CLOCK_PART}){0,2}`,
  'g',
);

/**
 * A length of time written in parts, largest unit first (`2 hours 30 minutes`, `2h 30m`, `1 day 4
 * hours`): one length, in seconds, to half its last part's unit. Before, each part was a quantity of
 * its own, and `2h 30m` against `duration_minutes: 150` was two unsupported claims (and `30m` 30 metres).
 * Parts not in descending units (`3 hours, 5 hours`) are no compound: undefined, read part by part.
 */
function compoundTime(written: string): Made | undefined {
  const parts = [...written.matchAll(/(\d{1,4}(?:[.,]\d{1,2})?)\s?([A-Za-z]+)/g)];
  let seconds = 0;
  let last = Number.POSITIVE_INFINITY;
  for (const [, n, unit] of parts) {
    const size = CLOCK_UNITS.find(([re]) => re.test(unit!))?.[1];
    if (size === undefined || size >= last) return undefined;
    seconds += parseNumber(n!) * size;
    last = size;
  }
  const tolerance = halfUnit(parts.at(-1)![1]!) * last;
  return { kind: 'unit', value: seconds, claim: [at('time', seconds, tolerance)], observed: [at('time', seconds)] };
}

/** Percentages, quantities, magnitudes and ordinals: read before ids. */
export const QUANTITY_PASSES: Pass[] = [
  // Compound lengths of time (`2 hours 30 minutes`, `2h 30m`): before the units, which would read each part.
  pass(COMPOUND_TIME, (m) => compoundTime(m[0])),
  // Scientific notation: 1.2e6, 3.5E-4, 2.5 × 10^6, 1.2·10⁶ — to the mantissa's last written digit.
  pass(
    /(?<![\w.,])([-−]?\d+(?:\.\d+)?)(?:[eE]([-+−]?\d{1,3})|\s?[×x·*]\s?10(?:\^|\*\*)([-−]?\d{1,3}))(?![\w.,])/g,
    (m) => {
      const exponent = Number((m[2] ?? m[3]!).replace('−', '-'));
      const mantissa = m[1]!.replace('−', '-');
      const value = Number(`${mantissa}e${exponent}`);
      if (!Number.isFinite(value)) return undefined;
      const tolerance = Number(`${halfUnit(mantissa)}e${exponent}`);
      return { kind: 'number', value, claim: plainClaim(value, tolerance), observed: bareObserved(value) };
    },
  ),
  // Temperatures: 20 °C, 68°F, 20℃, 20 degrees Celsius — as °C, to the last written digit.
  pass(
    new RegExp(`${NUM_START}${NUM}\\s?(?:[°º˚]\\s?([CF])|(℃|℉)|degrees?\\s+(Celsius|Fahrenheit|C|F))(?![A-Za-z])`, 'g'),
    (m) => {
      const scale = m[2] ?? (m[3] === '℉' ? 'F' : m[3] === '℃' ? 'C' : m[4]!);
      const value = parseNumber(m[1]!);
      const factor = /^f/i.test(scale) ? 5 / 9 : 1;
      return quantity(value, (t) => [at('temp', celsius(value, scale), t)], halfUnit(m[1]!) * factor);
    },
  ),
  // ASCII fractions: 1 1/2 (a whole and a fraction), 3/4 kg (a fraction alone only with a unit).
  pass(new RegExp(`${NUM_START}${ASCII_FRACTION}(?:\\s?(${UNIT_ALT})(?![A-Za-z0-9]))?`, 'g'), (m) => {
    const [whole, top, bottom, unit] = [m[1], Number(m[2]), Number(m[3]), m[4]];
    if (top >= bottom || top === 0 || (whole === undefined && unit === undefined)) return undefined;
    const value = Number(whole ?? 0) + top / bottom;
    const tolerance = 0.5 / bottom;
    if (unit === undefined)
      return { kind: 'number', value, claim: plainClaim(value, tolerance), observed: bareObserved(value) };
    return quantity(value, (t) => baseReadings(UNITS[unit]!, value, t), tolerance);
  }),
  // Percentages: 25%, 25 percent. Read as 25 or 0.25.
  pass(new RegExp(`${NUM_START}${NUM}\\s?(%|percent\\b|per cent\\b|pct\\b)`, 'g'), (m) => {
    const value = parseNumber(m[1]!);
    return { kind: 'percent', value, claim: percentClaim(value, halfUnit(m[1]!)), observed: percentObserved(value) };
  }),
  // Quantities with units: 1.5 s, 250ms, 3 kg, 24 hours, a 90-minute call (not an id).
  pass(new RegExp(`${NUM_START}${NUM}(?:\\s|-)?(${UNIT_ALT})(?![A-Za-z0-9])`, 'g'), (m) => {
    const value = parseNumber(m[1]!);
    return quantity(value, (t) => baseReadings(UNITS[m[2]!]!, value, t), halfUnit(m[1]!));
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

/**
 * Groups of three digits after plain spaces (`123 456 789`): one number as a French text writes it,
 * or a list (of ids, of counts) as an English one does. A text with a decimal comma writes one
 * number; one with a decimal point, a list; one with neither may mean either, so as an observation
 * each reading is only a maybe. As a claim it is grounded by the number, or else by every part.
 */
function spacedGroups(written: string, c: Conventions): Made {
  // `2 002` lists no `002`: a group after the first with a leading zero is a thousands group.
  if (/ 0/.test(written)) return plainNumber(parseNumber(written), '');
  return oneOrListed(written, ' ', `${written}: one number or a list?`, c);
}

/**
 * A comma before one or two digits in a plain number (`12,5`, `3,75`): a decimal comma as a German
 * or French text writes it, or two numbers listed without a space as an English one may; read by the
 * text's conventions as spaced groups are. Never the whole number before the comma alone (`12,5` is not 12).
 */
function commaDecimal(written: string, c: Conventions): Made {
  return oneOrListed(written, ',', `${written}: a decimal comma or two numbers?`, c);
}

/**
 * `written` as one number or as the numbers `separator` lists: one in a text with a decimal comma,
 * a list (the number only a maybe) in one with a decimal point, either (each a maybe) in one with
 * neither or both. As a claim: grounded by the number, or else by every part.
 */
function oneOrListed(written: string, separator: string, why: string, c: Conventions): Made {
  const whole = plainNumber(parseNumber(written), '');
  if (c.decimalComma && !c.decimalPoint) return whole;
  const parts = written.split(separator).map((p) => plainNumber(parseNumber(p), p.replace(/^[-−]/, '')));
  const unsure = (rs: Reading[]) => rs.map((r) => ({ ...r, unsure: why }));
  const listed = parts.flatMap((p) => p.observed);
  const list = c.decimalPoint && !c.decimalComma;
  return {
    ...whole,
    observed: [...unsure(whole.observed), ...(list ? listed : unsure(listed))],
    parts: parts.map((p) => p.claim),
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
      `(?<![\\w.,])#?[-−]?(?:(?:${DOT_GROUPED}|${SPACED},\\d{1,2}|\\d+,\\d{1,2})(?![\\w${FRACTION_CHARS}])(?![.,]\\d)|${FRACTION}|(?:${INDIAN}|${SPACED}|\\d{1,3}(?:,\\d{3})+|\\d+)(?:\\.\\d+)?(?![\\w${FRACTION_CHARS}])(?!,\\d{3}))`,
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
      // Dots grouping thousands before a decimal comma or in two groups (`1.299,99`, `12.345.678`), a
      // decimal comma after groups of three (`1 299,99`): one number. Before, `1.299` was read and
      // `,99` dropped (a total of 1299 grounded `1.299,99`).
      if (/^\d{1,3}\.\d{3}[.,]/.test(digits) || /\d[ \u00a0\u202f\u2009'’]\d{3},/.test(digits))
        return plainNumber(parseNumber(written), '');
      if (/^\d+,\d{1,2}$/.test(digits)) return commaDecimal(written, c());
      if (/\d \d/.test(digits)) return spacedGroups(written, c());
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
