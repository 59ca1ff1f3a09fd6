// A weekday with a clock time (`Tuesday at 3 pm`, `Tue 15:00`, `Tuesday at 3 pm ET`) against an ISO
// timestamp with its offset, generated over run days, days ahead, hours and offsets: that time on that
// day (in the timestamp's zone, or the zone written) is grounded; another weekday, another hour or the
// same wall clock in another zone never is. Before, the weekday and the time were checked apart
// (`Wednesday at 3 pm` was grounded by Tuesday 3 pm -05:00: the weekday by the UTC date), a short name
// (`Tue`) was not read, and `3 pm ET` was refused as ambiguous with its day known.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FactIndex, mentionsIn } from './index.js';

const RUNS = { seed: 20261201, numRuns: 120 };
const AT = { pos: 1, stepId: 1, label: 'step 1' };
const DAY = 86_400_000;
const NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const SHORT = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const pad = (n: number) => String(n).padStart(2, '0');
const ymd = (t: number) => new Date(t).toISOString().slice(0, 10);

/** Every verdict on what `claim` mentions, against `starts_at` observed, on run day `today`. */
function verdicts(today: string, startsAt: string, claim: string): string[] {
  const day = { today: [today], source: 'the run' };
  const index = new FactIndex({ day });
  index.addValue({ starts_at: startsAt }, AT);
  return mentionsIn(claim, { day }).map((m) => index.verdict(m).verdict);
}

const h12 = (h: number) => `${h % 12 === 0 ? 12 : h % 12} ${h < 12 ? 'am' : 'pm'}`;

describe('a weekday and a time are one fact', () => {
  it('that time on that day in the timestamp zone is grounded; another day, hour or zone is not', () => {
    const start = Date.parse('2026-01-05T00:00:00Z');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 360 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 22 }),
        fc.constantFrom(-8, -5, 0, 1, 9),
        (dayNo, ahead, hour, offset) => {
          const today = ymd(start + dayNo * DAY);
          const local = start + (dayNo + ahead) * DAY;
          const date = ymd(local);
          const w = new Date(local).getUTCDay();
          const zone = offset === 0 ? 'Z' : `${offset < 0 ? '-' : '+'}${pad(Math.abs(offset))}:00`;
          const at = `${date}T${pad(hour)}:00:00${zone}`;
          const right = [
            `on ${NAMES[w]} at ${h12(hour)}`,
            `on ${SHORT[w]} ${pad(hour)}:00`,
            `${NAMES[w]}, ${h12(hour)}`,
          ];
          for (const said of right)
            expect(verdicts(today, at, `The call is ${said}.`), `${at} ${said}`).toEqual(['same']);
          const wrong = [
            `on ${NAMES[(w + 1) % 7]} at ${h12(hour)}`,
            `on ${SHORT[(w + 6) % 7]} ${pad(hour)}:00`,
            `on ${NAMES[w]} at ${h12(hour + 1)}`,
            `on ${NAMES[w]} at ${h12((hour + 12) % 24)}`,
          ];
          for (const said of wrong)
            expect(verdicts(today, at, `The call is ${said}.`), `${at} ${said}`).toEqual(['different']);
          // The same instant in UTC on its UTC day is grounded; the local wall clock called UTC is not.
          const utc = new Date(Date.parse(at));
          const utcSaid = `on ${NAMES[utc.getUTCDay()]} at ${pad(utc.getUTCHours())}:00 UTC`;
          expect(verdicts(today, at, `The call is ${utcSaid}.`), `${at} ${utcSaid}`).toEqual(['same']);
          if (offset !== 0)
            expect(verdicts(today, at, `The call is on ${NAMES[w]} at ${pad(hour)}:00 UTC.`), at).toEqual([
              'different',
            ]);
        },
      ),
      RUNS,
    );
  });

  it('US zone names are read on the weekday’s date, standard or daylight', () => {
    // Tuesday 2026-12-01 is in standard time, Tuesday 2026-07-07 in daylight time.
    expect(verdicts('2026-11-24', '2026-12-01T15:00:00-05:00', 'The call is Tuesday at 3 pm ET.')).toEqual(['same']);
    expect(verdicts('2026-11-24', '2026-12-01T15:00:00-05:00', 'The call is Tuesday at 3 pm PT.')).toEqual([
      'different',
    ]);
    expect(verdicts('2026-06-30', '2026-07-07T15:00:00-04:00', 'The call is Tuesday at 3 pm ET.')).toEqual(['same']);
    expect(verdicts('2026-06-30', '2026-07-07T15:00:00-05:00', 'The call is Tuesday at 3 pm ET.')).toEqual([
      'different',
    ]);
  });

  it('the day and the time held apart (`depart_date`, `depart_time`) ground it; a timestamp does not lend its time', () => {
    const day = { today: ['2026-11-24'], source: 'the run' };
    const read = (obs: unknown, claim: string) => {
      const index = new FactIndex({ day });
      index.addValue(obs, AT);
      return mentionsIn(claim, { day }).map((m) => index.verdict(m).verdict);
    };
    const apart = { depart_date: '2026-11-25', depart_time: '13:05' };
    expect(read(apart, 'Departs Wednesday at 13:05.')).toEqual(['same']);
    expect(read(apart, 'Departs Wed 1:05 PM.')).toEqual(['same']);
    expect(read(apart, 'Departs Wednesday at 14:05.')).toEqual(['different']);
    expect(read(apart, 'Departs Thursday at 13:05.')).toEqual(['different']);
    // A Tuesday 4 pm in -08:00 is Wednesday in UTC: its UTC day and local time are not one fact.
    expect(read({ starts_at: '2026-12-01T16:00:00-08:00' }, 'Starts Wednesday at 4 pm.')).toEqual(['different']);
  });

  it('a short name is read only before a time; a weekday with no run day stays unread', () => {
    expect(verdicts('2026-11-24', '2026-12-01T15:00:00-05:00', 'Bring the Sat phone.')).toEqual([]);
    const index = new FactIndex();
    index.addValue({ starts_at: '2026-12-01T15:00:00-05:00' }, AT);
    expect(mentionsIn('The call is Wednesday at 3 pm.').map((m) => m.unread === undefined)).toEqual([false, true]);
  });
});
