// Exact replay of a real recording of the example travel desk (streamed OpenAI agent): the
// trajectory reproduces, nothing real is touched, and the end state equals the recorded one.
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecording, worldAt } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { deadSandboxes } from '../support/pg-leftovers.js';
import { type RecordedExample, recordExample } from './world-fixture.js';

let tmp: string;
let example: RecordedExample;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-replay-test-'));
  example = await recordExample({ agent: 'openai', stream: true, out: path.join(tmp, 'recorded') });
});

afterAll(async () => {
  await example?.stop();
  await rm(tmp, { recursive: true, force: true });
});

describe('exact replay of the example baseline', () => {
  it('reproduces the run with no divergence, no hit on the real API, the real world untouched and the same end state', async () => {
    const before = await example.world.state();
    const modelCalls = example.world.modelLog().length;
    example.resetHits();

    const result = await replay({
      recording: example.dir,
      mode: 'exact',
      env: example.env,
      out: path.join(tmp, 'exact'),
      stdio: 'pipe',
    });

    expect(result.divergences).toEqual([]);
    expect(result.status).toBe('complete');
    expect(result.output?.stdout).toContain('BK-0001');
    expect(example.apiHits()).toBe(0);
    expect(example.world.modelLog().length).toBe(modelCalls);
    expect(await example.world.state()).toEqual(before);
    expect(result.worldDiff).toEqual([]);
    expect(result.worldMatches).toBe(true);

    const original = await readRecording(example.dir);
    const replayed = await readRecording(result.dir);
    expect(replayed.manifest.replayOf).toBe(original.manifest.id);
    expect(replayed.manifest.replay?.mode).toBe('exact');
    const steps = (r: typeof original) =>
      r.events.filter((e) => e.type === 'step.started').map((e) => [e.stepId, e.payload.stateType, e.payload.name]);
    expect(steps(replayed)).toEqual(steps(original));
    // Streamed answers were re-streamed chunk by chunk from the recording.
    const served = replayed.events.filter((e) => e.type === 'http.exchange');
    expect(served.every((e) => e.payload.servedFrom === 'recording')).toBe(true);
    expect(served.some((e) => (e.payload.response?.chunks?.length ?? 0) > 1)).toBe(true);
    // The step attribution of world changes survives: the world after each step is the recorded one.
    for (const k of [4, 6, 8]) {
      expect(worldAt(replayed, k).fs).toEqual(worldAt(original, k).fs);
    }
    expect(replayed.post.db).toEqual(original.post.db);
  });

  it.runIf(process.env.TAPEDECK_PG_URL)(
    'replays into a template-cloned database on a real server, and drops it after',
    async () => {
      const admin = new pg.Client({ connectionString: process.env.TAPEDECK_PG_URL });
      await admin.connect();
      try {
        const result = await replay({
          recording: example.dir,
          mode: 'exact',
          db: process.env.TAPEDECK_PG_URL as string,
          env: example.env,
          out: path.join(tmp, 'template'),
          stdio: 'pipe',
        });
        expect(result.divergences).toEqual([]);
        expect(result.worldMatches).toBe(true);
        const replayed = await readRecording(result.dir);
        expect(replayed.manifest.replay?.overrides.dbSandbox).toBe('template');
        expect(await deadSandboxes(admin)).toEqual([]);
      } finally {
        await admin.end();
      }
    },
  );

  it('stops at step 4 and materialises the world of step 4', async () => {
    const result = await replay({
      recording: example.dir,
      mode: 'exact',
      until: 4,
      env: example.env,
      out: path.join(tmp, 'until-4'),
      stdio: 'pipe',
    });
    expect(result.worldDir).toBeDefined();
    const worldDir = result.worldDir as string;
    // Step 4 booked BK-0001; the confirmation file is only written at step 6.
    const db = JSON.parse(readFileSync(path.join(worldDir, 'db.json'), 'utf8')) as {
      tables: Array<{ name: string; rows: Array<Record<string, unknown>> }>;
    };
    const bookings = db.tables.find((t) => t.name === 'bookings');
    expect(bookings?.rows.map((r) => r.id)).toEqual(['BK-0001']);
    expect(existsSync(path.join(worldDir, 'fs', 'traveler.json'))).toBe(true);
    expect(existsSync(path.join(worldDir, 'fs', 'confirmations'))).toBe(false);
    // The sandbox database of step 4 is kept as a PGlite data dir for inspection.
    expect(existsSync(path.join(worldDir, 'pglite-datadir.tar'))).toBe(true);
    const original = await readRecording(example.dir);
    expect(db.tables.map((t) => t.rows)).toEqual(worldAt(original, 4).db?.tables.map((t) => t.rows));
    const replayed = await readRecording(result.dir);
    expect(Math.max(...replayed.events.map((e) => e.stepId))).toBe(4);
    expect(replayed.manifest.replay?.until).toBe(4);
  });

  it('explains a call that was never recorded: the nearest recorded request and the differing fields', async () => {
    example.resetHits();
    const script = `const r = await fetch(process.env.TRAVEL_API_URL + '/bookings', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ flight_id: 'FL-101', passenger_id: 'P-100' }) }).catch((e) => ({ status: 'error: ' + e.message })); console.log(r.status);`;
    const result = await replay({
      recording: example.dir,
      mode: 'exact',
      command: [process.execPath, '--input-type=module', '-e', script],
      env: example.env,
      out: path.join(tmp, 'miss'),
      stdio: 'pipe',
    });
    const miss = result.divergences.find((d) => d.kind === 'unmatched-request');
    expect(miss).toBeDefined();
    expect(miss?.message).toContain('Nearest recorded request: step 4 POST');
    expect(miss?.fieldDiff).toContainEqual({ path: 'body.flight_id', expected: 'FL-102', actual: 'FL-101' });
    expect(result.heldBack).toEqual([
      {
        step: 1,
        method: 'POST',
        target: `${example.env.TRAVEL_API_URL}/bookings`,
        body: { flight_id: 'FL-101', passenger_id: 'P-100' },
        mutating: true,
      },
    ]);
    // The default exact-mode policy fails the call; the agent saw an error, the API saw nothing.
    expect(result.output?.stdout).toContain('error');
    expect(example.apiHits()).toBe(0);
  });
});
