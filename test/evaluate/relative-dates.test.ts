// End to end: a real recorded booking run (recordings/examples/openai-baseline: the agent's clock
// read 2026-11-24T13:00Z, the user wrote "Today is 2026-11-24", the flight departs 2026-11-25) with
// its answer rewritten — relative dates are read against the run's own day (what it stated, else
// the clock it saw, in its zone or every zone), and slash dates as dates, never as pieces.
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import { type Recording, readRecording } from '../../src/recording/index.js';

const contract = parseContract(`
task_id: relative_dates
success_criteria:
  required_outputs: [final_answer]
  must_not_include: [unsupported_claim]
`);

let real: Recording;
beforeAll(async () => {
  real = await readRecording('recordings/examples/openai-baseline');
});

/**
 * The run with its final answer replaced; `unstated`: the user's "Today is …" taken out and their
 * "tomorrow" written as the date (else it grounds the answer's "tomorrow" whatever day that is); `timeZone`: the manifest's.
 */
function run(answer: string, options: { unstated?: boolean; timeZone?: string } = {}): Recording {
  const events = real.events.map((e) => {
    let out = e;
    if (options.unstated && e.type === 'model.called')
      out = JSON.parse(
        JSON.stringify(e).replaceAll('Today is 2026-11-24. ', '').replaceAll('Denver tomorrow', 'Denver on 2026-11-25'),
      ) as typeof e;
    if (out.type === 'run.completed') return { ...out, payload: { ...out.payload, finalOutput: answer } };
    return out;
  });
  const runtime = { ...real.manifest.runtime, ...(options.timeZone !== undefined && { timeZone: options.timeZone }) };
  return { ...real, events, manifest: { ...real.manifest, runtime } } as Recording;
}

function unsupported(answer: string, options?: { unstated?: boolean; timeZone?: string }): string[] {
  const e = evaluateRecording(run(answer, options), contract);
  return e.findings.filter((f) => f.code === 'UNSUPPORTED_CLAIM').map((f) => f.message);
}

const booked = (when: string) =>
  `Booked Frontier F9 1021 from SFO to DEN ${when} at 13:05 for Dana Reyes — $189. Confirmation: BK-0001.`;

describe('relative dates against the run', () => {
  it('"tomorrow" is the departure the run observed; a day that is not fails the gate', () => {
    for (const when of [
      'tomorrow',
      'in 1 day',
      'this Wednesday',
      'next Wednesday',
      'mañana',
      'on Wednesday',
      'Wednesday',
    ])
      expect(unsupported(booked(when)), when).toEqual([]);
    for (const when of [
      'the day after tomorrow',
      'next Friday',
      'in 3 days',
      'in two weeks',
      'yesterday',
      'Friday',
      'Thursday',
    ]) {
      const found = unsupported(booked(when));
      expect(found, when).toHaveLength(1);
      expect(found[0], when).toContain(`date ${when}`);
    }
  });

  it('"today" is the run\'s own day, never a claim against the data', () => {
    expect(unsupported(`${booked('tomorrow')} Anything else I can do for you today?`)).toEqual([]);
  });

  it("with nothing stated, the agent's clock in the run's zone decides; in no zone, every zone's date grounds it", () => {
    // 13:00Z is November 24 from UTC−12 to UTC+10 and November 25 from UTC+11: tomorrow is the 25th or the 26th.
    expect(unsupported(booked('tomorrow'), { unstated: true })).toEqual([]);
    expect(unsupported(booked('tomorrow'), { unstated: true, timeZone: 'America/Denver' })).toEqual([]);
    // At UTC+14 the clock read November 25: "tomorrow" is the 26th, which no flight departs on.
    expect(unsupported(booked('tomorrow'), { unstated: true, timeZone: 'Pacific/Kiritimati' })).toHaveLength(1);
    // The user's "Today is 2026-11-24" wins over the clock.
    expect(unsupported(booked('tomorrow'), { timeZone: 'Pacific/Kiritimati' })).toEqual([]);
  });
});

describe('slash dates as dates', () => {
  it('a two-digit year, no year, dashes, year first: the departure, never its pieces', () => {
    for (const when of ['on 11/25/26', 'on 11/25', 'on 11-25-2026', 'on 2026/11/25', 'on 25/11/26', 'on 25.11.2026'])
      expect(unsupported(booked(when)), when).toEqual([]);
    for (const when of ['on 11/26/26', 'on 11/26', 'on 11-26-2026', 'on 26.11.2026'])
      expect(unsupported(booked(when)), when).toHaveLength(1);
  });
});
