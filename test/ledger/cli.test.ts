// The ledger, ingest and query commands, run in-process through commander as the CLI runs them.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildLedger } from '../../src/ledger/index.js';
import { readRecording } from '../../src/recording/index.js';
import { runCli as run } from './run-cli.js';

const EXAMPLE = 'recordings/examples/openai-baseline';
const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-ledger-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('tapedeck ledger', () => {
  it('prints a table by step with totals, metrics and the conclusion', async () => {
    const out = await run('ledger', EXAMPLE);
    expect(out).toMatch(/step\s+state\s+name/);
    expect(out).toContain('FINALIZE');
    expect(out).toContain('cache hit ratio');
    expect(out).toMatch(/The run cost [\d.]+ USD\./);
  });

  it('prints the seed rows as JSON, equal to the engine', async () => {
    const json = JSON.parse(await run('ledger', EXAMPLE, '--json'));
    const ledger = buildLedger(await readRecording(EXAMPLE));
    expect(json.run).toEqual(ledger.run);
    expect(json.steps).toEqual(ledger.steps);
    expect(json.costProfile.conclusion).toBe(ledger.costProfile.conclusion);
  });

  it('re-costs the run under another price table and model in one command', async () => {
    const file = join(tmp, 'prices.json');
    writeFileSync(
      file,
      JSON.stringify({
        version: 'test',
        currency: 'RMB',
        models: [{ model: 'model_x', inputPerMillion: 10, cachedInputPerMillion: 2.5, outputPerMillion: 30 }],
      }),
    );
    const profile = JSON.parse(await run('ledger', EXAMPLE, '--prices', file, '--model', 'model_x', '--profile'));
    const t = buildLedger(await readRecording(EXAMPLE)).totals.tokens;
    const expected = ((t.uncachedInput + t.cacheWrite) * 10 + t.cacheRead * 2.5 + (t.output + t.reasoning) * 30) / 1e6;
    expect(profile.currency).toBe('RMB');
    expect(profile.total_cost).toBeCloseTo(expected, 10);
  });

  it('explains a bad price table and an unknown model', async () => {
    const bad = join(tmp, 'bad.json');
    writeFileSync(bad, '{"version":"x","currency":"USD","models":[{"model":"m"}]}');
    await expect(run('ledger', EXAMPLE, '--prices', bad)).rejects.toThrow(/bad\.json: models\.0\.inputPerMillion/);
    await expect(run('ledger', EXAMPLE, '--model', 'no-such-model')).rejects.toThrow(
      /no price for model no-such-model/,
    );
  });

  it('finds a replay’s baseline by id and shows the cost delta', async () => {
    const replayDir = join(tmp, 'replay-of-baseline');
    cpSync(EXAMPLE, replayDir, { recursive: true });
    const manifestFile = join(replayDir, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    writeFileSync(
      manifestFile,
      JSON.stringify({
        ...manifest,
        id: 'replay-1',
        replayOf: 'openai-baseline',
        replay: { mode: 'exact', overrides: {} },
      }),
    );
    const out = await run('ledger', replayDir);
    expect(out).toContain('replay of openai-baseline');
    expect(out).toMatch(/cost delta \(USD\)/);
    expect(out).toContain("the replay's trajectory costs the same as the baseline");
    // Outside the step table, a replay's ledger reads at 80 columns.
    const lines = out.split('\n');
    const table = [lines.findIndex((l) => /^\s*step\s+state/.test(l)), lines.findIndex((l) => /^total\s/.test(l))];
    for (const line of [...lines.slice(0, table[0]), ...lines.slice((table[1] ?? 0) + 1)])
      expect(line.length, line).toBeLessThanOrEqual(80);
    const json = JSON.parse(await run('ledger', replayDir, '--json'));
    expect(json.delta.delta.cost).toBe(0); // same trajectory, same prices
    expect(json.replay.replayOf).toBe('openai-baseline');
  });
});
