// Acceptance on the example world's task with its real contract (examples/contracts/book-flight.yaml).
import { describe, expect, it } from 'vitest';
import { evaluateRecording, loadContract } from '../../src/evaluate/index.js';
import { travelRun } from './travel-runs.js';

const contract = loadContract('examples/contracts/book-flight.yaml');

describe('book-flight contract on runs shaped like the recorder writes them', () => {
  it('fails the baseline on the hard gate with WRONG_EXECUTION_TARGET naming the booking step', () => {
    const e = evaluateRecording(travelRun({ fixed: false }), contract);
    expect(e.task.hardSuccess).toBe(false);
    expect(e.task.primaryFailureReasonCode).toBe('WRONG_EXECUTION_TARGET');
    const bookingStep = e.diff.changes.requests.find((r) => r.method === 'POST')!.stepId;
    expect(e.task.primaryFailureStepId).toBe(bookingStep);
    expect(e.task.primaryFailureMessage).toContain(`step ${bookingStep}`);
    expect(e.task.primaryFailureMessage).toContain('P-100');
    expect(e.task.failureReasonCodes).toEqual(expect.arrayContaining(['WRONG_EXECUTION_TARGET', 'STATE_MISMATCH']));
    expect(e.task.trajectoryFailureClasses).toContain('hallucinated_state');
    const execution = e.validators.find((v) => v.validatorName === 'execution')!;
    expect(execution.passed).toBe(false);
    expect(execution.diagnosticMessage).toMatch(/passenger_id="P-100" \(expected "P-102"\)/);
  });

  it('passes the fixed run', () => {
    const e = evaluateRecording(travelRun({ fixed: true }), contract);
    expect(e.findings.filter((f) => f.hard)).toEqual([]);
    expect(e.task.hardSuccess).toBe(true);
    expect(e.task.primaryFailureReasonCode).toBeNull();
    expect(e.task.outcomeScore).toBeGreaterThanOrEqual(8);
    expect(e.diff.sideEffects).toEqual([]);
    expect(e.validators.every((v) => v.passed)).toBe(true);
  });

  it('names a duplicate booking as DUPLICATE_EXECUTION at the second booking step', () => {
    const e = evaluateRecording(travelRun({ fixed: true, bookTwice: true }), contract);
    expect(e.task.hardSuccess).toBe(false);
    expect(e.task.failureReasonCodes).toContain('DUPLICATE_EXECUTION');
    const posts = e.diff.changes.requests.filter((r) => r.method === 'POST');
    const dup = e.findings.find((f) => f.code === 'DUPLICATE_EXECUTION' && f.stepId === posts[1]!.stepId);
    expect(dup?.message).toContain(`step ${posts[1]!.stepId}`);
  });

  it('flags an unrequested change planted in an otherwise good run as a side effect at its step', () => {
    const e = evaluateRecording(travelRun({ fixed: true, plantSideEffect: true }), contract);
    expect(e.task.hardSuccess).toBe(false);
    expect(e.diff.sideEffects).toHaveLength(1);
    const planted = e.diff.sideEffects[0]!;
    expect(planted).toMatchObject({ kind: 'file', path: 'traveler.json', op: 'delete' });
    expect(e.task.primaryFailureReasonCode).toBe('UNAUTHORIZED_ACTION');
    expect(e.task.primaryFailureStepId).toBe(planted.stepId);
    const row = e.state.find((r) => r.stateObjectId === 'file:traveler.json')!;
    expect(row).toMatchObject({ sideEffectDetected: true, stateAction: 'delete', existsAfterRun: false });
  });
});
