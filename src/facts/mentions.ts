// Facts written in text, read the way people write them: numbers (12,500, 12.5k, three), money
// ($129.99, 12999 cents, USD 40), percentages (25%), quantities with units (1.5 s, 250 ms, 3 kg),
// dates and times (2026-11-20T14:05Z, Nov 20, 20 November 2026, 11/20/2026, 1:05 PM) and ids
// (O-7731, bk_7f3a, #7713). Each mention carries the canonical readings it can be matched by.
// The ways of writing them (months, units, number words) are written.ts.
import {
  ID_TOKEN,
  keyWords,
  MAGNITUDE,
  MERIDIEM,
  MONTH,
  MONTHS,
  NUM,
  NUM_START,
  NUMBER_WORD,
  parseNumber,
  TIME_TAIL,
  UNIT_ALT,
  UNITS,
  unitOfKey,
  wordsValue,
} from './written.js';

/** What a mention is. */
export type MentionKind = 'number' | 'money' | 'percent' | 'unit' | 'date' | 'time' | 'id';

/**
 * One canonical reading of a fact: a dimension and a value. Numbers read as `n` (plain value),
 * quantities also as their dimension in base units (`time` seconds, `length` metres, `mass`
 * grams, `data` bytes, `volume` litres); dates and times as keys (`d:2026-11-20`, `md:11-20`,
 * `t:13:05`, `dt:2026-11-20T13:05`, `mdt:11-20T13:05`); ids as `id:<CORE>` and `dg:<digits>`.
 */
export interface Reading {
  dim: string;
  /** Numeric readings. */
  value?: number;
  /** How far off a number may be and still be this fact (rounding: half a unit of the last written digit). */
  tolerance?: number;
  /** Keyed readings (dates, times, ids). */
  key?: string;
}

export interface Mention {
  kind: MentionKind;
  /** The text as written. */
  text: string;
  start: number;
  end: number;
  /** The number (numeric kinds): dollars for money, the percentage for percent, the written value for units. */
  value?: number;
  /** Readings to look the mention up by, as a claim (the most specific forms only). */
  claim: Reading[];
  /** Readings to index the mention by, as an observation (every form it may be restated in). */
  observed: Reading[];
}

/** Half a unit of the last digit written: `12.5` -> 0.05, `130` -> 0.5. */
function halfUnit(text: string): number {
  const decimals = /\.(\d+)/.exec(text)?.[1]?.length ?? 0;
  return 0.5 * 10 ** -decimals;
}

const EPS = 1e-9;

function num(value: number, tolerance = 0): Reading {
  return { dim: 'n', value, tolerance: Math.max(tolerance, EPS * Math.max(1, Math.abs(value))) };
}

/**
 * The digits of a bare integer (three or more, as written), for matching ids typed without their
 * prefix: observed as `dgn:` (a bare number was seen); as a claim it may also match the digits
 * of an observed prefixed id (`dgi:`), so "order 7713" is grounded by O-7713 and "#7713" grounds O-7713.
 */
function digitKeys(text: string, role: 'claim' | 'observed'): Reading[] {
  if (!/^\d{3,}$/.test(text)) return [];
  const bare: Reading = { dim: 'dg', key: `dgn:${text}` };
  return role === 'observed' ? [bare] : [bare, { dim: 'dg', key: `dgi:${text}` }];
}

/** The core of an id: letters and digits only, upper case (`bk-0001`, `BK 0001`, `#BK0001` -> BK0001). */
export function idCore(id: string): string {
  return id.replace(/[^A-Za-z0-9]/g, '').toUpperCase();
}

/** The digits of an id shaped prefix + number (`O-7713`, `ORD_7713` -> 7713), else undefined. */
export function idDigits(id: string): string | undefined {
  return /^[A-Za-z]{1,5}[-_ #.:/]?(\d{3,})$/.exec(id.trim())?.[1];
}

/**
 * The readings of an id: its core, and for a prefixed number its digits — which, as a claim,
 * match a bare number observed (`#7713` grounds O-7713) and, observed, match a bare number
 * claimed; two prefixed ids never match by digits alone (BK-0001 is not RF-0001).
 */
export function idReadings(id: string, role: 'claim' | 'observed'): Reading[] {
  const out: Reading[] = [{ dim: 'id', key: `id:${idCore(id)}` }];
  const digits = idDigits(id);
  if (digits !== undefined) out.push({ dim: 'dg', key: role === 'claim' ? `dgn:${digits}` : `dgi:${digits}` });
  return out;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

function dateReadings(
  y: number | undefined,
  m: number,
  d: number,
  time?: { h: number; mi: number },
): { claim: Reading[]; observed: Reading[] } | undefined {
  if (m < 1 || m > 12 || d < 1 || d > 31) return undefined;
  const md = `${pad(m)}-${pad(d)}`;
  const observed: Reading[] = [{ dim: 'md', key: `md:${md}` }];
  const claim: Reading[] = [];
  const t = time ? `${pad(time.h)}:${pad(time.mi)}` : undefined;
  if (y !== undefined) {
    const ymd = `${y}-${md}`;
    observed.push({ dim: 'd', key: `d:${ymd}` }, { dim: 'ym', key: `ym:${y}-${pad(m)}` }, num(y));
    if (t) {
      observed.push({ dim: 'dt', key: `dt:${ymd}T${t}` });
      claim.push({ dim: 'dt', key: `dt:${ymd}T${t}` });
    } else claim.push({ dim: 'd', key: `d:${ymd}` });
  } else if (t) claim.push({ dim: 'mdt', key: `mdt:${md}T${t}` });
  else claim.push({ dim: 'md', key: `md:${md}` });
  if (t) observed.push({ dim: 't', key: `t:${t}` }, { dim: 'mdt', key: `mdt:${md}T${t}` });
  return { claim, observed };
}

function hour12(h: number, meridiem: string | undefined): number {
  if (meridiem === undefined) return h;
  const pm = meridiem.toLowerCase() === 'p';
  return (h % 12) + (pm ? 12 : 0);
}

/** One reading pass: a pattern, what a match reads as, and whether it can only match text with a digit. */
interface Pass {
  re: RegExp;
  make: (m: RegExpExecArray) => Omit<Mention, 'start' | 'end' | 'text'> | undefined;
  digits: boolean;
}

function pass(re: RegExp, make: Pass['make'], digits = true): Pass {
  return { re, make, digits };
}

/** The passes, most specific first; compiled once. */
const PASSES: Pass[] = [
  // ISO dates and timestamps: 2026-11-20, 2026-11-20T14:05:00Z, 2026-11-20 14:05.
  pass(
    /(?<![\w-])(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w-])/g,
    (m) => {
      const time = m[4] === undefined ? undefined : { h: Number(m[4]), mi: Number(m[5]) };
      const r = dateReadings(Number(m[1]), Number(m[2]), Number(m[3]), time);
      return r && { kind: 'date', ...r };
    },
  ),
  // Nov 20, November 20th, 2026, Nov 25, 1:05 PM; 20 Nov 2026.
  pass(new RegExp(`\\b${MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?:,?\\s+(\\d{4})\\b)?${TIME_TAIL}`, 'g'), (m) => {
    const month = MONTHS[m[1]!.slice(0, m[1]!.toLowerCase().startsWith('sept') ? 4 : 3).toLowerCase()]!;
    const time =
      m[4] !== undefined
        ? { h: hour12(Number(m[4]), m[6]), mi: Number(m[5] ?? 0) }
        : m[7] !== undefined
          ? { h: Number(m[7]), mi: Number(m[8]) }
          : undefined;
    const r = dateReadings(m[3] === undefined ? undefined : Number(m[3]), month, Number(m[2]), time);
    return r && { kind: 'date', ...r };
  }),
  pass(new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\b\\.?(?:,?\\s+(\\d{4})\\b)?`, 'g'), (m) => {
    const month = MONTHS[m[2]!.slice(0, m[2]!.toLowerCase().startsWith('sept') ? 4 : 3).toLowerCase()]!;
    const r = dateReadings(m[3] === undefined ? undefined : Number(m[3]), month, Number(m[1]));
    return r && { kind: 'date', ...r };
  }),
  // 11/20/2026 (month first unless the first number cannot be a month).
  pass(/(?<![\w/])(\d{1,2})\/(\d{1,2})\/(\d{4})(?![\w/])/g, (m) => {
    let [a, b] = [Number(m[1]), Number(m[2])];
    if (a > 12) [a, b] = [b, a];
    const r = dateReadings(Number(m[3]), a, b);
    return r && { kind: 'date', ...r };
  }),
  // Times: 13:05, 1:05 PM, 1 pm.
  pass(new RegExp(`(?<![\\d:])(\\d{1,2}):(\\d{2})(?::\\d{2})?(?:\\s*${MERIDIEM})?(?![\\d:])`, 'g'), (m) => {
    const h = hour12(Number(m[1]), m[3]);
    const mi = Number(m[2]);
    if (h > 23 || mi > 59) return undefined;
    const key = `t:${pad(h)}:${pad(mi)}`;
    return { kind: 'time', claim: [{ dim: 't', key }], observed: [{ dim: 't', key }] };
  }),
  pass(new RegExp(`\\b(\\d{1,2})\\s*${MERIDIEM}(?![A-Za-z])`, 'g'), (m) => {
    const h = hour12(Number(m[1]), m[2]);
    if (h > 23) return undefined;
    const key = `t:${pad(h)}:00`;
    return { kind: 'time', claim: [{ dim: 't', key }], observed: [{ dim: 't', key }] };
  }),
  // Money: $129.99, $1.2k, USD 40, 40 USD, 12999 cents, 30 dollars.
  pass(
    new RegExp(
      `(?:([$€£¥])\\s?|\\b(USD|EUR|GBP|JPY|CAD|AUD|CHF)\\s?)${NUM}(?:\\s?(k|K|M|bn|B|thousand|million|billion)\\b)?`,
      'g',
    ),
    (m) => {
      const scale = m[4] === undefined ? 1 : MAGNITUDE[m[4]]!;
      const value = parseNumber(m[3]!) * scale;
      const tol = m[4] === undefined ? halfUnit(m[3]!) : halfUnit(m[3]!) * scale;
      return { kind: 'money', value, claim: [num(value, tol)], observed: [num(value)] };
    },
  ),
  pass(
    new RegExp(`${NUM_START}${NUM}\\s?(USD|EUR|GBP|JPY|CAD|AUD|CHF|dollars?|euros?|cents?|¢)(?![A-Za-z])`, 'g'),
    (m) => {
      const written = parseNumber(m[1]!);
      const cents = /^(cents?|¢)$/.test(m[2]!);
      const value = cents ? written / 100 : written;
      return {
        kind: 'money',
        value,
        claim: [num(value, cents ? halfUnit(m[1]!) / 100 : halfUnit(m[1]!))],
        observed: cents ? [num(written), num(value)] : [num(value)],
      };
    },
  ),
  // Percentages: 25%, 25 percent. Read as 25 or 0.25.
  pass(new RegExp(`${NUM_START}${NUM}\\s?(%|percent\\b|per cent\\b|pct\\b)`, 'g'), (m) => {
    const value = parseNumber(m[1]!);
    const tol = halfUnit(m[1]!);
    return {
      kind: 'percent',
      value,
      claim: [num(value, tol), num(value / 100, tol / 100)],
      observed: [num(value), num(value / 100)],
    };
  }),
  // Quantities with units: 1.5 s, 250ms, 3 kg, 24 hours.
  pass(new RegExp(`${NUM_START}${NUM}\\s?(${UNIT_ALT})(?![A-Za-z0-9])`, 'g'), (m) => {
    const [dim, factor] = UNITS[m[2]!]!;
    const value = parseNumber(m[1]!);
    const base: Reading = { dim, value: value * factor, tolerance: halfUnit(m[1]!) * factor + EPS };
    return { kind: 'unit', value, claim: [num(value), base], observed: [num(value), { dim, value: value * factor }] };
  }),
  // Magnitudes: 12.5k, 1.2M, 3 million.
  pass(
    new RegExp(`${NUM_START}${NUM}(?:(k|K|M|bn|B)(?![A-Za-z0-9])|\\s(thousand|million|billion|trillion)\\b)`, 'g'),
    (m) => {
      const scale = MAGNITUDE[m[2] ?? m[3]!]!;
      const value = parseNumber(m[1]!) * scale;
      return { kind: 'number', value, claim: [num(value, halfUnit(m[1]!) * scale)], observed: [num(value)] };
    },
  ),
  // Ordinals: 21st.
  pass(/(?<![\w.-])(\d+)(?:st|nd|rd|th)\b/g, (m) => {
    const value = Number(m[1]);
    return { kind: 'number', value, claim: [num(value)], observed: [num(value)] };
  }),
  // Ids: letters and digits mixed.
  pass(ID_TOKEN, (m) => ({ kind: 'id', claim: idReadings(m[0], 'claim'), observed: idReadings(m[0], 'observed') })),
  // Plain numbers: 12,500, 189.00, #7713.
  pass(/(?<![\w.,])#?-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])(?!,\d{3})/g, (m) => {
    const written = m[0].replace(/^#/, '');
    const value = parseNumber(written);
    if (!Number.isFinite(value)) return undefined;
    const digits = written.replace(/^-/, '');
    return {
      kind: 'number',
      value,
      claim: [num(value), ...digitKeys(digits, 'claim')],
      observed: [num(value), ...digitKeys(digits, 'observed')],
    };
  }),
  // Number words: three, twenty-five, one hundred twenty.
  pass(
    new RegExp(`\\b${NUMBER_WORD}(?:(?:[\\s-]+(?:and\\s+)?)${NUMBER_WORD})*\\b`, 'gi'),
    (m) => {
      const value = wordsValue(m[0]);
      if (value === undefined) return undefined;
      return { kind: 'number', value, claim: [num(value)], observed: [num(value)] };
    },
    false,
  ),
];

const DIGIT = /\d/;
const NUMBER_WORD_HINT = new RegExp(`\\b${NUMBER_WORD}\\b`, 'i');

/**
 * Every fact mentioned in `text`, in order. More specific readings win a span: a date is not also
 * three numbers, `12.5k` is not an id, `$129.99` is money. Linear in the text: passes that need a
 * digit are skipped for text without one, and taken spans are marked in a mask.
 */
export function mentionsIn(text: string): Mention[] {
  const out: Mention[] = [];
  const hasDigit = DIGIT.test(text);
  if (!hasDigit && !NUMBER_WORD_HINT.test(text)) return out;
  let taken: Uint8Array | undefined;
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
      const made = make(m);
      if (made === undefined) continue;
      taken ??= new Uint8Array(text.length);
      taken.fill(1, start, end);
      out.push({ ...made, text: m[0], start, end });
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

function isTaken(taken: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (taken[i] === 1) return true;
  return false;
}

/**
 * The readings of a structured value observed under `key` (a JSON field): a number with the
 * key's unit (`total_cents` 12999 is also $129.99, `latency_ms` 1500 is also 1.5 s), or a
 * string read as text.
 */
export function valueReadings(value: number, key: string | undefined): Reading[] {
  const out: Reading[] = [num(value)];
  const words = key === undefined ? [] : keyWords(key);
  if (words.some((w) => w === 'cents' || w === 'cent' || w === 'minor')) out.push(num(value / 100));
  const unit = key === undefined ? undefined : unitOfKey(key);
  if (unit) out.push({ dim: unit[0], value: value * unit[1] });
  if (Number.isInteger(value) && value >= 0) out.push(...digitKeys(String(value), 'observed'));
  return out;
}
