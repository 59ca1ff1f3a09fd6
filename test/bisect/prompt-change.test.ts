// Prompt change end to end: replay the example baseline with the fixed prompt (real replayer, the example
// world's fake model server) and watch the belief-divergence step disappear.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMPTS, startWorld, type World } from '../../examples/world/index.js';
import { builtinPredicate, compareDivergence, replayProbe } from '../../src/bisect/index.js';
import { readRecording } from '../../src/recording/index.js';

const BASELINE = resolve(import.meta.dirname, '../../recordings/examples/openai-baseline');
const out = mkdtempSync(join(tmpdir(), 'tapedeck-prompt-change-'));
let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world?.stop();
  rmSync(out, { recursive: true, force: true });
});

describe('replaying the baseline with a changed prompt', () => {
  it('with the fixed prompt the replay probe passes, and the divergence at step 3 disappears', async () => {
    const probe = replayProbe({
      recording: BASELINE,
      trustRecording: true, // committed: made elsewhere
      predicate: () => builtinPredicate('all'),
      modelEndpoint: world.modelUrl,
      outRoot: out,
    });
    const outcome = await probe(readFileSync(PROMPTS.fixed, 'utf8'));
    expect(outcome.ok).toBe(true);
    expect(typeof outcome.cost).toBe('number');
    const replayed = await readRecording(outcome.recordingDir!);
    expect(replayed.manifest.replayOf).toBeDefined();
    const shift = await compareDivergence(await readRecording(BASELINE), replayed, () => builtinPredicate('all'));
    expect(shift.baseline.firstBad?.step).toBe(3);
    expect(shift.verdict).toBe('disappeared');
    expect(shift.replay.firstBad).toBeUndefined();
  });
});
