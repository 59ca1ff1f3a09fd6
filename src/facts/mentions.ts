// Facts written in text, read the way people write them: numbers (12,500, 12.5k, three), money
// ($129.99, 12999 cents, USD 40), percentages (25%), quantities with units (1.5 s, 250 ms, 3 kg),
// dates and times (2026-11-20T14:05Z, Nov 20, 20 November 2026, 11/20/2026, 1:05 PM) and ids
// (O-7731, bk_7f3a, #7713). Each mention carries the canonical readings it can be matched by.
// The readers are in parts: dates.ts, money.ts, numbers.ts (readings.ts holds what they share);
// the ways of writing them (months, units, currencies) are written.ts and currencies.ts, numbers in
// words words.ts. A sign written as a word (`minus 12`) is read here, before every pass.

import { conventionsOf } from './conventions.js';
import { currencyOfKey, isCurrencyCode, minorDigits, unitsPerMajor } from './currencies.js';
import { DATE_PASSES } from './dates.js';
import { DATE_ABROAD_PASSES } from './dates-abroad.js';
import { endsWithDirection, framed } from './framing.js';
import { isFlowKey, MONEY_KEY_WORDS, MONEY_PASSES, moneyClaim, moneyObserved, unsignedObserved } from './money.js';
import { celsius, NUMBER_PASSES, percentClaim, percentObserved, QUANTITY_PASSES } from './numbers.js';
import {
  at,
  bareObserved,
  baseReadings,
  type Conventions,
  digitKeys,
  halfUnit,
  idReadings,
  type Mention,
  num,
  type Pass,
  pass,
  plainClaim,
  type Reading,
} from './readings.js';
import { RELATIVE_HINT, RELATIVE_PASSES, type RunDay } from './relative-dates.js';
import { foldScripts } from './scripts.js';
import { withLoneTimes, withWeekdayTimes } from './weekday-times.js';
import { WEEKDAY_HINT, WEEKDAY_PASSES } from './weekdays.js';
import { NUMBER_WORD } from './words.js';
import { ID_TOKEN, isMicrosKey, isMinorUnitKey, keyWords, unitOfKey } from './written.js';

const PASSES: Pass[] = [
  // UUIDs, whatever their digits: an id in any case, with or without hyphens.
  pass(/(?<![\w-])[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}(?![\w-])/g, (m) => ({
    kind: 'id',
    claim: idReadings(m[0], 'claim'),
    observed: idReadings(m[0], 'observed'),
  })),
  // Relative dates before the dates, quantities and numbers: `in 14 days` is no count of 14.
  ...RELATIVE_PASSES,
  ...DATE_PASSES,
  ...DATE_ABROAD_PASSES,
  // Weekdays after the dates, which read a weekday written with one (`Friday, Dec 4`).
  ...WEEKDAY_PASSES,
  ...MONEY_PASSES,
  ...QUANTITY_PASSES,
  // Ids: letters and digits mixed.
  pass(ID_TOKEN, (m) => ({ kind: 'id', claim: idReadings(m[0], 'claim'), observed: idReadings(m[0], 'observed') })),
  ...NUMBER_PASSES,
];

/** A digit, or a vulgar fraction (`¾ kg` has no ASCII digit). */
const DIGIT = /[\d½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅛⅜⅝⅞]/;
const NUMBER_WORD_HINT = new RegExp(`\\b${NUMBER_WORD}\\b`, 'i');

/**
 * Every fact mentioned in `text`, in order. More specific readings win a span: a date is not also
 * three numbers, `12.5k` is not an id, `$129.99` is money. Linear in the text: passes that need a
 * digit are skipped for text without one, and taken spans are marked in a mask. `day`: the run's
 * day, which relative dates (`tomorrow`, `next Friday`) are read against; without it they are
 * `unread` (no verdict).
 */
export function mentionsIn(written: string, options: { day?: RunDay } = {}): Mention[] {
  const out: Mention[] = [];
  // Other scripts' digits and fullwidth forms are read as ASCII (`١٢٩٫٩٩` is 129.99), spans mapped back.
  const { text: plain, origin } = foldScripts(written);
  const hasDigit = DIGIT.test(plain);
  if (!hasDigit && !NUMBER_WORD_HINT.test(plain) && !RELATIVE_HINT.test(plain) && !WEEKDAY_HINT.test(plain)) return out;
  const { text, signAt } = signWords(plain);
  let taken: Uint8Array | undefined;
  let conventions: Conventions | undefined;
  const readConventions = () => {
    conventions ??= conventionsOf(text);
    return conventions;
  };
  for (const { re, make, digits } of PASSES) {
    if (digits && !hasDigit) continue;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      const start = m.index;
      const end = start + m[0].length;
      if (taken !== undefined && isTaken(taken, start, end)) continue;
      const made = make(m, readConventions, options.day);
      if (made === undefined) continue;
      taken ??= new Uint8Array(text.length);
      taken.fill(1, start, end);
      const from = signAt?.get(start) ?? start;
      out.push({ ...made, text: plain.slice(from, end), start: from, end });
    }
  }
  const read = framed(
    plain,
    withWeekdayTimes(
      plain,
      withLoneTimes(
        ranges(
          plain,
          out.sort((a, b) => a.start - b.start),
        ),
      ),
      options.day,
      (t) => mentionsIn(t),
    ),
  );
  if (plain === written) return read;
  return read.map((m) => {
    const [start, end] = origin === undefined ? [m.start, m.end] : [origin[m.start]!, origin[m.end]!];
    return { ...m, text: written.slice(start, end), start, end };
  });
}

/** What joins the ends of a range: `$10-20`, `$10 – 20`, `3 to 5`; `between 2 and 4` takes ` and `. */
const RANGE_JOIN = /^(?:\s?([-–—])\s?|\s+(to|and)\s+)$/;
const BETWEEN = /\bbetween\s+$/i;
const FROM = /\bfrom\s+$/i;

/**
 * A range is one claim: a value observed anywhere in it grounds it (`$100-150` by a price of 120,
 * `3 to 5 nights` by 4, `between 2 and 4` by 2). A bare number that ends a range an amount starts
 * (`$10-20`, `€5 to 8`) is an amount in the same currency: "$10-20" is never grounded by a count of
 * 20. Not a range: a change (`from 3 to 5`, `fell $1,200 to $3,800`), two numbers out of order (`10-5`), a hyphen between
 * bare numbers of four digits or more (`555-1234`, `2026-2027`), `and` without `between`.
 */
function ranges(text: string, out: Mention[]): Mention[] {
  const merged: Mention[] = [];
  for (let i = 0; i < out.length; i++) {
    const a = out[i]!;
    let b = out[i + 1];
    const join = b === undefined ? null : RANGE_JOIN.exec(text.slice(a.end, b.start));
    // `$129.99 and 5 are in stock`: `and` joins a range only after `between`; else the number is its own.
    const listed = join !== null && join[2] === 'and' && !BETWEEN.test(text.slice(Math.max(0, a.start - 12), a.start));
    if (b === undefined || join === null || listed) {
      merged.push(a);
      continue;
    }
    if (a.kind === 'money' && b.kind === 'number' && b.value !== undefined && b.ambiguous === undefined)
      b = {
        ...b,
        kind: 'money',
        claim: moneyClaim(b.value, halfUnit(b.text), a.currencies),
        observed: moneyObserved(b.value, a.currencies),
        ...(a.currencies !== undefined && { currencies: a.currencies }),
      };
    // `fell $1,200 to $3,800`: a change, then the level it came to (`rose 3 to 5%` stays a range).
    const change = join[2] === 'to' && a.kind === b.kind && a.kind !== 'number';
    const range =
      change && endsWithDirection(text.slice(Math.max(0, a.start - 48), a.start))
        ? undefined
        : rangeOf(a, b, join, text.slice(Math.max(0, a.start - 12), a.start), text.slice(a.start, b.end));
    if (range === undefined) merged.push(a);
    else {
      merged.push(range);
      i++;
      continue;
    }
    if (b !== out[i + 1]) out[i + 1] = b;
  }
  return merged;
}

function rangeOf(a: Mention, b: Mention, join: RegExpExecArray, before: string, written: string): Mention | undefined {
  const [lo, hi] = [a.value, b.value];
  if (lo === undefined || hi === undefined || !(lo < hi) || hi === 0) return undefined;
  if (a.ambiguous !== undefined || b.ambiguous !== undefined || a.parts !== undefined || b.parts !== undefined)
    return undefined;
  if ((join[2] === 'and' && !BETWEEN.test(before)) || (join[2] === 'to' && FROM.test(before))) return undefined;
  const bare = (m: Mention) => m.kind === 'number' && !/^\d{1,3}(?:\.\d+)?$/.test(m.text);
  if (join[1] === '-' && !BETWEEN.test(before) && (bare(a) || bare(b))) return undefined;
  const kinds = a.kind === b.kind || (a.kind === 'number' && b.kind !== 'date' && b.kind !== 'time' && b.kind !== 'id');
  if (!kinds || b.kind === 'date' || b.kind === 'time' || b.kind === 'id') return undefined;
  if (b.claim.some((r) => r.dim === 'temp')) return undefined;
  // Each of the end's readings, widened to the range: its value scaled back to the start's.
  const claim = b.claim.flatMap((r) => {
    if (r.value === undefined) return [];
    const start = (lo * r.value) / hi;
    const half = (r.value - start) / 2;
    return [{ ...r, value: start + half, tolerance: half + (r.tolerance ?? 0) }];
  });
  const { alternatives: _a, ...rest } = b;
  return { ...rest, text: written, start: a.start, claim, observed: [...a.observed, ...b.observed] };
}

/**
 * A sign written as a word before a number (`minus 12`, `negative 3%`, `minus twelve`), not after
 * one (`$50 minus $5` is a subtraction): rewritten, at the same length, as a minus sign just
 * before the number, so every reader reads the number as negative. `signAt` maps the sign back to
 * where its word starts.
 */
const SIGN_WORD = new RegExp(`(?<![\\d%)]\\s{0,3})\\b(?:minus|negative)\\s+(?=[$€£¥₹₩]?\\d|${NUMBER_WORD}\\b)`, 'gi');

function signWords(text: string): { text: string; signAt?: Map<number, number> } {
  if (!/minus|negative/i.test(text)) return { text };
  const signAt = new Map<number, number>();
  const rewritten = text.replace(SIGN_WORD, (word, at: number) => {
    signAt.set(at + word.length - 1, at);
    return `${' '.repeat(word.length - 1)}-`;
  });
  return { text: rewritten, signAt };
}

function isTaken(taken: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (taken[i] === 1) return true;
  return false;
}

/** The scale of a temperature's key (`temp_c`, `temperatureF`, `celsius`, `max_temp_fahrenheit`), if it names one. */
function temperatureScale(words: readonly string[]): string | undefined {
  const last = words.at(-1);
  if (last === 'celsius' || last === 'fahrenheit') return last;
  const temp = words.some((w) => w === 'temp' || w === 'temperature' || w === 'tmp');
  return temp && (last === 'c' || last === 'f') ? last : undefined;
}

const PERCENT_KEY_WORDS = new Set(['pct', 'percent', 'percentage']);
/** Keys whose bare number may be a percentage (`rate: 15` is "15%"; `qty: 15` is not). */
const RATE_KEY_WORDS = new Set([
  'rate',
  'ratio',
  'share',
  'growth',
  'margin',
  'interest',
  'apr',
  'apy',
  'change',
  'occupancy',
  'utilization',
  'utilisation',
  'usage',
  'probability',
  'chance',
  'confidence',
  'vat',
  'commission',
  'progress',
  'completion',
  'coverage',
  'accuracy',
  'humidity',
  'yield',
  'load',
  'battery',
]);

/**
 * The readings of a structured value found under `key` (a JSON field), as an observation or as a
 * claim: a number with the key's unit — `total_cents`, `amount_minor`, `amountInCents` 12999 is
 * also 129.99 (in no currency in particular; in the minor unit of the key's or object's currency:
 * `amount_minor: 1299` with `currency: JPY` is ¥1299, with KWD 1.299), `price_eur` 12 is €12, `latency_ms` 1500 is also
 * 1.5 s, `discount_pct` 15 is 15% — else a bare number. `sibling` is the currency the value's
 * object (or the nearest enclosing one) names (`{ price: 12, currency: 'EUR' }`): an amount under a
 * money key is in it. `minor`: the object is Stripe's (see fact-index.ts `stripeShaped`), whose
 * amounts are all in the currency's minor unit (`amount_total: 12999` is $129.99, never $12,999).
 */
export function valueReadings(
  value: number,
  key: string | undefined,
  role: 'claim' | 'observed' = 'observed',
  sibling?: string,
  minor = false,
): Reading[] {
  const words = key === undefined ? [] : keyWords(key);
  const claim = role === 'claim';
  const digits = Number.isInteger(value) && value >= 0 ? digitKeys(String(value), 'observed') : [];
  // A key that names a percentage is one, whatever else it names (`revenue_change_pct` beside `currency: USD`).
  const percent = words.some((w) => PERCENT_KEY_WORDS.has(w));
  const money = !percent && words.some((w) => MONEY_KEY_WORDS.has(w));
  const scaled = !percent && key !== undefined && (isMicrosKey(key) || isMinorUnitKey(key));
  if (scaled || (minor && money && Number.isInteger(value))) {
    const currency = words.map((w) => w.toUpperCase()).find(isCurrencyCode) ?? sibling;
    const major = value / (scaled ? unitsPerMajor(key, sibling) : 10 ** minorDigits(currency));
    const currencies = currency === undefined ? undefined : [currency];
    return claim
      ? [at('q', value), ...moneyClaim(major, 0, currencies)]
      : [at('q', value), ...moneyObserved(major, currencies, isFlowKey(words)), ...digits];
  }
  const currency = percent
    ? undefined
    : ((key === undefined ? undefined : currencyOfKey(key)) ?? (money ? sibling : undefined));
  if (currency !== undefined) {
    if (claim) return moneyClaim(value, 0, [currency]);
    // Stripe's `amount: 12999` with `currency: "usd"` is in cents; another API's is in dollars. Each
    // reading is a maybe — unless the currency has no minor unit (¥12999 either way).
    const places = minorDigits(currency);
    // (Not a `value` under `amount`: PayPal's `amount: { value: "129.99" }` is in major units.)
    const stripeLike = words.includes('amount') && !words.includes('value');
    if (stripeLike && sibling === currency && Number.isInteger(value) && places > 0) {
      const unsure = `${currency} ${value} or ${value / 10 ** places}?`;
      return [
        ...moneyObserved(value, [currency]).map((r) => ({ ...r, unsure })),
        ...moneyObserved(value / 10 ** places, [currency]).map((r) => ({ ...r, unsure })),
        ...digits,
      ];
    }
    return [...moneyObserved(value, [currency], isFlowKey(words)), ...digits];
  }
  const scale = temperatureScale(words);
  if (scale !== undefined) {
    const base = at('temp', celsius(value, scale));
    return claim ? [num(value), base] : [at('q', value), base];
  }
  const unit = key === undefined ? undefined : unitOfKey(key);
  if (unit) {
    const base = baseReadings(unit, value);
    return claim ? [num(value), ...base] : [at('q', value), ...base];
  }
  if (percent) return claim ? percentClaim(value, 0) : percentObserved(value);
  if (claim) return [...plainClaim(value), ...digits];
  // A number where an amount may stand (no key, a money key, an object naming its currency) may be one.
  // In an object that names its currency, a number where an amount may stand is one in that currency
  // (`{ currency: 'EUR', gross: 120 }` is €120, never $120), and still a number.
  const out =
    key === undefined || money
      ? [...bareObserved(value), ...digits]
      : sibling !== undefined
        ? [num(value), at('n%', value), ...moneyObserved(value, [sibling]), ...digits]
        : [num(value), ...(words.some((w) => RATE_KEY_WORDS.has(w)) ? [at('n%', value)] : []), ...digits];
  if (value < 0 && money) out.push(unsignedObserved(-value, words));
  return out;
}
