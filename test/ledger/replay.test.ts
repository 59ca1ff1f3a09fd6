// The ledger of a real replay made by src/replay: served from the recording = 0 spent, and the
// cost delta against its baseline is 0 for an exact replay.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildLedger, compareLedgers } from '../../src/ledger/index.js';
import { readRecording } from '../../src/recording/index.js';

const BASELINE = 'recordings/examples/openai-baseline';
const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-ledger-replay-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.skipIf(!existsSync(BASELINE))('ledger of a replay', () => {
  it('shows an exact replay spent nothing and costs what its baseline cost', async () => {
    const { replay } = await import('../../src/replay/index.js');
    const result = await replay({ recording: BASELINE, mode: 'exact', out: join(tmp, 'replay'), trustRecording: true });
    const replayed = await readRecording(result.dir);
    expect(replayed.manifest.replayOf).toBeDefined();
    const baseline = buildLedger(await readRecording(BASELINE));
    const ledger = buildLedger(replayed);
    expect(ledger.replay?.replayCost).toBe(0);
    expect(ledger.replay?.liveCost).toBe(0);
    expect(ledger.replay?.recordedCost).toBeCloseTo(baseline.run.total_cost, 12);
    expect(ledger.run.replay_cost).toBe(0);
    expect(ledger.totals.tokens).toEqual(baseline.totals.tokens);
    expect(ledger.costProfile.conclusion).toMatch(/As a replay it spent 0 USD/);
    const delta = compareLedgers(baseline, ledger);
    expect(delta.delta.cost).toBe(0);
    expect(delta.delta.totalTokens).toBe(0);
  });
});
