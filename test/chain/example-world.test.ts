// The travel desk's baseline replayed with the fixed prompt, with the travel API re-hosted as a
// sandbox service: the new calls are answered (not held back), the booking for Dana Reyes (P-102)
// lands in the sandbox database as that step's db.changed, the contract's hard gate passes, and the
// real API, database and workspace are untouched.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT, PROMPTS } from '../../examples/world/index.js';
import { loadConfig, withOverrides } from '../../src/config/index.js';
import { evaluateRecording, loadContract } from '../../src/evaluate/index.js';
import { answerProvenance, readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { type RecordedExample, recordExample } from '../replay/world-fixture.js';

const CONFIG = fileURLToPath(new URL('../../examples/tapedeck.config.ts', import.meta.url));
let tmp: string;
let example: RecordedExample;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-chain-world-'));
  example = await recordExample({ agent: 'openai', out: path.join(tmp, 'baseline') });
});
afterAll(async () => {
  await example?.stop();
  await rm(tmp, { recursive: true, force: true });
});

describe('the example world with its travel API as a sandbox service', () => {
  it('reaches the fixed prompt outcome in the sandbox and touches nothing real', async () => {
    const config = withOverrides(await loadConfig({ file: CONFIG }));
    const before = await example.world.state();
    example.resetHits();
    const result = await replay({
      recording: example.dir,
      mode: 'counterfactual',
      systemPrompt: readFileSync(PROMPTS.fixed, 'utf8'),
      env: example.env,
      out: path.join(tmp, 'fixed'),
      stdio: 'pipe',
      config: config.config,
    });
    expect(result.status, result.output?.stderr).toBe('complete');
    expect(result.heldBack).toEqual([]);
    expect(result.served.sandbox).toBeGreaterThanOrEqual(3);
    expect(result.output?.stdout).toContain('P-102');

    const replayed = await readRecording(result.dir);
    const { task } = evaluateRecording(replayed, loadContract(CONTRACT));
    expect(task.hardSuccess, JSON.stringify(task.failureReasonCodes)).toBe(true);
    // The booking the sandboxed API made is the step's db.changed, in the replay recording.
    const post = replayed.events.find(
      (e) => e.type === 'http.exchange' && e.payload.request.method === 'POST' && e.payload.servedFrom === 'sandbox',
    );
    expect(post).toBeDefined();
    const inserted = replayed.events.filter(
      (e) => e.type === 'db.changed' && e.stepId === post?.stepId && e.payload.table === 'bookings',
    );
    expect(inserted.map((e) => e.type === 'db.changed' && e.payload.after?.passenger_id)).toEqual(['P-102']);
    const provenance = answerProvenance(replayed);
    expect(provenance.counts.sandbox).toBe(result.served.sandbox);
    expect(provenance.steps.get(post?.stepId ?? -1)).toBe('sandbox');

    // Nothing real: no request reached the API, no row changed, no file written.
    expect(example.apiHits()).toBe(0);
    expect(await example.world.state()).toEqual(before);
  });
});
