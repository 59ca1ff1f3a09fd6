// Scoring a counterfactual replay: a booking the replay held back counts as the execution (target and
// parameters checked on it), while the sandbox world shows it never landed.
import { describe, expect, it } from 'vitest';
import { evaluateRecording, loadContract } from '../../src/evaluate/index.js';
import { RecordingBuilder } from './recording-builder.js';
import { travelDb } from './travel-runs.js';

const contract = loadContract('examples/contracts/book-flight.yaml');

function replayWithHeldBackBooking(passengerId: string) {
  const b = new RecordingBuilder('replay-fixed', 'trace-replay');
  b.manifestPatch = { replayOf: 'openai-baseline', replay: { mode: 'counterfactual', overrides: {} } };
  // The sandbox database the replay ran on: nothing was booked.
  b.pre = { db: travelDb([], []) };
  b.post = { db: travelDb([], []) };
  const user = "Today is 2026-11-24. Hi, it's Dana Reyes. Book me a flight to Denver tomorrow under $300.";
  const think = b.model({
    messages: [
      { role: 'user', content: user },
      { role: 'tool', tool_call_id: 'c0', content: '{"passenger":{"id":"P-102","name":"Dana Reyes"}}' },
    ],
    toolCalls: [{ id: 'c1', name: 'book_flight', arguments: { flight_id: 'FL-102', passenger_id: passengerId } }],
  });
  b.heldBack(think, 'POST', 'http://127.0.0.1:8787/bookings', { flight_id: 'FL-102', passenger_id: passengerId });
  b.model({ messages: [], text: 'I could not book the flight: the booking service is unavailable.' });
  return b.complete('I could not book the flight: the booking service is unavailable.').build();
}

describe('evaluating a replay', () => {
  it('checks the held-back booking as the execution and reports that nothing landed', () => {
    const e = evaluateRecording(replayWithHeldBackBooking('P-102'), contract);
    const execution = e.validators.find((v) => v.validatorName === 'execution')!;
    expect(execution.failureReasonCodes).not.toContain('ACTION_NOT_EXECUTED');
    expect(execution.failureReasonCodes).not.toContain('WRONG_EXECUTION_TARGET');
    expect(execution.evidenceRefs.map((r) => r.ref)).toContain('POST http://127.0.0.1:8787/bookings (held back)');
    expect(e.diff.changes.requests).toMatchObject([{ heldBack: true, executed: false, stepId: 1 }]);
    expect(e.task.hardSuccess).toBe(false);
    expect(e.task.failureReasonCodes).toContain('STATE_CHANGE_FAILED');
    expect(e.task.trajectoryFailureClasses).toContain('gave_up');
  });

  it('still names a wrong target on a held-back effect', () => {
    const e = evaluateRecording(replayWithHeldBackBooking('P-100'), contract);
    expect(e.validators.find((v) => v.validatorName === 'execution')!.failureReasonCodes).toContain(
      'WRONG_EXECUTION_TARGET',
    );
    expect(e.task.primaryFailureReasonCode).toBe('WRONG_EXECUTION_TARGET');
    expect(e.task.primaryFailureStepId).toBe(1);
  });

  it('a recording without a world cannot show a file or row either way: inaccessible, not failed to change', () => {
    const b = new RecordingBuilder('no-world', 'trace-no-world');
    b.model({ messages: [{ role: 'user', content: 'note it' }], text: 'Noted.' });
    const e = evaluateRecording(b.complete('Noted.').build(), {
      ...contract,
      expected_state: {
        files: [{ path: 'notes.txt', exists: true }],
        rows: [{ table: 'travel.bookings', count: 1 }],
      },
    });
    const results = e.diff.expectations.map((x) => [x.id, x.codes, x.message]);
    expect(results).toEqual([
      [
        'expected_state.files[0]',
        ['EVIDENCE_SOURCE_INACCESSIBLE'],
        'the recording holds no files (recorded without --fs): whether notes.txt exists cannot be checked',
      ],
      [
        'expected_state.rows[0]',
        ['EVIDENCE_SOURCE_INACCESSIBLE'],
        'the recording holds no database (recorded without --db): rows of travel.bookings cannot be checked',
      ],
    ]);
    expect(e.task.failureReasonCodes).not.toContain('STATE_CHANGE_FAILED');
  });
});
