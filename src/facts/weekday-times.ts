// A weekday with a clock time (`Tuesday at 3 pm`, `Tue 15:00`, `Friday, 9:30 AM CET`, `Tuesday at 3 pm
// ET`) is one fact: that time on that day — read, for each day the weekday may be, as the same
// weekday, date and time written out in full would be, so that zones (ET on its date, CET, UTC) are
// read as dates.ts reads them. Apart, `Wednesday at 3 pm` was grounded by a Tuesday 3 pm (-05:00),
// the weekday by the UTC date and the time by the local one, and `3 pm ET` was refused as ambiguous.
import type { Mention, Reading } from './readings.js';
import { type RunDay, weekdayDates } from './relative-dates.js';
import { foldText, WEEKDAY_NAMES } from './written.js';

const DAY_OF = new Map(WEEKDAY_NAMES.flatMap((names, w) => names.split(' ').map((n) => [foldText(n), w] as const)));
/** English short names, read only right before a time (`Sat` alone is a verb, `Sun` a star). */
const SHORT = new Map(
  ['sun', 'mon', 'tue|tues', 'wed', 'thu|thur|thurs', 'fri', 'sat'].flatMap((n, w) =>
    n.split('|').map((s) => [s, w] as const),
  ),
);
const ENGLISH = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = 'January February March April May June July August September October November December'.split(' ');
/** A weekday's name, then what may stand between it and the time (`at`, `,`, `@`, `um`, `à`). */
const BEFORE_TIME = /(?<![\p{L}\p{N}])(\p{L}+)\.?(?:\s{0,3},?\s{0,3}(?:(?:at|@|um|à|a\s+las?|alle|às|om)\s{1,3})?)$/iu;

/** The readings of weekday `w` on any of `days` (a short name, `Tue`, read by nothing else). */
function dayClaims(days: readonly string[], w: number, read: (text: string) => Mention[]): Reading[] {
  return days.flatMap((d) => read(written(d, w)).flatMap((one) => (one.kind === 'date' ? one.claim : [])));
}

/** A day written out in full: `Tuesday, December 1, 2026`. */
function written(day: string, w: number): string {
  const [y, mo, dd] = day.split('-').map(Number) as [number, number, number];
  return `${ENGLISH[w]}, ${MONTHS[mo - 1]} ${dd}, ${y}`;
}

/** A time's key as observed on its own, with no date (`depart_time: "13:05"`), not inside a timestamp. */
function lone(r: Reading): Reading[] {
  return r.key === undefined ? [] : [{ ...r, key: `lone:${r.key}` }];
}

/** Each time read on its own (no date with it) is also observed under its `lone` keys. */
export function withLoneTimes(mentions: Mention[]): Mention[] {
  return mentions.map((m) =>
    m.kind === 'time' ? { ...m, observed: [...m.observed, ...m.observed.flatMap(lone)] } : m,
  );
}

/**
 * The mentions of `text` with each weekday followed by a time merged into one date-and-time mention.
 * `read` reads a text's mentions (mentionsIn); `day` is the run's day, without which a weekday is unread.
 */
export function withWeekdayTimes(
  text: string,
  mentions: Mention[],
  day: RunDay | undefined,
  read: (text: string) => Mention[],
): Mention[] {
  if (day === undefined || !mentions.some((m) => m.kind === 'time')) return mentions;
  const out: Mention[] = [];
  for (const m of mentions) {
    const from = Math.max(0, m.start - 24);
    const lead = m.kind === 'time' ? BEFORE_TIME.exec(text.slice(from, m.start)) : null;
    const name = lead?.[1] === undefined ? undefined : foldText(lead[1]);
    const w = name === undefined ? undefined : (DAY_OF.get(name) ?? SHORT.get(name));
    if (lead === null || w === undefined) {
      out.push(m);
      continue;
    }
    const start = from + lead.index;
    const prev = out.at(-1);
    // The weekday read on its own (`Tuesday`) is this one; any other mention over it (a date) is left as read.
    const weekday = prev !== undefined && prev.start === start && prev.kind === 'date' ? prev : undefined;
    if (prev !== undefined && prev.end > start && weekday === undefined) {
      out.push(m);
      continue;
    }
    const dates = weekday?.claim.flatMap((r) => (r.key?.startsWith('d:') ? [r.key.slice(2)] : [])) ?? [];
    const days = dates.length > 0 ? dates : [...new Set(day.today.flatMap(weekdayDates('coming', w)))];
    const read1 = days.flatMap((d) => {
      const full = `${written(d, w)} at ${m.text}`;
      const [one, ...more] = read(full);
      return one !== undefined && more.length === 0 && one.kind === 'date' && one.text === full ? [one] : [];
    });
    const claim = read1.flatMap((one) => one.claim);
    // Which of the days it is, observed, only a maybe when the weekday may be more than one.
    const unsure = days.length > 1 ? `${text.slice(start, m.end)} is on ${days.join(' or ')}` : undefined;
    const observed = read1.flatMap((one) =>
      unsure === undefined ? one.observed : one.observed.map((r) => ({ ...r, unsure })),
    );
    if (claim.length === 0) {
      out.push(m);
      continue;
    }
    if (weekday !== undefined) out.pop();
    out.push({
      kind: 'date',
      text: text.slice(start, m.end),
      start,
      end: m.end,
      claim,
      observed: [...(weekday?.observed ?? []), ...m.observed, ...observed],
      // The world may hold the day and the time apart (`depart_date`, `depart_time`): each grounded grounds it.
      // Only a time observed on its own: one a timestamp holds is that timestamp's, on its day.
      ...(m.claim.length > 0 && { parts: [weekday?.claim ?? dayClaims(days, w, read), m.claim.flatMap(lone)] }),
    });
  }
  return out;
}
