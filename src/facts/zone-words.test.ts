// US zones written in words (`3 pm Eastern`, `9:00 Pacific Time`, `Central Standard Time`) are read as
// ET/PT/CT/MT, EST/PST… are, generated over winter and summer days: the instant's wall clock in that
// zone is grounded, an hour off or the other season's offset is not. Before, the word was not read:
// the time was a zoneless wall clock, and a right ETA in Eastern time was UNSUPPORTED_CLAIM.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FactIndex, mentionsIn } from './index.js';

const RUNS = { seed: 20261201, numRuns: 80 };
const AT = { pos: 1, stepId: 1, label: 'step 1' };
const ZONES: Array<[string, number]> = [
  ['Eastern', -5],
  ['Central', -6],
  ['Mountain', -7],
  ['Pacific', -8],
];
const MONTHS = 'January February March April May June July August September October November December'.split(' ');

function verdicts(instant: string, claim: string): string[] {
  const index = new FactIndex();
  index.addValue({ eta: instant }, AT);
  return mentionsIn(claim).map((m) => index.verdict(m).verdict);
}

/** `December 3, 2026 at 3:00 AM` for the wall clock `hoursEast` from UTC of `t`. */
function wall(t: number, hoursEast: number): string {
  const d = new Date(t + hoursEast * 3_600_000);
  const h = d.getUTCHours();
  const clock = `${h % 12 === 0 ? 12 : h % 12}:${String(d.getUTCMinutes()).padStart(2, '0')} ${h < 12 ? 'AM' : 'PM'}`;
  return `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}, ${d.getUTCFullYear()} at ${clock}`;
}

describe('US zones written in words', () => {
  it('Eastern, Eastern Time, Eastern Standard/Daylight Time: the wall clock there, on its date', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(Date.parse('2026-01-14T00:00:00Z'), Date.parse('2026-07-14T00:00:00Z')),
        fc.integer({ min: 0, max: 23 * 4 }),
        fc.constantFrom(...ZONES),
        (day, quarter, [word, standard]) => {
          const t = day + quarter * 15 * 60_000;
          const summer = new Date(day).getUTCMonth() === 6;
          const offset = standard + (summer ? 1 : 0);
          const instant = new Date(t).toISOString();
          const season = summer ? 'Daylight' : 'Standard';
          const other = summer ? 'Standard' : 'Daylight';
          for (const name of [word, `${word} Time`, `${word} ${season} Time`])
            expect(verdicts(instant, `ETA ${wall(t, offset)} ${name}.`), `${instant} ${name}`).toEqual(['same']);
          expect(verdicts(instant, `ETA ${wall(t, offset + 1)} ${word}.`), instant).toEqual(['different']);
          expect(verdicts(instant, `ETA ${wall(t, offset)} ${word} ${other} Time.`), instant).toEqual(['different']);
        },
      ),
      RUNS,
    );
  });

  it('a word with no date to read its season by is refused, never read as a wall clock', () => {
    expect(mentionsIn('at 3:00 AM Eastern').map((m) => m.ambiguous)).toEqual([
      'Eastern without a date: standard or daylight time?',
    ]);
  });
});
