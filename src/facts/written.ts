// How people write quantities, as the mention reader matches them: month names, written numbers
// (grouped by commas, spaces or Indian lakhs; vulgar fractions) and times (regex parts), units by
// their spellings, magnitude suffixes, the words of a structured value's key. Numbers in words are
// words.ts.

export const MONTHS: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  sept: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
export const MONTH =
  '(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)';
/**
 * A written number; patterns that start with one put NUM_START before it (no sign taken from
 * "5-10", no "5 kg" taken from "1,5 kg"). A comma before one or two final digits is a decimal
 * comma (`1,5 kg`, `2,5 %`); before three it separates thousands (`1,500 kg`).
 */
export const NUM_START = '(?<![\\w.,])';
/** Indian grouping: lakhs and crores (`1,29,999`, `12,34,56,789`). */
export const INDIAN = '\\d{1,2}(?:,\\d{2})+,\\d{3}(?!\\d|,\\d)';
/**
 * At most six groups (a quintillion): a longer run is no number, and a bound keeps every pattern
 * that starts with one linear (unbounded, `123 123 123 …` cost each start the rest of the run).
 */
/** Thousands grouped by a space, a no-break, narrow or thin space, or a Swiss apostrophe (`1 299`, `1\u202f299`, `1'299`), never a part of a longer run. */
export const SPACED = "\\d{1,3}(?:[ \\u00a0\\u202f\\u2009'’]\\d{3}){1,6}(?!\\d|[ \\u00a0\\u202f\\u2009'’]\\d)";
/** Vulgar fractions, by value and denominator: `1½ h` is 1.5 h, to the nearest half hour. */
export const FRACTIONS: Record<string, [number, number]> = {
  '½': [1 / 2, 2],
  '⅓': [1 / 3, 3],
  '⅔': [2 / 3, 3],
  '¼': [1 / 4, 4],
  '¾': [3 / 4, 4],
  '⅕': [1 / 5, 5],
  '⅖': [2 / 5, 5],
  '⅗': [3 / 5, 5],
  '⅘': [4 / 5, 5],
  '⅙': [1 / 6, 6],
  '⅚': [5 / 6, 6],
  '⅛': [1 / 8, 8],
  '⅜': [3 / 8, 8],
  '⅝': [5 / 8, 8],
  '⅞': [7 / 8, 8],
};
/** A number with a vulgar fraction: `1½`, `¾`, `-2¼`. */
export const FRACTION = `\\d*[${Object.keys(FRACTIONS).join('')}]`;
/**
 * Thousands grouped by dots, as German, Spanish, Italian, Dutch and Portuguese write them: with a
 * decimal comma (`1.299,99`, `12.345.678,90`, `1.234,5`) or in two groups or more (`12.345.678`).
 * Either way one number, unlike a lone `12.999` (thousands or decimals?).
 */
export const DOT_GROUPED = '\\d{1,3}(?:\\.\\d{3})+,\\d+|\\d{1,3}(?:\\.\\d{3}){2,}(?![.,]\\d)';
const DOT_GROUPED_WHOLE = new RegExp(`^-?(?:${DOT_GROUPED})$`);
export const NUM = `([-−]?(?:${DOT_GROUPED})(?!\\d)|[-−]?${FRACTION}|[-−]?(?:${INDIAN}|${SPACED})(?:[.,]\\d{1,2}(?!\\d))?|[-−]?\\d{1,3}(?:,\\d{3})+(?:\\.\\d+)?|[-−]?\\d+,\\d{1,2}(?!\\d|[,.]\\d)|[-−]?\\d+(?:\\.\\d+)?|[-−]?\\.\\d+)`;
/** A decimal comma as NUM reads it: `1,5`, `-2,25`. */
export const DECIMAL_COMMA = /^[-−]?\d+,(\d{1,2})$/;
export const MERIDIEM = '([AaPp])\\.?[Mm]\\.?';
export const TIME_TAIL = `(?:(?:,|\\s+at)?\\s+(\\d{1,2})(?::(\\d{2}))?\\s*${MERIDIEM}|(?:,|\\s+at)?\\s+(\\d{1,2}):(\\d{2})(?::\\d{2})?)?`;

/**
 * A unit: its dimension, its factor to the dimension's base unit and, for data, its factor as a
 * binary prefix is also read (`16 GB` of RAM is 16 GiB; `16,384 MB` is 16 GB so read).
 */
export type UnitEntry = [dim: string, factor: number, binary?: number];

/** Units by the way they are written: dimension and factor to the dimension's base unit. */
export const UNITS: Record<string, UnitEntry> = {
  ms: ['time', 0.001],
  msec: ['time', 0.001],
  millisecond: ['time', 0.001],
  milliseconds: ['time', 0.001],
  s: ['time', 1],
  sec: ['time', 1],
  secs: ['time', 1],
  second: ['time', 1],
  seconds: ['time', 1],
  min: ['time', 60],
  mins: ['time', 60],
  minute: ['time', 60],
  minutes: ['time', 60],
  h: ['time', 3600],
  hr: ['time', 3600],
  hrs: ['time', 3600],
  hour: ['time', 3600],
  hours: ['time', 3600],
  day: ['time', 86400],
  days: ['time', 86400],
  week: ['time', 604800],
  weeks: ['time', 604800],
  mm: ['length', 0.001],
  cm: ['length', 0.01],
  m: ['length', 1],
  km: ['length', 1000],
  inch: ['length', 0.0254],
  inches: ['length', 0.0254],
  ft: ['length', 0.3048],
  feet: ['length', 0.3048],
  foot: ['length', 0.3048],
  mi: ['length', 1609.344],
  mile: ['length', 1609.344],
  miles: ['length', 1609.344],
  mg: ['mass', 0.001],
  g: ['mass', 1],
  kg: ['mass', 1000],
  lb: ['mass', 453.59237],
  lbs: ['mass', 453.59237],
  oz: ['mass', 28.349523125],
  // KB, MB, GB, TB in SI (1000) and as a binary prefix (1024: RAM, Windows, most memory limits);
  // bytes and KiB… are exact in both.
  bytes: ['data', 1, 1],
  KB: ['data', 1000, 1024],
  kB: ['data', 1000, 1024],
  MB: ['data', 1e6, 1024 ** 2],
  GB: ['data', 1e9, 1024 ** 3],
  TB: ['data', 1e12, 1024 ** 4],
  KiB: ['data', 1024, 1024],
  MiB: ['data', 1024 ** 2, 1024 ** 2],
  GiB: ['data', 1024 ** 3, 1024 ** 3],
  TiB: ['data', 1024 ** 4, 1024 ** 4],
  // Basis points: hundredths of a percent (`150 bps` is 1.5%, `rate_bps: 150` never 150%).
  bps: ['pct', 0.01],
  'basis points': ['pct', 0.01],
  'basis point': ['pct', 0.01],
  ml: ['volume', 0.001],
  mL: ['volume', 0.001],
  l: ['volume', 1],
  L: ['volume', 1],
  liter: ['volume', 1],
  liters: ['volume', 1],
  litre: ['volume', 1],
  litres: ['volume', 1],
};
export const UNIT_ALT = Object.keys(UNITS)
  .sort((a, b) => b.length - a.length)
  .join('|');

/** The unit of a structured value's key (`latency_ms`, `timeoutSeconds`, `weight_kg`), if it names one. */
export function unitOfKey(key: string): UnitEntry | undefined {
  const words = keyWords(key);
  const last = words.at(-1);
  if (last === undefined || words.length < 2) return undefined;
  const exact = Object.entries(UNITS).find(([u]) => u.toLowerCase() === last);
  return exact?.[1];
}

/** A key whose number is in minor units (cents): `total_cents`, `amount_minor`, `amountInCents`. */
export function isMinorUnitKey(key: string): boolean {
  return keyWords(key).some((w) => w === 'cents' || w === 'cent' || w === 'minor');
}

/**
 * A key whose number is in millionths of the currency's unit: `cost_micros`, `priceMicros`,
 * `amount_micros` (Google's APIs). 129990000 is 129.99, never 129,990,000.
 */
export function isMicrosKey(key: string): boolean {
  return keyWords(key).some((w) => w === 'micros' || w === 'micro');
}

/** The words of a key: `total_cents`, `totalCents`, `total-cents` -> ['total', 'cents']. */
export function keyWords(key: string): string[] {
  let words = keyWordCache.get(key);
  if (words === undefined) {
    words = splitKey(key);
    if (keyWordCache.size > 10_000) keyWordCache.clear();
    keyWordCache.set(key, words);
  }
  return words;
}

const keyWordCache = new Map<string, string[]>();

function splitKey(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

export const MAGNITUDE: Record<string, number> = {
  k: 1e3,
  K: 1e3,
  thousand: 1e3,
  M: 1e6,
  million: 1e6,
  B: 1e9,
  bn: 1e9,
  billion: 1e9,
  trillion: 1e12,
  // After an amount only (`$1.2m`, `€3mn`, `$5MM`, `£2 mln`, `$3b`, `€2 Mio.`): bare, `1.2m` is metres.
  m: 1e6,
  mn: 1e6,
  mln: 1e6,
  mm: 1e6,
  MM: 1e6,
  Mio: 1e6,
  b: 1e9,
  bln: 1e9,
  Mrd: 1e9,
  tn: 1e12,
  T: 1e12,
};

/** Tokens mixing letters and digits: the shape of an identifier (BK-0001, P-102, FL101, bk_7f3a). */
export const ID_TOKEN = /(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]*[A-Za-z0-9](?![\w-])/g;

/** A mark that groups digits: a space, a no-break, narrow no-break or thin space, a Swiss apostrophe. */
export const GROUP_MARK = /[ \u00a0\u202f\u2009'’]/g;

/** `12,500` -> 12500; `1 299` -> 1299; `1½` -> 1.5; `-3.5` -> -3.5; `1,5` -> 1.5; `1.234,5` -> 1234.5; `12.345.678` -> 12345678. */
export function parseNumber(text: string): number {
  const t = text.replace(/^[-−]/, '-').replace(GROUP_MARK, '');
  const fraction = FRACTIONS[t.at(-1)!];
  if (fraction !== undefined) {
    const whole = t.slice(0, -1).replace('-', '');
    return (t.startsWith('-') ? -1 : 1) * (Number(whole || 0) + fraction[0]);
  }
  if (DOT_GROUPED_WHOLE.test(t)) return Number(t.replace(/\./g, '').replace(',', '.'));
  return Number(DECIMAL_COMMA.test(t) ? t.replace(',', '.') : t.replace(/,/g, ''));
}

/** How many decimals a written number has: `12.5` 1, `1.234,56` 2, `12,5` 1, `1,299` and `12.345.678` 0. */
export function decimalsWritten(text: string): number {
  const t = text.replace(GROUP_MARK, '').replace(/^[-−]/, '');
  if (DOT_GROUPED_WHOLE.test(t)) return t.includes(',') ? t.length - t.indexOf(',') - 1 : 0;
  return (/\.(\d+)/.exec(t) ?? DECIMAL_COMMA.exec(t))?.[1]?.length ?? 0;
}

/**
 * An amount as written in either convention: `1,299.00`, `1.299,00`, `1 299,00` (a space, no-break
 * or thin space), `1'234.50`, `129,99`, `-25`, Indian lakhs (`1,29,999`). Never a part of a longer
 * number: `₹1,29,999` is not `₹1,29`.
 */
export const AMOUNT =
  "([-−]?(?:\\d{1,2}(?:,\\d{2})+,\\d{3}(?:\\.\\d{1,2})?|\\d{1,3}(?:[,.\\u00a0\\u202f\\u2009 '’]\\d{3}){1,6}(?:[.,]\\d{1,2})?|\\d+(?:[.,]\\d+)?)(?!\\d|[.,]\\d))";

/**
 * Reads an amount written in either convention. The separator written last is the decimal one
 * when both are written (`1.299,00`, `1,299.00`); a lone `,` or `.` before one or two digits is
 * decimal (`129,99`, `129.99`); a lone `,` before three digits is thousands (`12,999`); a lone `.`
 * before three digits (`12.999`) is `'ambiguous'` (twelve thousand in Europe, twelve with three
 * decimals elsewhere) unless `dotThousands` says which. Returns the value and how many decimals were written.
 */
export function parseAmount(
  text: string,
  dotThousands?: boolean,
): { value: number; decimals: number } | 'ambiguous' | undefined {
  const negative = /^[-−]/.test(text);
  const body = text.replace(/^[-−]/, '').replace(/[\u00a0\u202f\u2009 '’]/g, ' ');
  const lastDot = body.lastIndexOf('.');
  const lastComma = body.lastIndexOf(',');
  let decimalAt = -1;
  if (lastDot >= 0 && lastComma >= 0) decimalAt = Math.max(lastDot, lastComma);
  else {
    const sep = lastDot >= 0 ? '.' : lastComma >= 0 ? ',' : undefined;
    if (sep !== undefined) {
      const at = body.lastIndexOf(sep);
      const tail = body.length - at - 1;
      const count = body.split(sep).length - 1;
      if (count === 1 && tail !== 3) decimalAt = at;
      else if (count === 1 && tail === 3 && sep === '.' && !body.includes(' ')) {
        if (dotThousands === undefined) return 'ambiguous';
        if (!dotThousands) decimalAt = at;
      }
    }
  }
  const whole = (decimalAt < 0 ? body : body.slice(0, decimalAt)).replace(/[ ,.]/g, '');
  const fraction = decimalAt < 0 ? '' : body.slice(decimalAt + 1);
  if (!/^\d+$/.test(whole) || !/^\d*$/.test(fraction)) return undefined;
  const value = Number(`${whole}.${fraction || '0'}`);
  return { value: negative ? -value : value, decimals: fraction.length };
}

/** Offsets from UTC, in minutes, of the zones people write by name (IST is left out: it names three). */
export const ZONES: Record<string, number> = {
  UTC: 0,
  GMT: 0,
  Z: 0,
  WET: 0,
  WEST: 60,
  BST: 60,
  CET: 60,
  CEST: 120,
  EET: 120,
  EEST: 180,
  EST: -300,
  EDT: -240,
  CST: -360,
  CDT: -300,
  MST: -420,
  MDT: -360,
  PST: -480,
  PDT: -420,
  JST: 540,
  KST: 540,
  HKT: 480,
  SGT: 480,
  AWST: 480,
  MSK: 180,
  SAST: 120,
  HST: -600,
  AKST: -540,
  AKDT: -480,
  AEST: 600,
  AEDT: 660,
  NZST: 720,
  NZDT: 780,
};
/** US zones written without saying standard or daylight time: [standard, daylight] offsets. */
export const GENERIC_ZONES: Record<string, [number, number]> = {
  ET: [-300, -240],
  CT: [-360, -300],
  MT: [-420, -360],
  PT: [-480, -420],
};
/** US zones written in words (`3 pm Eastern`, `9:00 Pacific Time`, `Central Standard Time`): their abbreviations. */
export const ZONE_WORDS: Record<string, string> = Object.fromEntries(
  (
    [
      ['Eastern', 'E'],
      ['Central', 'C'],
      ['Mountain', 'M'],
      ['Pacific', 'P'],
    ] as const
  ).flatMap(([word, letter]) => [
    [`${word} Standard Time`, `${letter}ST`],
    [`${word} Daylight Time`, `${letter}DT`],
    [`${word} Time`, `${letter}T`],
    [word, `${letter}T`],
  ]),
);
/** Zone names that name several zones (IST: India, Ireland, Israel); a time in one is refused. */
export const AMBIGUOUS_ZONES = ['IST', 'AST', 'BT'];
/** A zone written after a time: a name (`UTC`, `CET`), a name with an offset (`UTC+2`, `GMT-05:00`), or an offset. */
export const ZONE = `(?:(${[
  ...Object.keys(ZONES),
  ...Object.keys(GENERIC_ZONES),
  ...AMBIGUOUS_ZONES,
  ...Object.keys(ZONE_WORDS),
]
  .filter((z) => z !== 'Z')
  .sort((a, b) => b.length - a.length)
  .join('|')})(?:\\s?([-+−]\\d{1,2})(?::?(\\d{2}))?)?(?![A-Za-z]))`;

/**
 * Minutes east of UTC for a zone name and an optional `+h[:mm]`, on `date` when given (ET, PT…
 * are daylight time from the second Sunday of March to the first Sunday of November); a string
 * saying why when the zone cannot be told (IST; ET with no date).
 */
export function zoneOffset(
  name: string,
  hours?: string,
  minutes?: string,
  date?: { y: number; m: number; d: number; h: number },
): number | string | undefined {
  const upper = (ZONE_WORDS[name] ?? name).toUpperCase();
  if (AMBIGUOUS_ZONES.includes(upper)) return `${name} names several zones`;
  const generic = GENERIC_ZONES[upper];
  let base = ZONES[upper];
  if (generic !== undefined) {
    if (date === undefined) return `${name} without a date: standard or daylight time?`;
    const daylight = usDaylight(date);
    if (daylight === undefined) return `${name} in the hour clocks go back: standard or daylight time?`;
    base = daylight ? generic[1] : generic[0];
  }
  if (base === undefined) return undefined;
  if (hours === undefined) return base;
  const sign = /^[-−]/.test(hours) ? -1 : 1;
  return base + sign * (Math.abs(Number(hours.replace(/^[-+−]/, ''))) * 60 + Number(minutes ?? 0));
}

/**
 * US daylight time: from 2:00 on the second Sunday of March to 2:00 on the first Sunday of
 * November (local); undefined in the hour from 1:00 that day, which clocks show twice.
 */
function usDaylight({ y, m, d, h }: { y: number; m: number; d: number; h: number }): boolean | undefined {
  const sundayOnOrAfter = (month: number, day: number) =>
    day + ((7 - new Date(Date.UTC(y, month - 1, day)).getUTCDay()) % 7);
  const start = sundayOnOrAfter(3, 8);
  const end = sundayOnOrAfter(11, 1);
  if (m > 3 && m < 11) return true;
  if (m === 3) return d > start || (d === start && h >= 2);
  if (m === 11) return d === end && h === 1 ? undefined : d < end || (d === end && h < 1);
  return false;
}

/** Weekday names by day (0 Sunday … 6 Saturday): English, German, French, Spanish, Italian, Portuguese, Dutch. */
export const WEEKDAY_NAMES: readonly string[] = [
  'sunday sonntag dimanche domingo domenica zondag',
  'monday montag lundi lunes lunedì lunedi segunda-feira maandag',
  'tuesday dienstag mardi martes martedì martedi terça-feira terca-feira dinsdag',
  'wednesday mittwoch mercredi miércoles miercoles mercoledì mercoledi quarta-feira woensdag',
  'thursday donnerstag jeudi jueves giovedì giovedi quinta-feira donderdag',
  'friday freitag vendredi viernes venerdì venerdi sexta-feira vrijdag',
  'saturday samstag sonnabend samedi sábado sabado zaterdag',
];
/** Any of them, as a pattern (no group). */
export const WEEKDAY_NAME = WEEKDAY_NAMES.flatMap((n) => n.split(' ')).join('|');

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
export const WEEKDAY =
  '(Sun(?:day)?|Mon(?:day)?|Tue(?:s(?:day)?)?|Wed(?:nesday)?|Thu(?:r(?:s(?:day)?)?)?|Fri(?:day)?|Sat(?:urday)?)';

/** Folds case, diacritics and compatibility forms: `Zoë` -> `zoe`, `Ｏ-７７３１` -> `o-7731`. */
export function foldText(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}
