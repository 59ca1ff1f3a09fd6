// The bisect and diff commands on the committed example recordings (recordings/examples/): the
// `tapedeck` binary for the printed search and the error path, in-process for the rest.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './cli-harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/tapedeck.mjs');
const BASELINE = join(ROOT, 'recordings/examples/openai-baseline');
const FIXED = join(ROOT, 'recordings/examples/openai-fixed-stream');
const scratch = mkdtempSync(join(tmpdir(), 'tapedeck-bisect-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function tapedeck(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, TMPDIR: scratch, NO_COLOR: '1' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('tapedeck bisect on the example baseline (divergent step 3: book_flight with an unseen passenger id)', () => {
  it('the built-in predicates find step 3 within ceil(log2 9)+1 = 5 evaluations, printed', async () => {
    const { code, stdout, stderr } = await tapedeck('bisect', BASELINE);
    expect(code).toBe(1);
    expect(stdout).toMatch(/first bad step: 3 \(THINK gpt-4\.1-mini\)/);
    expect(stdout).toMatch(/action: .*book_flight\(.*"passenger_id":"P-100"/);
    expect(stdout).toMatch(/why: .*"P-100".*no tool result, input or task text before it mentions/);
    const evaluations = Number(/evaluations: (\d+) \(bound ceil\(log2 N\)\+1 = 5\)/.exec(stdout)?.[1]);
    expect(evaluations).toBeGreaterThan(0);
    expect(evaluations).toBeLessThanOrEqual(5);
    expect(stderr.split('\n').filter((l) => l.startsWith('bisect: ['))).toHaveLength(evaluations);
  });

  it('the fixed run has no bad step, and against the baseline the divergence is gone', async () => {
    const { code, stdout } = await runCli('bisect', FIXED, '--baseline', BASELINE);
    expect(code).toBe(0);
    expect(stdout).toMatch(/no bad step/);
    expect(stdout).toMatch(/prompt change: disappeared — the divergence at baseline step 3 .* is gone/);
  });

  it.each([
    ['a shell predicate', ['--shell', 'echo "$TAPEDECK_RECORDING $TAPEDECK_STEP" >> "$PROBES"; exit 0']],
    [
      'a shell predicate that finds a bad step',
      ['--shell', 'echo "$TAPEDECK_RECORDING $TAPEDECK_STEP" >> "$PROBES"; test "$TAPEDECK_STEP" -lt 3'],
    ],
  ])('against a baseline, each run is searched once and its progress says which (%s)', async (_name, predicate) => {
    const probes = join(scratch, `probes-${Math.random().toString(36).slice(2)}.txt`);
    process.env.PROBES = probes;
    try {
      await runCli('bisect', FIXED, '--baseline', BASELINE, ...predicate);
    } finally {
      delete process.env.PROBES;
    }
    const lines = readFileSync(probes, 'utf8').trim().split('\n');
    // A probe of a step of a run is made once: the replay is not searched a second time for the comparison.
    expect(lines.length).toBe(new Set(lines).size);
    expect(lines.some((l) => l.startsWith(BASELINE))).toBe(true);
    expect(lines.some((l) => l.startsWith(FIXED))).toBe(true);
  });

  it("the progress lines name the run they search: the replay's, then the baseline's", async () => {
    const { stderr } = await runCli('bisect', FIXED, '--baseline', BASELINE);
    const progress = stderr.split('\n').filter((l) => /^bisect.*: \[\d+\/\d+\]/.test(l));
    expect(progress.some((l) => l.startsWith('bisect (baseline): '))).toBe(true);
    expect(progress.every((l) => l.startsWith('bisect: ') || l.startsWith('bisect (baseline): '))).toBe(true);
  });
});

describe('tapedeck diff', () => {
  it('shows where the baseline and the fixed run part, side by side', async () => {
    const { code, stdout } = await runCli('diff', BASELINE, FIXED);
    expect(code).toBe(1);
    expect(stdout).toMatch(/first divergence: other-tool at a step 3, b step 3/);
    expect(stdout).toMatch(/calls book_flight\s+\| calls read_file/);
    expect(stdout).toMatch(/similarity 0\.\d\d/);
  });
});

describe('bad input', () => {
  it('a step out of range and a throwing predicate each give one clear line; shell probes leave no folder', async () => {
    const range = await tapedeck('bisect', BASELINE, '--bad', '42');
    expect(range.code).toBe(2);
    expect(range.stderr.trim()).toMatch(/^tapedeck: --bad step 42 is out of range: .* has steps 1\.\.9/);

    const file = join(scratch, 'throws.mjs');
    writeFileSync(file, "export default () => { throw new Error('no flights table'); };\n");
    const thrown = await tapedeck('bisect', BASELINE, '--js', file);
    expect(thrown.code).toBe(2);
    expect(thrown.stderr).toMatch(/tapedeck: predicate js:.*throws\.mjs threw at step 9: no flights table/);
    expect(thrown.stderr).not.toMatch(/\n\s+at /);

    const shell = await runCli('bisect', BASELINE, '--shell', 'exit 1');
    expect(shell.code).toBe(1);
    expect(readdirSync(scratch).filter((f) => f.startsWith('tapedeck-bisect-'))).toEqual([]);
  });
});
