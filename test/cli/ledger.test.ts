// `tapedeck ledger` reads at 80 columns outside its step table, and its columns add up.
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
