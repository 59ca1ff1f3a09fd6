// Scoring a counterfactual replay: a booking the replay held back counts as the execution (target and
// parameters checked on it), while the sandbox world shows it never landed.
import { describe, expect, it } from 'vitest';
import { evaluateRecording, loadContract } from '../../src/evaluate/index.js';
import { RecordingBuilder } from './recording-builder.js';

const contract = loadContract('examples/contracts/book-flight.yaml');

function replayWithHeldBackBooking(passengerId: string) {
  const b = new RecordingBuilder('replay-fixed', 'trace-replay');
  b.manifestPatch = { replayOf: 'openai-baseline', replay: { mode: 'counterfactual', overrides: {} } };
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
});
