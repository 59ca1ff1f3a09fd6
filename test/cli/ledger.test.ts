// `tapedeck ledger` reads at 80 columns outside its step table, and its columns add up; it reads
// a recording's events alone, not its world snapshots (faster; a damaged snapshot does not stop it).
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { example, tapedeck } from './run-cli.js';

describe('tapedeck ledger text', () => {
  it('no repeated model column, ms totals sum the steps, prose wrapped at 80 columns', async () => {
    const run = await tapedeck(['ledger', example('openai-baseline')]);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    const head = lines.findIndex((l) => /^\s*step\s+state\s+name/.test(l));
    const total = lines.findIndex((l) => /^total\s/.test(l));
    expect(lines[head]).not.toMatch(/\bmodel\b/);
    const ms = (l: string) => Number((l.trim().split(/\s+/).at(-1) ?? '').replace(/,/g, ''));
    const steps = lines.slice(head + 1, total);
    expect(steps.length).toBe(9);
    // Each step's ms is rounded on its own: the sum may be off by up to half a millisecond per step.
    const diff = Math.abs(ms(lines[total] ?? '') - steps.reduce((n, l) => n + ms(l), 0));
    expect(diff).toBeLessThanOrEqual(steps.length / 2);
    expect(run.stdout).toMatch(/^latency: [\d,]+ ms in steps, [\d,]+ ms wall clock for the run$/m);
    const outside = [...lines.slice(0, head), ...lines.slice(total + 1)];
    for (const line of outside) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(run.stdout).toMatch(/^The run cost [\d.]+ USD\./m);
  });
});

describe('tapedeck ledger reads the events alone', () => {
  it('prices a run whose world snapshot is damaged (verify still refuses it), the same as the intact run', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-ledger-world-'));
    try {
      const copy = join(tmp, 'rec');
      cpSync(example('openai-baseline'), copy, { recursive: true });
      writeFileSync(join(copy, 'snapshots/post/db.json'), '{"tables": "not a snapshot"');
      const intact = await tapedeck(['ledger', example('openai-baseline'), '--json']);
      const damaged = await tapedeck(['ledger', copy, '--json']);
      expect(damaged.code, damaged.stderr).toBe(0);
      const costOf = (text: string) => (JSON.parse(text) as { run: unknown; steps: unknown }).steps;
      expect(costOf(damaged.stdout)).toEqual(costOf(intact.stdout));
      const verify = await tapedeck(['verify', copy]);
      expect(verify.code).not.toBe(0);
      expect(verify.stdout + verify.stderr).toMatch(/db\.json/);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
