// `tapedeck eval` end to end: a real child process on the committed example recordings and a bad contract.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadScores } from '../../src/store/index.js';

const run = promisify(execFile);
const CLI = ['--import', 'tsx', 'src/cli/main.ts', 'eval'];
const CONTRACT = 'examples/contracts/book-flight.yaml';

async function tapedeck(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [...CLI, ...args], {
      cwd: process.cwd(),
      maxBuffer: 32 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const made: string[] = [];
/** A temp folder, removed after the file's tests. */
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-eval-'));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe('tapedeck eval', () => {
  it('prints the hard-gate verdict, the primary failure with its step, and JSON rows named as the seed', async () => {
    const scoresFile = join(scratch(), 'scores.json');
    const r = await tapedeck([
      'recordings/examples/openai-baseline',
      '--contract',
      CONTRACT,
      '--json',
      '--strict',
      '--scores-out',
      scoresFile,
    ]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as {
      evaluations: Array<{
        task: Record<string, unknown>;
        validators: Array<Record<string, unknown>>;
        state: Array<Record<string, unknown>>;
      }>;
      aggregate: { taskSuccessRate: number };
    };
    const task = out.evaluations[0]!.task;
    expect(task.hardSuccess).toBe(false);
    expect(task.primaryFailureReasonCode).toBe('WRONG_EXECUTION_TARGET');
    expect(task.primaryFailureStepId).toBe(4);
    expect(out.evaluations[0]!.validators.map((v) => v.validatorName)).toContain('execution');
    expect(out.evaluations[0]!.state.some((s) => s.stateObjectType === 'db_row')).toBe(true);
    expect(out.aggregate.taskSuccessRate).toBe(0);
    // The scores file is what `tapedeck ingest --scores` reads: the seed's columns after snake-casing.
    const [scores] = loadScores(scoresFile);
    expect(scores!.task).toMatchObject({ hard_success: false, primary_failure_reason_code: 'WRONG_EXECUTION_TARGET' });
    expect(scores!.validators.length).toBe(out.evaluations[0]!.validators.length);
  });

  it('aggregates several runs: success rate, pass@k, pass^k, failure Pareto; and diffs against another run', async () => {
    const r = await tapedeck([
      'recordings/examples/openai-baseline',
      'recordings/examples/anthropic-baseline-stream',
      '--contract',
      CONTRACT,
      '--k',
      '1,2',
      '--against',
      'recordings/examples/openai-fixed-stream',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('FAIL  recordings/examples/openai-baseline');
    expect(r.stdout).toContain('primary failure: WRONG_EXECUTION_TARGET @step 4');
    expect(r.stdout).toContain('2 runs: Task Success Rate 0.0%');
    expect(r.stdout).toContain(
      'task travel_book_flight_001: 0/2 passed\n  pass@1 0.000, pass@2 0.000\n  pass^1 0.000, pass^2 0.000\n',
    );
    // It reads at 80 columns.
    for (const line of r.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(r.stdout).toMatch(/WRONG_EXECUTION_TARGET\s+2\s+100%/);
    expect(r.stdout).toContain('vs openai-fixed-stream: 1 file, 2 row difference(s) in the post-world');
    expect(r.stdout).toContain('update travel.bookings {"id":"BK-0001"} (passenger_id)');
  });

  it('rejects a bad contract naming the line and column', async () => {
    const dir = scratch();
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'task_id: t\nsuccess_criteria:\n  required_outputs: [final_answer]\n  must_include: yes\n');
    const r = await tapedeck(['recordings/examples/openai-baseline', '--contract', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}:4:17: success_criteria.must_include`);
    expect(r.stderr).not.toContain('    at ');
  });
});
