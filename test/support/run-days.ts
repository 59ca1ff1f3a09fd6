// Days a run may be on, for the tests of the readers that read dates against the run's day (relative
// dates, weekdays): generated days, and the verdict on each fact an answer mentions against a flight
// observed departing on a date.
import fc from 'fast-check';
import { FactIndex, mentionsIn } from '../../src/facts/index.js';
import type { RunDay } from '../../src/facts/relative-dates.js';

export const DAY = 86_400_000;
export const ymd = (t: number): string => new Date(t).toISOString().slice(0, 10);
/** A day from 2001 to 2098, as ms at UTC midnight. */
export const days = fc.integer({ min: 11_323, max: 47_000 }).map((d) => d * DAY);

/** Each fact `answer` mentions, read against `day`: `same`, `different`, `cant-tell`, or `unread`. */
export function dateVerdicts(observed: string, answer: string, day: RunDay | undefined): string[] {
  const index = new FactIndex(day === undefined ? {} : { day });
  index.addValue({ flight: 'F9 1021', depart_date: observed }, { pos: 1, stepId: 1, label: 'step 1' });
  return mentionsIn(answer, day === undefined ? {} : { day }).map((m) =>
    m.unread !== undefined ? 'unread' : index.verdict(m).verdict,
  );
}
