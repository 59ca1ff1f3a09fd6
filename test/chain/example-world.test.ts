// The answer chain on the travel desk. The baseline replayed with the fixed prompt, with the travel
// API re-hosted as a sandbox service: the new calls are answered (not held back), the booking for
// Dana Reyes (P-102) lands in the sandbox database as that step's db.changed, the contract's hard
// gate passes. With msw mocks for the reads only, the booking (mutating, no answerer) is held
// back. The fixed run replayed with the baseline prompt and a simulator: its booking is simulated
// only when allowed, and `eval` says the outcome rests on it (`--strict` refuses it). The real API,
// database and workspace are never touched.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withFakeSimulator } from '../../examples/world/fake-simulator.js';
import { CONTRACT, decide, PROMPTS, startModelServer } from '../../examples/world/index.js';
import type { ModelServer } from '../../examples/world/model-server.js';
import { loadConfig, type TapedeckConfig, withOverrides } from '../../src/config/index.js';
import { evaluateRecording, loadContract } from '../../src/evaluate/index.js';
import { buildLedger } from '../../src/ledger/index.js';
import { answerProvenance, type Recording, readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { tapedeck as runCli } from '../cli/run-cli.js';
import { type RecordedExample, recordExample } from '../replay/world-fixture.js';

const CONFIG = fileURLToPath(new URL('../../examples/tapedeck.config.ts', import.meta.url));
const MOCKS = fileURLToPath(new URL('./fixtures/travel-mocks.ts', import.meta.url));
let tmp: string;
let example: RecordedExample;
let fixedRun: RecordedExample;
let simulator: ModelServer;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-chain-world-'));
  example = await recordExample({ agent: 'openai', out: path.join(tmp, 'baseline') });
  fixedRun = await recordExample({ agent: 'openai', prompt: 'fixed', out: path.join(tmp, 'fixed-run') });
  simulator = await startModelServer({ policy: withFakeSimulator(decide) });
}, 300_000);
afterAll(async () => {
  await example?.stop();
  await fixedRun?.stop();
  await simulator?.close();
  await rm(tmp, { recursive: true, force: true });
});

/** Replays `run` counterfactually with `prompt`; checks that nothing real was touched. */
async function replayed(run: RecordedExample, prompt: 'fixed' | 'baseline', name: string, config: TapedeckConfig) {
  const before = await run.world.state();
  run.resetHits();
  const result = await replay({
    recording: run.dir,
    mode: 'counterfactual',
    systemPrompt: readFileSync(PROMPTS[prompt], 'utf8'),
    env: run.env,
    out: path.join(tmp, name),
    stdio: 'pipe',
    config,
  });
  expect(result.status, result.output?.stderr).toBe('complete');
  expect(run.apiHits()).toBe(0);
  expect(await run.world.state()).toEqual(before);
  return { result, recording: await readRecording(result.dir) };
}

const bookingsInserted = (recording: Recording) =>
  recording.events.flatMap((e) =>
    e.type === 'db.changed' && e.payload.table === 'bookings' && e.payload.op === 'insert' ? [e.payload.after] : [],
  );

describe('the example world with its travel API as a sandbox service', () => {
  it('reaches the fixed prompt outcome in the sandbox and touches nothing real', { timeout: 400_000 }, async () => {
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
    // The replay says which chain stood behind it, and how its agent was held in.
    expect(replayed.manifest.replay?.chain?.services).toEqual([
      expect.objectContaining({ kind: 'command', origin: new URL(example.env.TRAVEL_API_URL ?? '').origin }),
    ]);
    expect(replayed.manifest.replay?.chain?.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(replayed.manifest.replay?.isolation).toBe(result.isolation?.level);
    expect(provenance.steps.get(post?.stepId ?? -1)).toBe('sandbox');

    // Nothing real: no request reached the API, no row changed, no file written.
    expect(example.apiHits()).toBe(0);
    expect(await example.world.state()).toEqual(before);
  });
});

describe('the example world with msw mocks for the reads only', () => {
  it('answers the reads from the mocks and holds back the booking, which has no answerer', {
    timeout: 240_000,
  }, async () => {
    const { result, recording } = await replayed(example, 'fixed', 'mocks', { mocks: MOCKS });
    expect(result.served.mock).toBeGreaterThanOrEqual(2);
    const booking = result.heldBack.find((h) => h.method === 'POST' && h.target.endsWith('/bookings'));
    expect(booking).toMatchObject({ mutating: true, body: { passenger_id: 'P-102' } });
    expect(bookingsInserted(recording)).toEqual([]);
    expect(answerProvenance(recording).steps.get(booking?.step ?? -1)).toBe('blocked');
    const lookup = recording.events.find(
      (e) => e.type === 'http.exchange' && e.payload.request.url.endsWith('/passengers/P-102'),
    );
    expect(lookup?.type === 'http.exchange' && lookup.payload.servedFrom).toBe('mock');

    // eval says what the outcome rests on (the fixed prompt's read of traveler.json, a file the
    // recording never read, was the sandbox's); --strict refuses one resting on a held-back call.
    const plain = await runCli(['eval', result.dir, '--contract', CONTRACT]);
    expect(plain.stdout).toMatch(/rests on: \d+ recorded, \d+ live, 1 sandbox, \d+ mock, 1 held back/);
    const strict = await runCli(['eval', result.dir, '--contract', CONTRACT, '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toMatch(/^REFUSED {2}/);
    expect(strict.stdout).toContain('refused (--strict): the outcome rests on 1 held-back call');
  });
});

describe('the example world with a simulator', () => {
  it('simulates a mutating call only when allowed, and eval --strict refuses an outcome resting on it', {
    timeout: 300_000,
  }, async () => {
    const endpoint = `${simulator.url}/v1`;
    const held = await replayed(fixedRun, 'baseline', 'sim-held', { simulate: { endpoint } });
    const booking = held.result.heldBack.find((h) => h.method === 'POST');
    expect(booking).toMatchObject({ mutating: true, body: { passenger_id: 'P-100' } });
    expect(held.result.served.simulated).toBe(0);

    const allowed = await replayed(fixedRun, 'baseline', 'sim-allowed', {
      simulate: { endpoint, allowMutating: ['POST /bookings'] },
    });
    expect(allowed.result.heldBack).toEqual([]);
    expect(allowed.result.served.simulated).toBe(1);
    const post = allowed.recording.events.find(
      (e) => e.type === 'http.exchange' && e.payload.request.url.endsWith('/bookings'),
    );
    expect(post?.type === 'http.exchange' && post.payload.servedFrom).toBe('simulated');
    // A simulated answer writes nothing to the sandbox: no booking row, whatever the answer says.
    expect(bookingsInserted(allowed.recording)).toEqual([]);
    // The manifest names the simulator; the ledger counts what its call cost on the step it answered.
    expect(allowed.recording.manifest.replay?.chain?.simulate).toMatchObject({
      endpoint,
      allowMutating: ['POST /bookings'],
    });
    const simulatedStep = buildLedger(allowed.recording).detail.find((s) => s.stepId === post?.stepId);
    expect(simulatedStep?.servedFrom).toBe('simulated');
    expect(simulatedStep?.tokens.output).toBeGreaterThan(0);
    const strict = await runCli(['eval', allowed.result.dir, '--contract', CONTRACT, '--strict', '--json']);
    expect(strict.code).toBe(1);
    const json = JSON.parse(strict.stdout) as {
      evaluations: Array<{ answers: Record<string, number>; refused: string }>;
    };
    expect(json.evaluations[0]?.answers.simulated).toBe(1);
    expect(json.evaluations[0]?.refused).toBe('the outcome rests on 1 simulated answer');
  });
});
