// Dates and times as people write them: ISO stamps, month names, slashes and dots, clock times in
// zones, and the keys each is matched by (wall clock, UTC, weekday).

import { dayFirst } from './conventions.js';
import { ambiguousMention, at, type Conventions, type Mention, type Pass, pass, type Reading } from './readings.js';
import { keyWords, MERIDIEM, MONTH, MONTHS, TIME_TAIL, WEEKDAY, WEEKDAYS, ZONE, zoneOffset } from './written.js';

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** A date and/or time as written: the wall-clock fields, the zone (minutes east of UTC) and weekday when written. */
interface Stamp {
  y?: number;
  m?: number;
  d?: number;
  time?: { h: number; mi: number; s?: number };
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
  const r = stampKeys(s);
  const sec = s.time?.s;
  if (r === undefined || r === NEVER || s.time === undefined) return r;
  if (sec !== undefined && sec > 59) return undefined;
  // Seconds: a claim that writes them matches an observation with the same ones, or one written to
  // the minute ("14:05:05" is not 14:05:00); a claim written to the minute matches either.
  const tag = (ss: string) => (k: Reading) => ({ ...k, key: `${k.key}:${ss}` });
  const timed = r.observed.filter((k) => k.key !== undefined && TIMED.test(k.key));
  return {
    claim: sec === undefined ? r.claim : [...r.claim.map(tag(pad(sec))), ...r.claim.map(tag('--'))],
    observed: [...r.observed, ...timed.map(tag(sec === undefined ? '--' : pad(sec)))],
  };
}

const TIMED = /\d\d:\d\d$/;

function stampKeys(s: Stamp): Readings | undefined {
  const { y, m, d, time, zone } = s;
  const hasDate = m !== undefined && d !== undefined;
  if (hasDate && (m < 1 || m > 12 || d < 1 || d > daysIn(y, m))) return undefined;
  if (time && !(time.h <= 23 && time.mi <= 59)) return undefined;
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
    observed: [
      ...wall.observed,
      ...utcWall.observed,
      ...zoned.map((key) => ({ dim: 'z', key })),
      ...(hasDate && y !== undefined
        ? localDates(u, [`${utc.y}-${pad(utc.m)}-${pad(utc.d)}`, `${y}-${pad(m)}-${pad(d)}`])
        : []),
    ],
  };
}

/**
 * The other dates an instant has somewhere (UTC−12 to UTC+14), as maybes: 2026-12-01T02:00Z is
 * November 30 in New York, so "November 30" is undecided against it, neither grounded nor refuted.
 */
function localDates(instant: Date, known: string[]): Reading[] {
  const out: Reading[] = [];
  for (const hours of [-12, 14]) {
    const t = new Date(instant.getTime() + hours * 3_600_000);
    const [y, m, d] = [t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate()];
    const ymd = `${y}-${pad(m)}-${pad(d)}`;
    if (known.includes(ymd)) continue;
    const unsure = `${instant.toISOString().slice(0, 16)}Z is ${ymd} in zones ${hours < 0 ? 'west' : 'east'} of UTC`;
    out.push({ dim: 'd', key: `d:${ymd}`, unsure }, { dim: 'md', key: `md:${pad(m)}-${pad(d)}`, unsure });
  }
  return out;
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

/** A 12-hour clock's hour in 24 (`12 AM` is 0, `1 PM` 13); an hour over 12 before AM/PM is no time (`72:34 AM` is not 0:34). */
function hour12(h: number, meridiem: string | undefined): number {
  if (meridiem === undefined) return h;
  if (h > 12) return Number.NaN;
  const pm = meridiem.toLowerCase() === 'p';
  return (h % 12) + (pm ? 12 : 0);
}

const DAY = 86_400_000;

/** The date of day `day` (1 Monday … 7 Sunday) of ISO week `week` of `year`; undefined for a week the year has not. */
function isoWeekDate(year: number, week: number, day: number): Stamp | undefined {
  const jan4 = Date.UTC(year, 0, 4);
  const monday = jan4 - ((new Date(jan4).getUTCDay() + 6) % 7) * DAY;
  const at = new Date(monday + ((week - 1) * 7 + day - 1) * DAY);
  // The week belongs to the year its Thursday is in: week 53 of a year with 52 is not one.
  const thursday = new Date(monday + ((week - 1) * 7 + 3) * DAY);
  if (week < 1 || thursday.getUTCFullYear() !== year) return undefined;
  return { y: at.getUTCFullYear(), m: at.getUTCMonth() + 1, d: at.getUTCDate(), weekday: day % 7 };
}

/** The passes, most specific first; compiled once. */
const MONTH_OF = (name: string) => MONTHS[name.slice(0, name.toLowerCase().startsWith('sept') ? 4 : 3).toLowerCase()]!;
const WEEKDAY_OF = (name: string | undefined) =>
  name === undefined ? undefined : WEEKDAYS.indexOf(name.slice(0, 3).toLowerCase());

function dated(r: Readings | undefined): Omit<Mention, 'start' | 'end' | 'text'> | undefined {
  return r && { kind: 'date', ...r };
}

/** A day written with its month (and year): one that does not exist with its year written grounds nothing. */
export function dayOf(
  y: number | undefined,
  m: number,
  d: number,
): Omit<Mention, 'start' | 'end' | 'text'> | undefined {
  const made = dated(stampReadings({ ...(y !== undefined && { y }), m, d }));
  return made ?? (y === undefined ? undefined : { kind: 'date', ...NEVER });
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
  // With its year written it is surely a date: one that does not exist (December 0, 2026) grounds nothing.
  const made = inZone('date', stamp, m[10], m[11], m[12]);
  return made ?? (stamp.y === undefined ? undefined : { kind: 'date', ...NEVER });
}

/** A clock time with no date or zone (`14 Uhr`, `à 14h30`, `14時`): its wall-clock readings, or undefined for no time (`25 Uhr`). */
export function clockOf(h: number, mi: number): Omit<Mention, 'start' | 'end' | 'text'> | undefined {
  return inZone('time', { time: { h, mi } }, undefined, undefined, undefined);
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

/** A two-digit year is this century's (`26` is 2026). */
function fullYear(y: string): number {
  return y.length === 2 ? 2000 + Number(y) : Number(y);
}

/** Words after which `3/4` is a date (`on 3/4`, `by 12/5`, `Friday 3/4`), and a time after one (`3/4 at 9:30`). */
export const DATED_BEFORE = new RegExp(
  `\\b(?:on|by|until|till|before|after|from|since|due|dated|through|thru|${WEEKDAY})\\.?,?\\s{1,3}$`,
  'i',
);
export const DATED_AFTER = /^,?\s{1,3}(?:at\s{1,3})?\d{1,2}(?::\d\d|\s?[ap]\.?m\b)/i;

/**
 * A date written with two numbers, day and month in an order the text may not say (`01/12/2026`:
 * 1 December or January 12): a number over 12 is the day, else the text's conventions decide, else
 * either reading the world holds grounds it. `y` undefined: a month and day of any year.
 */
function eitherWay(
  written: string,
  a: number,
  b: number,
  y: number | undefined,
  c: () => Conventions,
): Omit<Mention, 'start' | 'end' | 'text'> | undefined {
  const conventions = a > 12 || b > 12 || a === b ? undefined : c();
  const first = conventions === undefined ? a > 12 : dayFirst(conventions);
  const stamp = (m: number, d: number): Stamp => ({ ...(y !== undefined && { y }), m, d });
  if (first !== undefined) return dated(stampReadings(first ? stamp(b, a) : stamp(a, b)));
  const monthFirst = stampReadings(stamp(a, b));
  const dayFirstReading = stampReadings(stamp(b, a));
  if (monthFirst === undefined || dayFirstReading === undefined) return undefined;
  const ymd = (m: number, d: number) => `${y === undefined ? '' : `${y}-`}${pad(m)}-${pad(d)}`;
  const made = ambiguousMention('date', `${written}: day or month first?`, [
    { as: ymd(a, b), ...monthFirst },
    { as: ymd(b, a), ...dayFirstReading },
  ]);
  // Nothing in the text says which: either reading the world holds grounds it (a text that shows both ways does not).
  return conventions?.dayFirst === false && !conventions.monthFirst ? { ...made, either: true } : made;
}

export const DATE_PASSES: Pass[] = [
  // ISO dates and timestamps: 2026-11-20, 2026-11-20T14:05:00Z, 2026-11-20 14:05, …T15:05+01:00, and
  // Postgres's timestamptz text with its offset in hours alone: 2026-12-02 10:00:00+01.
  pass(
    /(?<![\w-])(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?(?![\w-])/g,
    (m) => {
      const time =
        m[4] === undefined
          ? undefined
          : { h: Number(m[4]), mi: Number(m[5]), ...(m[6] !== undefined && { s: Number(m[6]) }) };
      const z = m[7];
      const zone =
        z === undefined
          ? undefined
          : z === 'Z'
            ? 0
            : (z.startsWith('-') ? -1 : 1) * (Number(z.slice(1, 3)) * 60 + (z.length > 3 ? Number(z.slice(-2)) : 0));
      // A stamp in ISO shape that is no date or time (2026-18-01, …T25:00) states nothing true: it
      // keeps its span (its pieces are not read as a year, a count and a time) and grounds nothing.
      return dated(
        stampReadings({
          y: Number(m[1]),
          m: Number(m[2]),
          d: Number(m[3]),
          ...(time && { time }),
          ...(zone !== undefined && { zone }),
        }) ?? NEVER,
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
  // 11/20/2026 and 25/12/2026: a number over 12 is the day. 01/12/2026 is 1 December day first
  // and January 12 month first: the rest of the text decides (another date that can only be one
  // way, a decimal comma), else it is ambiguous and the world may settle it. The same with a
  // two-digit year (03/04/26 is 2026) or dashes (03-04-2026); never its pieces.
  pass(/(?<![\w/.-])(\d{1,2})(?:\/(\d{1,2})\/(\d{4}|\d{2})|-(\d{1,2})-(\d{4}))(?![\w/]|[.-]\d)/g, (m, c) =>
    eitherWay(m[0], Number(m[1]), Number(m[2] ?? m[4]), fullYear(m[3] ?? m[5]!), c),
  ),
  // 03/04 with no year, where it can only be a date: a piece written with a leading zero, a word
  // that puts a date after it (`on 3/4`, `by 12/5`, `Friday 3/4`), or a time after it. `24/7`,
  // a score's `7/10` and a fraction's `3/4` stay numbers. The date is a month and day of any year.
  pass(/(?<![\w/.-])(\d{1,2})\/(\d{1,2})(?![\w/]|[.,:-]\d)/g, (m, c) => {
    const [a, b] = [m[1]!, m[2]!];
    const end = m.index + m[0].length;
    const dated =
      /^0\d$/.test(a) ||
      /^0\d$/.test(b) ||
      DATED_BEFORE.test(m.input.slice(Math.max(0, m.index - 12), m.index)) ||
      DATED_AFTER.test(m.input.slice(end, end + 16));
    return dated ? eitherWay(m[0], Number(a), Number(b), undefined, c) : undefined;
  }),
  // 2026/03/04: year first is year, month, day in every convention.
  pass(/(?<![\w/.-])(\d{4})\/(\d{1,2})\/(\d{1,2})(?![\w/]|[.-]\d)/g, (m) =>
    dated(stampReadings({ y: Number(m[1]), m: Number(m[2]), d: Number(m[3]) }) ?? NEVER),
  ),
  // ISO week dates: 2026-W49-2, 2026W492 (the Tuesday of ISO week 49 of 2026, December 1).
  pass(/(?<![\w-])(\d{4})-?W(\d{2})-?([1-7])(?![\w-])/g, (m) => {
    const date = isoWeekDate(Number(m[1]), Number(m[2]), Number(m[3]));
    return date && dated(stampReadings(date));
  }),
  // 25.12.2026: dotted dates are day first (no convention writes them month first).
  pass(/(?<![\w.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\w]|\.\d)/g, (m) =>
    dated(stampReadings({ y: Number(m[3]), m: Number(m[2]), d: Number(m[1]) })),
  ),
  // Times: 13:05, 1:05 PM, 14:05 UTC, 15:05 CET, 9:30 UTC+2.
  pass(
    new RegExp(`(?<![\\d:])(\\d{1,2}):(\\d{2})(?::(\\d{2}))?(?:\\s*${MERIDIEM})?(?:\\s*${ZONE})?(?![\\d:])`, 'g'),
    (m) => {
      const time = { h: hour12(Number(m[1]), m[4]), mi: Number(m[2]), ...(m[3] !== undefined && { s: Number(m[3]) }) };
      return inZone('time', { time }, m[5], m[6], m[7]);
    },
  ),
  pass(new RegExp(`(?<![\\d:])\\b(\\d{1,2})\\s*${MERIDIEM}(?:\\s*${ZONE})?(?![A-Za-z])`, 'g'), (m) =>
    inZone('time', { time: { h: hour12(Number(m[1]), m[2]), mi: 0 } }, m[3], m[4], m[5]),
  ),
];

/** The last word of a key that names an instant: `created`, `created_at`, `updatedAt`, `timestamp`, JWT's `exp`. */
const INSTANT_KEY_WORDS = new Set([
  'at',
  'on',
  'time',
  'timestamp',
  'ts',
  'date',
  'datetime',
  'created',
  'updated',
  'modified',
  'deleted',
  'expires',
  'expiry',
  'expiration',
  'exp',
  'iat',
  'nbf',
  'since',
  'until',
  'epoch',
  'unix',
]);
/** Seconds and milliseconds since the epoch from 2000 to 2200: the two ranges do not meet. */
const EPOCH_SECONDS = [946_684_800, 7_258_118_400] as const;
const EPOCH_MS = [946_684_800_000, 7_258_118_400_000] as const;

/**
 * The instant a number under `key` states as Unix time (Stripe's `created: 1764511200`, JWT's
 * `exp`, `updatedAt: 1764511200000`), as an ISO string in UTC; undefined for a key that names no
 * instant or a number that is no time between 2000 and 2200. Seconds and milliseconds by magnitude.
 */
export function epochInstant(value: number, key: string): string | undefined {
  const words = keyWords(key);
  const last = words.at(-1);
  // `time_ms`, `created_unix_ms`: the unit word after the word that names the instant.
  const named = last === 'ms' || last === 's' || last === 'seconds' ? words.at(-2) : last;
  if (named === undefined || !INSTANT_KEY_WORDS.has(named)) return undefined;
  let ms: number;
  if (value >= EPOCH_SECONDS[0] && value < EPOCH_SECONDS[1]) ms = value * 1000;
  else if (value >= EPOCH_MS[0] && value < EPOCH_MS[1]) ms = value;
  else return undefined;
  const iso = new Date(Math.floor(ms)).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}
