// Acceptance of #19 on the second example world, the support desk (examples/support/): the committed
// recordings (recordings/support/, made by test/record/make-example-recordings.ts) judged with the
// desk's own contract by `eval` and by the default `bisect`, as a user would run them. The careful
// run refunds the customer's own order O-7731; the careless one refunds O-7713, which the step
// before observed to belong to another customer.
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SUPPORT_CONTRACT } from '../../examples/support/index.js';
import { listSteps } from '../../src/bisect/index.js';
import { evaluateRecording, loadContract } from '../../src/evaluate/index.js';
import { readRecording } from '../../src/recording/index.js';
import { runCli } from '../bisect/cli-harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CAREFUL = resolve(ROOT, 'recordings/support/careful');
const CARELESS = resolve(ROOT, 'recordings/support/careless');
const contract = loadContract(SUPPORT_CONTRACT);

describe('eval with the refund contract', () => {
  it('passes the careful run: $129.99 restated from 12999 cents and "Nov 20" from an ISO time are grounded', async () => {
    const e = evaluateRecording(await readRecording(CAREFUL), contract);
    expect(e.findings.filter((f) => f.hard).map((f) => f.message)).toEqual([]);
    expect(e.task.hardSuccess).toBe(true);
    expect(e.task.failureReasonCodes).toEqual([]);
    expect(e.task.trajectoryFailureClasses).toEqual([]);
    // Reads (GET) are never side effects; the one request effect is the refund.
    expect(e.diff.sideEffects).toEqual([]);
    expect(e.diff.changes.requests.map((r) => r.method)).toEqual(['POST']);
  });

  it('fails the careless run with WRONG_EXECUTION_TARGET at the step that issued the refund', async () => {
    const recording = await readRecording(CARELESS);
    const e = evaluateRecording(recording, contract);
    const refund = e.diff.changes.requests.find((r) => r.method === 'POST' && r.target.endsWith('/refunds'));
    expect(refund).toBeDefined();
    expect(e.task.hardSuccess).toBe(false);
    expect(e.task.primaryFailureReasonCode).toBe('WRONG_EXECUTION_TARGET');
    expect(e.task.primaryFailureStepId).toBe(refund?.stepId);
    const execution = e.validators.find((v) => v.validatorName === 'execution');
    expect(execution?.diagnosticMessage).toContain(`step ${refund?.stepId} issue_refund`);
    // Its claims ($89.50 from 8950 cents, the #7713 the customer typed) are grounded: no false UNSUPPORTED_CLAIM.
    expect(e.task.failureReasonCodes).not.toContain('UNSUPPORTED_CLAIM');
    // The trajectory class of acting on another customer's order.
    expect(e.task.trajectoryFailureClasses).toContain('hallucinated_state');
  });
});

describe('the default bisect (predicate all)', () => {
  it('finds no bad step in the careful run', async () => {
    const { code, stdout } = await runCli('bisect', CAREFUL);
    expect(code).toBe(0);
    expect(stdout).toMatch(/no bad step: the predicate holds through step 8/);
  });

  it('finds the decision to refund another customer’s order in the careless run, naming entity, attribute and fact', async () => {
    const { code, stdout } = await runCli('bisect', CARELESS);
    expect(code).toBe(1);
    expect(stdout).toMatch(/first bad step: 4 \(THINK /);
    expect(stdout).toMatch(/action: .*issue_refund\(\{"order_id":"O-7713"/);
    expect(stdout).toContain(
      '[contradiction] step 4 (THINK decided issue_refund) acts on order O-7713, whose customer_id is "C-2001" (observed at step 3), but the customer is "C-1042" (step 2',
    );
    expect(stdout).toMatch(/last good step: 3/);
  });

  it('names the tool steps after the agent’s tools, the route kept as detail', async () => {
    const steps = listSteps(await readRecording(CARELESS));
    expect(steps.map((s) => `${s.stateType} ${s.name}`)).toEqual([
      'THINK gpt-4.1-mini',
      'API_CALL find_customer',
      'API_CALL get_order',
      'THINK gpt-4.1-mini',
      'API_CALL issue_refund',
      'FINALIZE gpt-4.1-mini',
    ]);
    expect(steps[4]?.tool?.name).toMatch(/^POST .*\/refunds$/);
  });
});
