// Counterfactual replay of the example baseline under the fixed prompt: model calls go live to
// the (fake) model server, tool calls are served from the recording when they match, and the
// ones that don't are held back, never reaching the real API.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT, PROMPTS } from '../../examples/world/index.js';
import { evaluateRecording, loadContract } from '../../src/evaluate/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { type RecordedExample, recordExample } from './world-fixture.js';

let tmp: string;
let example: RecordedExample;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-replay-cf-'));
  example = await recordExample({ agent: 'openai', out: path.join(tmp, 'recorded') });
});

afterAll(async () => {
  await example?.stop();
  await rm(tmp, { recursive: true, force: true });
});

describe('counterfactual replay with the fixed prompt', () => {
  it('writes a replay recording, reports the first divergent step and lists held-back calls', async () => {
    const fixed = readFileSync(PROMPTS.fixed, 'utf8').trim();
    const before = await example.world.state();
    const modelCalls = example.world.modelLog().length;
    example.resetHits();

    const result = await replay({
      recording: example.dir,
      mode: 'counterfactual',
      systemPrompt: fixed,
      env: example.env,
      out: path.join(tmp, 'fixed'),
      stdio: 'pipe',
    });

    const original = await readRecording(example.dir);
    const replayed = await readRecording(result.dir);
    expect(replayed.manifest.replayOf).toBe(original.manifest.id);
    expect(replayed.manifest.replay).toMatchObject({ mode: 'counterfactual', overrides: { systemPrompt: fixed } });

    // Steps 1-2 agree (the model answers the new prompt as it answered the old one); step 3 parts.
    expect(result.firstDivergentStep).toBe(3);
    expect(result.served.live).toBeGreaterThan(0);
    expect(example.world.modelLog().length).toBe(modelCalls + result.served.live);
    // The live requests carried the new prompt, not the recorded one.
    const sent = example.world.modelLog().slice(modelCalls).join('\n');
    expect(sent).toContain('Check the booking policy with search_policies before you book.');

    // The model requests after the parting are not in the recording: each is set beside its nearest
    // recorded request without the prompt, which the override changed on purpose.
    const baselinePrompt = readFileSync(PROMPTS.baseline, 'utf8').trim();
    const unrecorded = result.divergences.filter((d) => /model request is not in the recording/.test(d.message));
    expect(unrecorded.length).toBeGreaterThan(0);
    for (const d of unrecorded) {
      expect(d.fieldDiff?.length).toBeGreaterThan(0);
      const prompts = d.fieldDiff?.filter((f) =>
        [f.expected, f.actual].some((v) => typeof v === 'string' && (v.includes(fixed) || v.includes(baselinePrompt))),
      );
      expect(prompts).toEqual([]);
    }

    // The passenger lookup was never recorded: held back, explained, and the API never saw it.
    const lookup = result.heldBack.find((h) => h.target.endsWith('/passengers/P-102'));
    expect(lookup).toMatchObject({ method: 'GET', mutating: false });
    const miss = result.divergences.find((d) => d.kind === 'unmatched-request' && d.step === lookup?.step);
    expect(miss?.message).toContain('Nearest recorded request');
    expect(example.apiHits()).toBe(0);
    expect(await example.world.state()).toEqual(before);

    // The replay is a recording like any other: the scoring engine reads it.
    const evaluation = evaluateRecording(replayed, loadContract(CONTRACT));
    expect(evaluation.task.hardSuccess).toBe(false);
    // Reads are never side effects, held back or not: the GETs the fixed prompt added (policy and
    // passenger lookups) are neither request effects nor UNAUTHORIZED_ACTION.
    expect(result.heldBack.map((h) => [h.method, h.mutating])).toEqual([
      ['GET', false],
      ['GET', false],
    ]);
    expect(evaluation.diff.changes.requests).toEqual([]);
    expect(evaluation.task.failureReasonCodes).not.toContain('UNAUTHORIZED_ACTION');
  });
});

describe('fork-at', () => {
  it('serves steps before K wholly from the recording, with their effects, then goes live', async () => {
    const fixed = readFileSync(PROMPTS.fixed, 'utf8').trim();
    example.resetHits();
    const result = await replay({
      recording: example.dir,
      mode: 'counterfactual',
      forkAt: 5,
      systemPrompt: fixed,
      env: example.env,
      out: path.join(tmp, 'fork-5'),
      stdio: 'pipe',
    });
    const replayed = await readRecording(result.dir);
    const served = replayed.events
      .filter((e) => e.type === 'http.exchange')
      .map((e) => [e.stepId, e.payload.servedFrom]);
    // Steps 1-4 (model answers included) came from the recording although the prompt changed.
    expect(served.slice(0, 4)).toEqual([
      [1, 'recording'],
      [2, 'recording'],
      [3, 'recording'],
      [4, 'recording'],
    ]);
    expect(served[4]).toEqual([5, 'live']);
    expect(result.divergences.every((d) => d.step >= 5)).toBe(true);
    // Effects followed the served POST /bookings: the sandbox database has the booking, the real API saw nothing.
    const bookings = replayed.events.filter(
      (e) => e.type === 'db.changed' && e.stepId === 4 && e.payload.table === 'bookings',
    );
    expect(bookings.map((e) => e.type === 'db.changed' && e.payload.after?.id)).toEqual(['BK-0001']);
    expect(replayed.post.db?.tables.find((t) => t.name === 'bookings')?.rows.map((r) => r.id)).toContain('BK-0001');
    expect(example.apiHits()).toBe(0);
  });
});

describe('a new system prompt that is the recorded one but for a trailing newline', () => {
  it('is warned about: no model request can match the recording', async () => {
    const result = await replay({
      recording: 'recordings/examples/openai-baseline',
      trustRecording: true, // committed: made elsewhere
      mode: 'counterfactual',
      systemPrompt: `${readFileSync(PROMPTS.baseline, 'utf8').trim()}\n`, // the file as an editor saves it
      modelEndpoint: 'http://127.0.0.1:1/v1',
      out: path.join(tmp, 'newline'),
      stdio: 'pipe',
    });
    expect(result.warnings).toEqual(
      expect.arrayContaining([expect.stringContaining('the recorded one but for whitespace at its ends')]),
    );
  });
});

describe('a live model endpoint that does not answer', () => {
  it('is named in the replay warnings, not only in the agent crash', async () => {
    // A port nothing listens on: bind one, then close it.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));

    const result = await replay({
      recording: 'recordings/examples/openai-baseline',
      trustRecording: true, // committed: made elsewhere
      mode: 'counterfactual',
      systemPrompt: readFileSync(PROMPTS.fixed, 'utf8').trim(),
      modelEndpoint: `http://127.0.0.1:${port}/v1`,
      out: path.join(tmp, 'dead-endpoint'),
      stdio: 'pipe',
    });
    expect(result.status).toBe('failed'); // the agent's SDK gave up: connection error
    expect(result.answerFailures?.[0]).toMatch(/^step 1: live model call to .* failed: .*ECONNREFUSED/); // bisect-prompt's probe reason
    expect(result.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(`live model call to http://127\\.0\\.0\\.1:${port}/v1/chat/completions failed`),
        ),
      ]),
    );
  });
});
