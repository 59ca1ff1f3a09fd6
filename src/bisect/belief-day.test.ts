// A belief reads its relative dates against the run's day (evaluate's recordingDay), as eval does:
// "tomorrow" in a claim is grounded by the date a tool showed when that is the day after the run's.
import { describe, expect, it } from 'vitest';
import { RecordingBuilder } from '../../test/evaluate/recording-builder.js';
import { beliefAt, factsOfBelief } from './belief.js';

/** A run on 2026-11-24 (the builder's clock) whose tool showed a booking's check-in date. */
function run(checkIn: string) {
  const b = new RecordingBuilder();
  const think = b.model({
    messages: [{ role: 'user', content: 'When do I check in at the Lumen?' }],
    toolCalls: [{ name: 'get_booking', arguments: { booking_id: 'BK-9' } }],
  });
  b.tool(think, {
    name: 'get_booking',
    args: { booking_id: 'BK-9' },
    result: { booking_id: 'BK-9', check_in: checkIn },
  });
  b.model({ messages: [], text: 'You check in tomorrow.' });
  return b.complete('You check in tomorrow.').build();
}

describe("a belief's relative dates", () => {
  it('grounds "tomorrow" by the day after the run, and not by another day', () => {
    const good = run('2026-11-25');
    const belief = beliefAt(good, 3);
    expect(belief.day?.today).toContain('2026-11-24');
    expect(factsOfBelief(belief).groundText('You check in tomorrow.')).toBeDefined();
    const bad = run('2026-11-29');
    expect(factsOfBelief(beliefAt(bad, 3)).groundText('You check in tomorrow.')).toBeUndefined();
  });
});
