// Facts written in text, read the way people write them: numbers (12,500, 12.5k, three), money
// ($129.99, 12999 cents, USD 40), percentages (25%), quantities with units (1.5 s, 250 ms, 3 kg),
// dates and times (2026-11-20T14:05Z, Nov 20, 20 November 2026, 11/20/2026, 1:05 PM) and ids
// (O-7731, bk_7f3a, #7713). Each mention carries the canonical readings it can be matched by.
// The ways of writing them (months, units, number words) are written.ts.
import {
  AMOUNT,
  CURRENCY_CODES,
  CURRENCY_SYMBOLS,
  CURRENCY_WORDS,
  currencyOfKey,
  DECIMAL_COMMA,
  foldText,
  ID_TOKEN,
  isMinorUnitKey,
  keyWords,
  MAGNITUDE,
  MERIDIEM,
  MONTH,
  MONTHS,
  NUM,
  NUM_START,
  NUMBER_WORD,
  parseAmount,
  parseNumber,
  TIME_TAIL,
  UNIT_ALT,
  UNITS,
  unitOfKey,
  WEEKDAY,
  WEEKDAYS,
  wordsValue,
  ZONE,
  zoneOffset,
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
  /** Why the mention cannot be read as one fact (`12.999`: thousands or decimals?); it then grounds nothing. */
  ambiguous?: string;
}

/** Half a unit of the last digit written: `12.5` -> 0.05, `130` -> 0.5. */
function halfUnit(text: string): number {
  const decimals = (/\.(\d+)/.exec(text) ?? DECIMAL_COMMA.exec(text))?.[1]?.length ?? 0;
  return 0.5 * 10 ** -decimals;
}

const EPS = 1e-9;

function at(dim: string, value: number, tolerance = 0): Reading {
  return { dim, value, tolerance: Math.max(tolerance, EPS * Math.max(1, Math.abs(value))) };
}

function num(value: number, tolerance = 0): Reading {
  return at('n', value, tolerance);
}

/*
 * Numeric dimensions. `n`: a bare number (12, 0.15, a JSON number under a plain key). `q`: the
 * number as written of a quantity stated with a qualifier (the 90 of "90 min", the 12999 of
 * `total_cents`, the 15 of "15%"). `$USD`, `$EUR`…: an amount in that currency; `$`: an amount
 * in an unknown currency (cents). `pct`: a percentage as written. `mag`: the size of a negative
 * amount (a refund of -2500 cents is "a refund of $25.00"). Base-unit dimensions (`time`…) hold
 * quantities. A claim looks only where its own kind of fact can be: a plain number anywhere but
 * quantities, an amount among bare numbers and amounts of its currency, a quantity among bare
 * numbers and quantities of its dimension — so "$129.99" is never grounded by "€129.99", "90 min"
 * never by "90 s".
 */
const MONEY_DIMS = ['$', ...CURRENCY_CODES.map((c) => `$${c}`)];

function plainClaim(value: number, tolerance = 0): Reading[] {
  return ['n', 'q', ...MONEY_DIMS].map((d) => at(d, value, tolerance));
}

function moneyClaim(value: number, tolerance: number, currency: string | undefined): Reading[] {
  const dims = currency === undefined ? ['n', ...MONEY_DIMS] : ['n', '$', `$${currency}`];
  const out = dims.map((d) => at(d, value, tolerance));
  if (value > 0) out.push(at('mag', value, tolerance));
  return out;
}

function moneyObserved(value: number, currency: string | undefined): Reading[] {
  const out = [at(currency === undefined ? '$' : `$${currency}`, value)];
  if (value < 0) out.push(at('mag', -value));
  return out;
}

/** A percentage P% is P as a percentage, P/100 as a fraction, and P as a bare number only from 1 up (0.15% is not 0.15). */
function percentClaim(value: number, tolerance: number): Reading[] {
  const out = [at('pct', value, tolerance), num(value / 100, tolerance / 100)];
  if (Math.abs(value) >= 1) out.push(num(value, tolerance));
  return out;
}

function percentObserved(value: number): Reading[] {
  return [at('pct', value), at('q', value), at('q', value / 100)];
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
  return foldText(id)
    .replace(/[^\p{L}\p{N}]/gu, '')
    .toUpperCase();
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
  const core = idCore(id);
  if (core === '') return [];
  const out: Reading[] = [{ dim: 'id', key: `id:${core}` }];
  const digits = idDigits(id);
  if (digits !== undefined) out.push({ dim: 'dg', key: role === 'claim' ? `dgn:${digits}` : `dgi:${digits}` });
  return out;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** A date and/or time as written: the wall-clock fields, the zone (minutes east of UTC) and weekday when written. */
interface Stamp {
  y?: number;
  m?: number;
  d?: number;
  time?: { h: number; mi: number };
  zone?: number;
  weekday?: number;
}

type Readings = { claim: Reading[]; observed: Reading[] };

const NEVER: Readings = { claim: [{ dim: 'x', key: 'x:never' }], observed: [] };

function daysIn(y: number | undefined, m: number): number {
  return new Date(Date.UTC(y ?? 2000, m, 0)).getUTCDate();
}

function weekdayOf(y: number, m: number, d: number): number {
  return new Date(Date.UTC(y, m - 1, d)).getUTCDay();
}

/**
 * The keys of a date and/or time. Unzoned keys (`d:`, `md:`, `dt:`, `mdt:`, `t:`) hold wall-clock
 * readings; a zoned observation is indexed under both its own wall clock and UTC. A claim that
 * names its zone is looked up in UTC (`z:`, `zmd:`, `zt:`), or by its wall clock among
 * observations that named no zone (`l:`, `lmd:`, `lt:`): "15:05 CET" is 14:05Z, never 15:05Z.
 * A weekday must fit its date ("Monday, December 1, 2026" grounds nothing: that day is a Tuesday).
 */
function stampReadings(s: Stamp): Readings | undefined {
  const { y, m, d, time, zone } = s;
  const hasDate = m !== undefined && d !== undefined;
  if (hasDate && (m < 1 || m > 12 || d < 1 || d > daysIn(y, m))) return undefined;
  if (time && (time.h > 23 || time.mi > 59)) return undefined;
  if (!hasDate && !time) return undefined;
  if (s.weekday !== undefined && hasDate && y !== undefined && weekdayOf(y, m, d) !== s.weekday) return NEVER;
  const wall = wallReadings(y, m, d, time, s.weekday);
  if (zone === undefined || time === undefined) {
    if (time) wall.observed.push(...tzKeys('l', y, m, d, time).map((key) => ({ dim: 'l', key })));
    return wall;
  }
  const u = new Date(Date.UTC(y ?? 2000, (m ?? 1) - 1, d ?? 1, time.h, time.mi) - zone * 60_000);
  const utc = { y: y === undefined ? undefined : u.getUTCFullYear(), m: u.getUTCMonth() + 1, d: u.getUTCDate() };
  const uTime = { h: u.getUTCHours(), mi: u.getUTCMinutes() };
  const utcWall = hasDate
    ? wallReadings(utc.y, utc.m, utc.d, uTime)
    : wallReadings(undefined, undefined, undefined, uTime);
  // A weekday written with no year moves with the date into UTC.
  const shift = Math.floor(u.getTime() / 86_400_000) - Math.floor((u.getTime() + zone * 60_000) / 86_400_000);
  const utcWeekday = s.weekday === undefined ? undefined : (s.weekday + shift + 7) % 7;
  const zoned = tzKeys(
    'z',
    hasDate ? utc.y : undefined,
    hasDate ? utc.m : undefined,
    hasDate ? utc.d : undefined,
    uTime,
    utcWeekday,
  );
  const local = tzKeys('l', y, m, d, time, s.weekday);
  return {
    claim: [...zoned.slice(0, 1), ...local.slice(0, 1)].map((key) => ({ dim: 'z', key })),
    observed: [...wall.observed, ...utcWall.observed, ...zoned.map((key) => ({ dim: 'z', key }))],
  };
}

/**
 * Zone keys, most specific first: `z:2026-12-01T14:05`, `zwmd:2-12-01T14:05` (a weekday for the
 * year), `zmd:12-01T14:05`, `zt:14:05` (prefix `l` for unzoned wall clocks).
 */
function tzKeys(
  p: 'z' | 'l',
  y: number | undefined,
  m: number | undefined,
  d: number | undefined,
  time: { h: number; mi: number },
  weekday?: number,
): string[] {
  const t = `${pad(time.h)}:${pad(time.mi)}`;
  const out: string[] = [];
  if (m !== undefined && d !== undefined) {
    const md = `${pad(m)}-${pad(d)}`;
    if (y !== undefined) out.push(`${p}:${y}-${md}T${t}`, `${p}wmd:${weekdayOf(y, m, d)}-${md}T${t}`);
    else if (weekday !== undefined) out.push(`${p}wmd:${weekday}-${md}T${t}`);
    out.push(`${p}md:${md}T${t}`);
  }
  out.push(`${p}t:${t}`);
  return out;
}

function wallReadings(
  y: number | undefined,
  m: number | undefined,
  d: number | undefined,
  time?: { h: number; mi: number },
  weekday?: number,
): Readings {
  const observed: Reading[] = [];
  const claim: Reading[] = [];
  const t = time ? `${pad(time.h)}:${pad(time.mi)}` : undefined;
  if (m === undefined || d === undefined) {
    if (t) {
      claim.push({ dim: 't', key: `t:${t}` });
      observed.push({ dim: 't', key: `t:${t}` });
    }
    return { claim, observed };
  }
  const md = `${pad(m)}-${pad(d)}`;
  observed.push({ dim: 'md', key: `md:${md}` });
  if (y !== undefined) {
    const ymd = `${y}-${md}`;
    observed.push(
      { dim: 'd', key: `d:${ymd}` },
      { dim: 'ym', key: `ym:${y}-${pad(m)}` },
      { dim: 'wmd', key: `wmd:${weekdayOf(y, m, d)}-${md}` },
      at('q', y),
    );
    if (t) {
      observed.push({ dim: 'dt', key: `dt:${ymd}T${t}` }, { dim: 'wmd', key: `wmdt:${weekdayOf(y, m, d)}-${md}T${t}` });
      claim.push({ dim: 'dt', key: `dt:${ymd}T${t}` });
    } else claim.push({ dim: 'd', key: `d:${ymd}` });
  } else if (weekday !== undefined) {
    // "Tuesday, December 1 (at 2:05 PM)": the weekday stands in for the year; the time still counts.
    const key = t ? `wmdt:${weekday}-${md}T${t}` : `wmd:${weekday}-${md}`;
    observed.push({ dim: 'wmd', key: `wmd:${weekday}-${md}` }, { dim: 'wmd', key });
    claim.push({ dim: 'wmd', key });
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
const MONTH_OF = (name: string) => MONTHS[name.slice(0, name.toLowerCase().startsWith('sept') ? 4 : 3).toLowerCase()]!;
const WEEKDAY_OF = (name: string | undefined) =>
  name === undefined ? undefined : WEEKDAYS.indexOf(name.slice(0, 3).toLowerCase());
const CODES = CURRENCY_CODES.join('|');

function dated(r: Readings | undefined): Omit<Mention, 'start' | 'end' | 'text'> | undefined {
  return r && { kind: 'date', ...r };
}

function money(
  sign: string | undefined,
  written: string,
  currency: string | undefined,
  scaleWord: string | undefined,
): Omit<Mention, 'start' | 'end' | 'text'> {
  const parsed = parseAmount(written);
  if (parsed === 'ambiguous' || parsed === undefined)
    return { kind: 'money', claim: [], observed: [], ambiguous: `${written}: thousands or decimals?` };
  const scale = scaleWord === undefined ? 1 : MAGNITUDE[scaleWord]!;
  const value = (sign === undefined ? 1 : -1) * parsed.value * scale;
  const tol = 0.5 * 10 ** -parsed.decimals * scale;
  return { kind: 'money', value, claim: moneyClaim(value, tol, currency), observed: moneyObserved(value, currency) };
}

/** After a written date: the year, a time and a zone (groups 4 to 12 of the date passes). */
const DATE_TAIL = `(?:,?\\s+(\\d{4})\\b)?${TIME_TAIL}(?:\\s*${ZONE})?`;

/** A date written with a month name: weekday (group 1), month and day, then DATE_TAIL's groups. */
function writtenDate(
  m: RegExpExecArray,
  month: string,
  day: string,
): Omit<Mention, 'start' | 'end' | 'text'> | undefined {
  const time =
    m[5] !== undefined
      ? { h: hour12(Number(m[5]), m[7]), mi: Number(m[6] ?? 0) }
      : m[8] !== undefined
        ? { h: Number(m[8]), mi: Number(m[9]) }
        : undefined;
  const weekday = WEEKDAY_OF(m[1]);
  const stamp: Stamp = {
    ...(m[4] !== undefined && { y: Number(m[4]) }),
    m: MONTH_OF(month),
    d: Number(day),
    ...(time && { time }),
    ...(weekday !== undefined && { weekday }),
  };
  return inZone('date', stamp, m[10], m[11], m[12]);
}

/** The readings of a stamp in the zone written after it; a zone that cannot be told grounds nothing. */
function inZone(
  kind: 'date' | 'time',
  stamp: Stamp,
  name: string | undefined,
  hours: string | undefined,
  minutes: string | undefined,
): Omit<Mention, 'start' | 'end' | 'text'> | undefined {
  const on =
    stamp.y !== undefined && stamp.m !== undefined && stamp.d !== undefined
      ? { y: stamp.y, m: stamp.m, d: stamp.d, h: stamp.time?.h ?? 12 }
      : undefined;
  const zone = name === undefined || stamp.time === undefined ? undefined : zoneOffset(name, hours, minutes, on);
  if (typeof zone === 'string') return { kind, claim: [], observed: [], ambiguous: zone };
  const r = stampReadings({ ...stamp, ...(zone !== undefined && { zone }) });
  return r && { kind, ...r };
}

const PASSES: Pass[] = [
  // UUIDs, whatever their digits: an id in any case, with or without hyphens.
  pass(/(?<![\w-])[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}(?![\w-])/g, (m) => ({
    kind: 'id',
    claim: idReadings(m[0], 'claim'),
    observed: idReadings(m[0], 'observed'),
  })),
  // ISO dates and timestamps: 2026-11-20, 2026-11-20T14:05:00Z, 2026-11-20 14:05, …T15:05+01:00.
  pass(
    /(?<![\w-])(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?(?![\w-])/g,
    (m) => {
      const time = m[4] === undefined ? undefined : { h: Number(m[4]), mi: Number(m[5]) };
      const z = m[6];
      const zone =
        z === undefined
          ? undefined
          : z === 'Z'
            ? 0
            : (z.startsWith('-') ? -1 : 1) * (Number(z.slice(1, 3)) * 60 + Number(z.slice(-2)));
      return dated(
        stampReadings({
          y: Number(m[1]),
          m: Number(m[2]),
          d: Number(m[3]),
          ...(time && { time }),
          ...(zone !== undefined && { zone }),
        }),
      );
    },
  ),
  // Nov 20, Tuesday, December 1, November 20th, 2026, Nov 25, 1:05 PM UTC.
  pass(
    new RegExp(`(?:\\b${WEEKDAY}\\.?,?\\s+)?\\b${MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b${DATE_TAIL}`, 'g'),
    (m) => writtenDate(m, m[2]!, m[3]!),
  ),
  // 20 Nov 2026, Tuesday 1 December 2026, 1st of December, Tue, 01 Dec 2026 14:05:00 GMT.
  pass(
    new RegExp(
      `(?:\\b${WEEKDAY}\\.?,?\\s+)?\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\b\\.?${DATE_TAIL}`,
      'g',
    ),
    (m) => writtenDate(m, m[3]!, m[2]!),
  ),
  // 11/20/2026: month first (as en-US writes it) unless the first number cannot be a month, so
  // 25/12/2026 is Christmas and 01/12/2026 is January 12, never December 1.
  pass(/(?<![\w/])(\d{1,2})\/(\d{1,2})\/(\d{4})(?![\w/])/g, (m) => {
    let [a, b] = [Number(m[1]), Number(m[2])];
    if (a > 12) [a, b] = [b, a];
    return dated(stampReadings({ y: Number(m[3]), m: a, d: b }));
  }),
  // 25.12.2026: dotted dates are day first (no convention writes them month first).
  pass(/(?<![\w.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\w]|\.\d)/g, (m) =>
    dated(stampReadings({ y: Number(m[3]), m: Number(m[2]), d: Number(m[1]) })),
  ),
  // Times: 13:05, 1:05 PM, 14:05 UTC, 15:05 CET, 9:30 UTC+2.
  pass(
    new RegExp(`(?<![\\d:])(\\d{1,2}):(\\d{2})(?::\\d{2})?(?:\\s*${MERIDIEM})?(?:\\s*${ZONE})?(?![\\d:])`, 'g'),
    (m) => inZone('time', { time: { h: hour12(Number(m[1]), m[3]), mi: Number(m[2]) } }, m[4], m[5], m[6]),
  ),
  pass(new RegExp(`\\b(\\d{1,2})\\s*${MERIDIEM}(?:\\s*${ZONE})?(?![A-Za-z])`, 'g'), (m) =>
    inZone('time', { time: { h: hour12(Number(m[1]), m[2]), mi: 0 } }, m[3], m[4], m[5]),
  ),
  // Money: $129.99, -$25, €1.299,00, $1.2k, USD 40, 1 299,00 €, 40 USD, 12999 cents, 30 dollars.
  pass(
    new RegExp(
      `(?:(?<![\\w.])([-−])\\s?)?(?:([$€£¥])\\s?|\\b(${CODES})\\s?)${AMOUNT}(?:\\s?(k|K|M|bn|B|thousand|million|billion)\\b)?`,
      'g',
    ),
    (m) => money(m[1], m[4]!, m[2] === undefined ? m[3] : CURRENCY_SYMBOLS[m[2]], m[5]),
  ),
  pass(new RegExp(`${NUM_START}${AMOUNT}\\s?(${CODES}|dollars?|euros?|yen|cents?|¢|[$€£¥])(?![A-Za-z])`, 'g'), (m) => {
    const unit = m[2]!;
    if (!/^(cents?|¢)$/.test(unit))
      return money(undefined, m[1]!, CURRENCY_SYMBOLS[unit] ?? CURRENCY_WORDS[unit.toLowerCase()] ?? unit, undefined);
    const parsed = parseAmount(m[1]!);
    if (parsed === 'ambiguous' || parsed === undefined)
      return { kind: 'money', claim: [], observed: [], ambiguous: `${m[1]}: thousands or decimals?` };
    const value = parsed.value / 100;
    const tol = (0.5 * 10 ** -parsed.decimals) / 100;
    return {
      kind: 'money',
      value,
      claim: moneyClaim(value, tol, undefined),
      observed: [at('q', parsed.value), ...moneyObserved(value, undefined)],
    };
  }),
  // Percentages: 25%, 25 percent. Read as 25 or 0.25.
  pass(new RegExp(`${NUM_START}${NUM}\\s?(%|percent\\b|per cent\\b|pct\\b)`, 'g'), (m) => {
    const value = parseNumber(m[1]!);
    return { kind: 'percent', value, claim: percentClaim(value, halfUnit(m[1]!)), observed: percentObserved(value) };
  }),
  // Quantities with units: 1.5 s, 250ms, 3 kg, 24 hours.
  pass(new RegExp(`${NUM_START}${NUM}\\s?(${UNIT_ALT})(?![A-Za-z0-9])`, 'g'), (m) => {
    const [dim, factor] = UNITS[m[2]!]!;
    const value = parseNumber(m[1]!);
    const base = at(dim, value * factor, halfUnit(m[1]!) * factor);
    return { kind: 'unit', value, claim: [num(value), base], observed: [at('q', value), at(dim, value * factor)] };
  }),
  // Magnitudes: 12.5k, 1.2M, 3 million.
  pass(
    new RegExp(`${NUM_START}${NUM}(?:(k|K|M|bn|B)(?![A-Za-z0-9])|\\s(thousand|million|billion|trillion)\\b)`, 'g'),
    (m) => {
      const scale = MAGNITUDE[m[2] ?? m[3]!]!;
      const value = parseNumber(m[1]!) * scale;
      return { kind: 'number', value, claim: plainClaim(value, halfUnit(m[1]!) * scale), observed: [num(value)] };
    },
  ),
  // Ordinals: 21st.
  pass(/(?<![\w.-])(\d+)(?:st|nd|rd|th)\b/g, (m) => {
    const value = Number(m[1]);
    return { kind: 'number', value, claim: plainClaim(value), observed: [num(value)] };
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
      claim: [...plainClaim(value), ...digitKeys(digits, 'claim')],
      observed: [num(value), ...digitKeys(digits, 'observed')],
    };
  }),
  // Number words: three, twenty-five, one hundred twenty.
  pass(
    new RegExp(`\\b${NUMBER_WORD}(?:(?:[\\s-]+(?:and\\s+)?)${NUMBER_WORD})*\\b`, 'gi'),
    (m) => {
      const value = wordsValue(m[0]);
      if (value === undefined) return undefined;
      return { kind: 'number', value, claim: plainClaim(value), observed: [num(value)] };
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

const MONEY_KEY_WORDS = new Set([
  'amount',
  'refund',
  'total',
  'subtotal',
  'price',
  'balance',
  'cost',
  'fee',
  'charge',
  'credit',
  'debit',
  'paid',
  'payment',
  'tax',
  'discount',
]);
const PERCENT_KEY_WORDS = new Set(['pct', 'percent', 'percentage']);

/**
 * The readings of a structured value found under `key` (a JSON field), as an observation or as a
 * claim: a number with the key's unit — `total_cents`, `amount_minor`, `amountInCents` 12999 is
 * also $129.99 (in no currency in particular), `price_eur` 12 is €12, `latency_ms` 1500 is also
 * 1.5 s, `discount_pct` 15 is 15% — else a bare number. `sibling` is the currency the value's
 * object names (`{ price: 12, currency: 'EUR' }`): an amount under a money key is in it.
 */
export function valueReadings(
  value: number,
  key: string | undefined,
  role: 'claim' | 'observed' = 'observed',
  sibling?: string,
): Reading[] {
  const words = key === undefined ? [] : keyWords(key);
  const claim = role === 'claim';
  const digits = Number.isInteger(value) && value >= 0 ? digitKeys(String(value), 'observed') : [];
  if (key !== undefined && isMinorUnitKey(key)) {
    const currency =
      words.find((w) => (CURRENCY_CODES as readonly string[]).includes(w.toUpperCase()))?.toUpperCase() ?? sibling;
    return claim
      ? [at('q', value), ...moneyClaim(value / 100, 0, currency)]
      : [at('q', value), ...moneyObserved(value / 100, currency), ...digits];
  }
  const currency =
    (key === undefined ? undefined : currencyOfKey(key)) ??
    (words.some((w) => MONEY_KEY_WORDS.has(w)) ? sibling : undefined);
  if (currency !== undefined)
    return claim ? moneyClaim(value, 0, currency) : [...moneyObserved(value, currency), ...digits];
  const unit = key === undefined ? undefined : unitOfKey(key);
  if (unit) {
    const base = at(unit[0], value * unit[1]);
    return claim ? [num(value), base] : [at('q', value), base];
  }
  if (words.some((w) => PERCENT_KEY_WORDS.has(w))) return claim ? percentClaim(value, 0) : percentObserved(value);
  if (claim) return [...plainClaim(value), ...digits];
  const out = [num(value), ...digits];
  if (value < 0 && words.some((w) => MONEY_KEY_WORDS.has(w))) out.push(at('mag', -value));
  return out;
}
