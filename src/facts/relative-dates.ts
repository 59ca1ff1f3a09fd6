// Dates written relative to the day they were written on: `tomorrow`, `yesterday`, `today`, `next
// Friday`, `this Monday`, `last Tuesday`, `in 3 days`, `two weeks ago`, `next week` (and the day
// words of German, French, Spanish, Italian, Portuguese, Dutch, Chinese, Japanese and Korean). They
// are read against the run's day (`RunDay`: what the run stated as today, else the clock the agent
// saw, in its zone or every zone UTC−12..+14); with none they are unread — no verdict, and never
// their pieces (`in 14 days` is no count of 14).

import { conventionsOf } from './conventions.js';
import { DATE_PASSES, dayOf } from './dates.js';
import { DATE_ABROAD_PASSES } from './dates-abroad.js';
import { at, type Made, type Pass, pass, type Reading } from './readings.js';
import { NUMBER_WORD, wordsValue } from './words.js';
import { WEEKDAY, WEEKDAYS } from './written.js';

/** The day the run happened on, as its answer's relative dates are read against. */
export interface RunDay {
  /** The dates `today` may be (`2026-11-24`): one, or a few (a run over midnight, an unknown zone). */
  today: readonly string[];
  /** Where it was read, for messages: "the user's words: Today is 2026-11-24", "the run's clock". */
  source: string;
}

const DAY = 86_400_000;
const ISO_DAY = /^(\d{4})-(\d\d)-(\d\d)$/;

function shift(ymd: string, days: number): string {
  const [, y, m, d] = ISO_DAY.exec(ymd)!;
  return new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)) + days * DAY).toISOString().slice(0, 10);
}

function weekdayOf(ymd: string): number {
  return new Date(`${ymd}T00:00:00Z`).getUTCDay();
}

/** The date of an instant in a zone (IANA), or in every zone from UTC−12 to UTC+14 when none is known. */
function datesOf(instant: number, timeZone: string | undefined): string[] {
  if (timeZone !== undefined) {
    try {
      return [new Intl.DateTimeFormat('en-CA', { timeZone }).format(instant)];
    } catch {
      // an unknown zone: every zone
    }
  }
  // UTC-12 to UTC+14 span 26 hours: two or three calendar days, each of them (the one between too).
  const out: string[] = [];
  const east = new Date(instant + 14 * 3_600_000).toISOString().slice(0, 10);
  for (let t = instant - 12 * 3_600_000; ; t += DAY) {
    const d = new Date(t).toISOString().slice(0, 10);
    if (!out.includes(d)) out.push(d);
    if (d >= east) break;
  }
  return out;
}

/** Instants a clock may have handed an agent: ms since the epoch, 2000 to 2200. */
const PLAUSIBLE = [946_684_800_000, 7_258_118_400_000] as const;

/**
 * The run's day from what it recorded: a date the user or the agent stated as today (`Today is
 * 2026-11-24`, `as of Nov 24, 2026`) wins; else the dates of the first and last clock values the
 * agent saw (and the days between, for a run of at most three days), else of `fallback` (the
 * recording's start), in `timeZone` or, unknown, in every zone UTC−12..+14. Undefined when none of
 * them is a time.
 */
export function runDayOf(input: {
  stated?: readonly string[];
  clock?: ReadonlyArray<number | string>;
  fallback?: string;
  timeZone?: string;
}): RunDay | undefined {
  for (const text of input.stated ?? []) {
    const today = statedToday(text);
    if (today !== undefined) return { today: [today.date], source: `${today.said}` };
  }
  const instants: number[] = [];
  for (const v of input.clock ?? []) {
    const t = typeof v === 'number' ? v : Date.parse(v);
    if (Number.isFinite(t) && t >= PLAUSIBLE[0] && t <= PLAUSIBLE[1]) instants.push(t);
  }
  const zone = input.timeZone === undefined ? '' : ` in ${input.timeZone}`;
  if (instants.length > 0) {
    let [first, last] = [instants[0]!, instants[0]!];
    for (const t of instants) [first, last] = [Math.min(first, t), Math.max(last, t)];
    // A clock that jumps further than a run lasts (a hostile one) is read at its ends only.
    const today = new Set<string>(datesOf(first, input.timeZone));
    if (last - first <= 3 * DAY)
      for (let t = first + DAY; t < last; t += DAY) for (const d of datesOf(t, input.timeZone)) today.add(d);
    for (const d of datesOf(last, input.timeZone)) today.add(d);
    return { today: [...today].sort(), source: `the run's clock${zone}` };
  }
  const start = input.fallback === undefined ? Number.NaN : Date.parse(input.fallback);
  if (!Number.isFinite(start)) return undefined;
  return { today: datesOf(start, input.timeZone), source: `the recording's start${zone}` };
}

/** Words that state today's date, with the date after them (`Today is …`, `as of …`, `current date: …`). */
const STATED =
  /\b(?:today\s+is|today's\s+date\s+is|the\s+(?:current\s+)?date\s+is|current\s+date:?|as\s+of|it\s+is\s+now|date:)\s{0,3}(?:\w+day,?\s{1,3})?/gi;

/** The first date a text states as today, and the words that state it. */
function statedToday(text: string): { date: string; said: string } | undefined {
  for (const m of text.matchAll(STATED)) {
    const from = m.index + m[0].length;
    const tail = text.slice(from, from + 40);
    const date = /^(\d{4}-\d\d-\d\d)(?![\d-])/.exec(tail)?.[1] ?? writtenDay(tail);
    if (date !== undefined) return { date, said: `"${m[0].trim()} …" stated in the run (${date})` };
  }
  return undefined;
}

/** A date written at the start of `tail` (`Nov 24, 2026`, `24.11.2026`, `24 novembre 2026`), as YYYY-MM-DD. */
function writtenDay(tail: string): string | undefined {
  for (const { re, make } of [...DATE_PASSES, ...DATE_ABROAD_PASSES]) {
    re.lastIndex = 0;
    const m = re.exec(tail);
    if (m === null || m.index !== 0) continue;
    const key = make(m, () => conventionsOf(tail), undefined)?.claim.find(
      (r) => r.key !== undefined && DAY_KEY.test(r.key),
    )?.key;
    if (key !== undefined) return DAY_KEY.exec(key)![1];
  }
  return undefined;
}

/** A claim key that holds a whole date: `d:2026-11-24`, `dt:2026-11-24T10:00`, `l:…`. */
const DAY_KEY = /^(?:d|dt|l):(\d{4}-\d\d-\d\d)/;

/** A count written in digits or words (`3`, `three`, `a`, `an`), at most ten years of days. */
function countOf(written: string): number | undefined {
  const w = written.toLowerCase();
  const n = w === 'a' || w === 'an' ? 1 : /^\d+$/.test(w) ? Number(w) : wordsValue(w)?.value;
  return n !== undefined && Number.isInteger(n) && n > 0 && n <= 3660 ? n : undefined;
}

/** The dates a relative date names from one day the run may be on (YYYY-MM-DD each). */
export type Targets = (today: string) => string[];

/**
 * The readings of a relative date: the dates it names from each day `today` may be — as a claim,
 * any of them observed grounds it; observed, each is only a maybe when there are several. `today`
 * itself is grounded by the run's day (`now:today`). `duration`: `in 3 days` may also be a length
 * of time (`completed in 3 days`), a quantity observed grounds it.
 */
export function relative(day: RunDay | undefined, written: string, targets: Targets, duration?: number): Made {
  if (day === undefined)
    return { kind: 'date', claim: [], observed: [], unread: `${written}: no run time to read it against` };
  const dates = [...new Set(day.today.flatMap(targets))].sort();
  const claim: Reading[] = [];
  const observed: Reading[] = [];
  const unsure = dates.length > 1 ? `${written} is ${dates.join(' or ')} (${day.source})` : undefined;
  for (const ymd of dates) {
    const [, y, m, d] = ISO_DAY.exec(ymd)!;
    const made = dayOf(Number(y), Number(m), Number(d));
    if (made === undefined) continue;
    claim.push(...made.claim);
    observed.push(...(unsure === undefined ? made.observed : made.observed.map((r) => ({ ...r, unsure }))));
  }
  if (dates.every((d) => day.today.includes(d))) claim.push({ dim: 'now', key: NOW_KEY });
  if (duration !== undefined) {
    claim.push(at('time', duration));
    observed.push(at('time', duration));
  }
  return { kind: 'date', claim, observed };
}

/** The key the run's day is indexed under (fact-index.ts): `today` is the day the run happened on. */
export const NOW_KEY = 'now:today';

const offset =
  (...days: number[]): Targets =>
  (t) =>
    days.map((n) => shift(t, n));

/**
 * A weekday's dates (`w`: 0 Sunday … 6 Saturday): `next` (the coming one, or the one after), `this`
 * (this week's, either start, or the coming one), `last` (the one before, or the one before that),
 * `coming` (a bare weekday: the coming one, today's or a week on when said on that day).
 */
export function weekdayDates(which: 'next' | 'this' | 'last' | 'coming', w: number): Targets {
  return (t) => {
    const wd = weekdayOf(t);
    const ahead = (w - wd + 7) % 7 || 7;
    const behind = (wd - w + 7) % 7 || 7;
    if (which === 'next') return [shift(t, ahead), shift(t, ahead + 7)];
    if (which === 'last') return [shift(t, -behind), shift(t, -behind - 7)];
    if (which === 'coming') return w === wd ? [t, shift(t, 7)] : [shift(t, ahead)];
    return [shift(t, ((w + 6) % 7) - ((wd + 6) % 7)), shift(t, w - wd), shift(t, (w - wd + 7) % 7)];
  };
}

/** The days of a week: this (0), next (1) or last (−1) — starting Monday or Sunday, either. */
export function week(n: number): Targets {
  return (t) => {
    const wd = weekdayOf(t);
    const out: string[] = [];
    for (const start of [-((wd + 6) % 7), -wd]) for (let i = 0; i < 7; i++) out.push(shift(t, start + 7 * n + i));
    return out;
  };
}

/** Word edges that hold for any script's letters (`\\b` is ASCII only: `amanhã`, `übermorgen`). */
const B0 = '(?<![\\p{L}\\p{N}_])';
const B1 = '(?![\\p{L}\\p{N}_])';

const COUNT = `(\\d{1,4}|an?|${NUMBER_WORD}(?:[\\s-]${NUMBER_WORD})?)`;
/** Days per unit: `day`, `weeks`, `Tagen`, `jours`, `días`, `giorni`, `dias`, `dagen`. */
const SPAN = new Map<string, number>(
  Object.entries({
    1: 'day days tag tage tagen jour jours dia dias giorno giorni dag dagen',
    7: 'week weeks woche wochen semaine semaines semana semanas settimana settimane weken',
  }).flatMap(([n, words]) => words.split(' ').map((w) => [w, Number(n)] as [string, number])),
);

function unitDays(word: string): number | undefined {
  return SPAN.get(word.toLowerCase().normalize('NFKD').replace(/\p{M}/gu, ''));
}

/** A count of days or weeks from today, forward (`in 3 days`) or back (`3 days ago`); also a length of time. */
function counted(
  day: RunDay | undefined,
  written: string,
  count: string,
  unit: string,
  sign: 1 | -1,
): Made | undefined {
  const n = countOf(count);
  const per = unitDays(unit);
  if (n === undefined || per === undefined) return undefined;
  return relative(day, written, offset(sign * n * per), sign === 1 ? n * per * 86_400 : undefined);
}

const UNIT_EN = '(days?|weeks?)';
const UNIT_ABROAD = '(Tagen?|Wochen?|jours?|semaines?|d[ií]as?|semanas?|giorn[oi]|settiman[ae]|dag(?:en)?|weken)';

/** Every word a relative date may start with, for one scan that skips a text with none. */
export const RELATIVE_HINT =
  /tomorrow|yesterday|today|tonight|this\s|next\s|last\s|\bin\s|ago\b|from\s+now|morgen|gestern|heute|demain|hier|aujourd|dans\s|il\s+y\s+a|ma[nñ]ana|ayer|\bhoy\b|hace\s|dentro|domani|ieri|oggi|tra\s|fra\s|\bfa\b|amanh|ontem|hoje|daqui|\bh[aá]\s|\bem\s|gisteren|vandaag|\bover\s|geleden|vorgestern|[明昨今后後前一]\s?[天日]|내일|어제|오늘|모레|anoche|おととい|あした|あさって|きのう|그저께|그제/i;

/** Whole words (or CJK forms, which have no edges) as one pattern; `cased`: lower case only. */
function wordsRe(words: string, cjk = '', cased = false, before = ''): RegExp {
  return new RegExp(`${before}${B0}(?:${words})${B1}${cjk === '' ? '' : `|${cjk}`}`, cased ? 'gu' : 'giu');
}

/** Words of French, and of German and Dutch (where `hier` is "here"), for the text around a `hier`. */
const FRENCH =
  /(?<![\p{L}'’])(?:(?:le|la|les|une?|des|du|est|et|vous|votre|vos|nous|notre|avec|pour|dans|sur|aux?|ce|cette|qui|que|pas|été|était|avait|ai|avons|je|il|elle|soir|matin|depuis|plus)(?![\p{L}])|(?:d|j|l|qu|jusqu)['’])/giu;
const GERMAN_DUTCH =
  /(?<![\p{L}'’])(?:der|die|das|und|ist|ich|wir|sie|nicht|mit|für|ein|eine|war|habe|hat|den|dem|zu|auf|bin|sind|het|een|en|is|ik|niet|met|voor|van|op|zijn|heb|heeft|klicken|klik)(?![\p{L}])/giu;

/** Whether the words within 160 characters of `at` are French, more than German or Dutch (`hier soir`, `depuis hier`). */
function isFrenchAt(text: string, at: number): boolean {
  const near = text.slice(Math.max(0, at - 160), at + 160);
  const count = (re: RegExp) => near.match(re)?.length ?? 0;
  const french = count(FRENCH);
  return french >= 2 && french > count(GERMAN_DUTCH);
}

const day =
  (targets: Targets) =>
  (m: RegExpExecArray, _c: unknown, run: RunDay | undefined): Made =>
    relative(run, m[0], targets);

export const RELATIVE_PASSES: Pass[] = [
  // Two days off first, so `the day after tomorrow` is not `tomorrow`, `一昨日` not `昨日`.
  pass(
    wordsRe(
      '(?:the\\s+)?day\\s+after\\s+tomorrow|übermorgen|après-demain|pasado\\s+mañana|dopodomani|depois\\s+de\\s+amanhã|overmorgen',
      '后天|後天|明後日|あさって|모레',
    ),
    day(offset(2)),
    false,
  ),
  pass(
    wordsRe(
      "(?:the\\s+)?day\\s+before\\s+yesterday|vorgestern|avant-hier|anteayer|antes\\s+de\\s+ayer|antier|l'altro\\s?ieri|altroieri|avantieri|anteontem|eergisteren",
      '前天|一昨日|おととい|그저께|그제(?![서야])',
    ),
    day(offset(-2)),
    false,
  ),
  pass(wordsRe('tomorrow|demain|domani|amanhã', '明天|明日|あした|내일'), day(offset(1)), false),
  // `mañana` is also the morning (`la mañana`, `por la mañana`); `Morgen` also (`heute Morgen`, `guten Morgen`): lower case only.
  pass(wordsRe('mañana', '', false, '(?<!\\b(?:la|esta|cada|una)\\s{1,3})'), day(offset(1)), false),
  pass(
    wordsRe('morgen', '', true, '(?<!\\b(?:heute|gestern|guten|jeden|am|vom|den|goede|deze|elke)\\s{1,3})'),
    day(offset(1)),
    false,
  ),
  // `last night` is yesterday's, or (after midnight) today's.
  pass(wordsRe('last\\s+night|anoche'), day(offset(-1, 0)), false),
  pass(wordsRe('yesterday|gestern|ayer|ieri|ontem|gisteren', '昨天|昨日|きのう|어제'), day(offset(-1)), false),
  // French `hier` is also German and Dutch for "here" (`hier klicken`, `hier is`): read only in French.
  pass(
    wordsRe('hier'),
    (m, _c, run) => (isFrenchAt(m.input, m.index) ? relative(run, m[0], offset(-1)) : undefined),
    false,
  ),
  pass(
    wordsRe(
      "today|tonight|this\\s+(?:morning|afternoon|evening)|heute|aujourd['’]hui|hoy|oggi|hoje|vandaag",
      '今天|今日|오늘',
    ),
    day(offset(0)),
    false,
  ),
  pass(
    new RegExp(`\\b(next|this|last)\\s+${WEEKDAY}\\b`, 'gi'),
    (m, _c, run) =>
      relative(
        run,
        m[0],
        weekdayDates(
          m[1]!.toLowerCase() as 'next' | 'this' | 'last',
          WEEKDAYS.indexOf(m[2]!.slice(0, 3).toLowerCase()),
        ),
      ),
    false,
  ),
  pass(
    /\b(next|this|last)\s+week\b/gi,
    (m, _c, run) => {
      const which = m[1]!.toLowerCase();
      return relative(run, m[0], week(which === 'next' ? 1 : which === 'last' ? -1 : 0));
    },
    false,
  ),
  // in 3 days, in two weeks, in a week, 3 days from now.
  pass(
    new RegExp(
      `\\bin\\s{1,3}${COUNT}\\s{1,3}${UNIT_EN}\\b|\\b${COUNT}\\s{1,3}${UNIT_EN}\\s{1,3}from\\s+(?:now|today)\\b`,
      'gi',
    ),
    (m, _c, run) => counted(run, m[0], m[1] ?? m[3]!, m[2] ?? m[4]!, 1),
    false,
  ),
  pass(
    new RegExp(`\\b${COUNT}\\s{1,3}${UNIT_EN}\\s{1,3}ago\\b`, 'gi'),
    (m, _c, run) => counted(run, m[0], m[1]!, m[2]!, -1),
    false,
  ),
  // in 3 Tagen, dans 3 jours, en 3 días, tra 3 giorni, daqui a 3 dias, over 3 dagen — and back.
  pass(
    new RegExp(
      `${B0}(?:in|dans|dentro\\s+de|en|tra|fra|daqui\\s+a|em|over)\\s{1,3}(\\d{1,4})\\s{1,3}${UNIT_ABROAD}${B1}`,
      'giu',
    ),
    (m, _c, run) => counted(run, m[0], m[1]!, m[2]!, 1),
  ),
  pass(
    new RegExp(
      `${B0}(?:vor|il\\s+y\\s+a|hace|há|ha)\\s{1,3}(\\d{1,4})\\s{1,3}${UNIT_ABROAD}${B1}|${B0}(\\d{1,4})\\s{1,3}${UNIT_ABROAD}\\s{1,3}(?:fa|atrás|geleden)${B1}`,
      'giu',
    ),
    (m, _c, run) => counted(run, m[0], m[1] ?? m[3]!, m[2] ?? m[4]!, -1),
  ),
];
