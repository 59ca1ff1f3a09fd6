// Acceptance on the example world with its contract (examples/contracts/book-flight.yaml): the committed
// baseline recordings (recordings/examples/), and fixed-prompt runs recorded here with the real recorder
// from the current world (the committed fixed recordings predate the answer naming the passenger id).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../../examples/world/index.js';
import { evaluateRecording, loadContract } from '../../src/evaluate/index.js';
import { readRecording } from '../../src/recording/index.js';
import type { Recording } from '../../src/recording/types.js';
import { EXAMPLE_RECORDINGS, recordExample } from '../record/make-example-recordings.js';

const contract = loadContract('examples/contracts/book-flight.yaml');

describe.each(['openai-baseline', 'anthropic-baseline-stream'])('committed baseline recording %s', (name) => {
  it('fails the hard gate with WRONG_EXECUTION_TARGET naming the booking step', async () => {
    const recording = await readRecording(`recordings/examples/${name}`);
    const e = evaluateRecording(recording, contract);
    const booking = e.diff.changes.requests.find((r) => r.method === 'POST' && r.target.endsWith('/bookings'))!;
    expect(e.task.hardSuccess).toBe(false);
    expect(e.task.primaryFailureReasonCode).toBe('WRONG_EXECUTION_TARGET');
    expect(e.task.primaryFailureStepId).toBe(booking.stepId);
    const execution = e.validators.find((v) => v.validatorName === 'execution')!;
    expect(execution.failureReasonCodes).toEqual(['WRONG_EXECUTION_TARGET']);
    expect(execution.diagnosticMessage).toContain(`step ${booking.stepId}`);
    expect(e.task.trajectoryFailureClasses).toContain('hallucinated_state');
  });
});

describe('runs recorded now from the example world', () => {
  let world: World;
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-eval-world-'));
  const runs = new Map<string, Recording>();
  beforeAll(async () => {
    world = await startWorld();
    for (const ex of EXAMPLE_RECORDINGS.filter(
      (x) => x.name === 'openai-fixed-stream' || x.name === 'openai-baseline',
    )) {
      const run = await recordExample(world, ex, join(dir, ex.name));
      runs.set(ex.name, await readRecording(run.dir));
    }
  }, 120_000);
  afterAll(async () => {
    await world?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes the fixed run with no side effects', () => {
    const e = evaluateRecording(runs.get('openai-fixed-stream')!, contract);
    expect(e.findings.filter((f) => f.hard).map((f) => f.message)).toEqual([]);
    expect(e.task.hardSuccess).toBe(true);
    expect(e.diff.sideEffects).toEqual([]);
    expect(e.task.trajectoryFailureClasses).toEqual([]);
  });

  it('fails the baseline run at the booking step', () => {
    const e = evaluateRecording(runs.get('openai-baseline')!, contract);
    expect(e.task.hardSuccess).toBe(false);
    expect(e.task.primaryFailureReasonCode).toBe('WRONG_EXECUTION_TARGET');
    expect(e.task.failureReasonCodes).toEqual(
      expect.arrayContaining(['WRONG_EXECUTION_TARGET', 'STATE_MISMATCH', 'WRONG_FACT']),
    );
  });

  it('flags an unrequested change planted in the fixed run, at the step that made it', () => {
    const recording = runs.get('openai-fixed-stream')!;
    const step = recording.events.find((e) => e.type === 'tool.called')!.stepId;
    const entry = Object.values(recording.post.fs?.files ?? {})[0]!;
    const planted: Recording = {
      ...recording,
      post: { ...recording.post, fs: { files: { ...recording.post.fs!.files, 'debug/dump.txt': entry } } },
      events: [
        ...recording.events,
        {
          seq: recording.events.length,
          traceId: recording.events[0]!.traceId,
          stepId: step,
          type: 'fs.changed',
          time: recording.events.at(-1)!.time,
          payload: { path: 'debug/dump.txt', op: 'create', after: entry },
        },
      ],
    };
    const e = evaluateRecording(planted, contract);
    expect(e.diff.sideEffects.map((c) => (c.kind === 'file' ? [c.path, c.stepId] : [c.kind]))).toEqual([
      ['debug/dump.txt', step],
    ]);
    expect(e.task.hardSuccess).toBe(false);
    expect(e.task.primaryFailureReasonCode).toBe('UNAUTHORIZED_ACTION');
    expect(e.task.primaryFailureStepId).toBe(step);
  });
});
