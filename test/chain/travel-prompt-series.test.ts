// `tapedeck bisect-prompt --versions` on the travel desk, as a user runs it: the baseline run is
// recorded, then a prompt series is bisected by real counterfactual replays (the travel API
// re-hosted as a sandbox service), each judged by the contract's hard gate. The series starts from
// the fixed prompt and drops one rule per version; version 3 drops the passenger check, so its
// replay books for an assumed passenger id and fails with WRONG_EXECUTION_TARGET.
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMPTS } from '../../examples/world/index.js';
import { tapedeck } from '../cli/run-cli.js';
import { type RecordedExample, recordExample } from '../replay/world-fixture.js';

let tmp: string;
let baseline: RecordedExample;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-travel-series-'));
  baseline = await recordExample({ agent: 'openai', out: path.join(tmp, 'baseline') });
}, 300_000);
afterAll(async () => {
  await baseline?.stop();
  await rm(tmp, { recursive: true, force: true });
});

/** The fixed prompt, then one rule fewer per version: v3 is the first without the passenger check. */
function writeSeries(): string[] {
  const fixed = readFileSync(PROMPTS.fixed, 'utf8').split('\n');
  const without = (lines: string[], words: string) => lines.filter((l) => !l.toLowerCase().includes(words));
  const v2 = without(fixed, 'verify the booking');
  const v3 = without(v2, 'look up the passenger');
  const v4 = without(v3, 'check the booking policy');
  return [fixed, v2, v3, v4].map((lines, i) => {
    const file = path.join(tmp, `v${i + 1}.txt`);
    writeFileSync(file, lines.join('\n'));
    return file;
  });
}

describe('tapedeck bisect-prompt --versions on the travel desk', () => {
  it('names the version that drops the passenger check, judged by real replays against the contract', {
    timeout: 600_000,
  }, async () => {
    const versions = writeSeries();
    expect(readFileSync(versions[1]!, 'utf8')).toContain('look up the passenger');
    expect(readFileSync(versions[2]!, 'utf8')).not.toContain('look up the passenger');
    baseline.resetHits();
    const run = await tapedeck(
      [
        'bisect-prompt',
        baseline.dir,
        '--versions',
        ...versions,
        '--contract',
        'examples/contracts/book-flight.yaml',
        '--config',
        'examples/tapedeck.config.ts',
        '--out',
        path.join(tmp, 'probes'),
        '--no-cache',
        '--json',
      ],
      // The recording does not keep the agent's env: the replays get the one the run had.
      { env: baseline.env, timeoutMs: 580_000 },
    );
    expect(run.code, run.stderr).toBe(1);
    const result = JSON.parse(run.stdout) as {
      firstBad?: { label: string; reason?: string };
      lastGood?: { label: string };
      evaluations: number;
    };
    expect(result.firstBad?.label).toBe(versions[2]);
    expect(result.firstBad?.reason).toMatch(/WRONG_EXECUTION_TARGET/);
    expect(result.lastGood?.label).toBe(versions[1]);
    expect(result.evaluations).toBeLessThanOrEqual(3);
    // Every probe ran in the sandbox: the real API saw nothing.
    expect(baseline.apiHits()).toBe(0);
  });
});
