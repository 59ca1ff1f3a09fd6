import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateRecording, loadContract } from '../../src/evaluate/index.js';
import { readRecording } from '../../src/recording/index.js';
import {
  loadScores,
  MIGRATIONS,
  openQueue,
  openWarehouse,
  runWorker,
  SCHEMA_VERSION,
  type Warehouse,
} from '../../src/store/index.js';
import { jobHandlers } from '../../src/store/jobs.js';
import { ingestAll } from './fixtures.js';
import { dumpTables } from './helpers.js';

describe('warehouse on embedded PGlite', () => {
  let dir: string;
  let wh: Warehouse;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tapedeck-wh-'));
    wh = await openWarehouse({ dir: join(dir, 'warehouse') });
    await ingestAll(wh);
  });
  afterAll(async () => {
    await wh?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the seed tables through versioned migrations', async () => {
    const r = await wh.query('SELECT version, name FROM schema_migrations ORDER BY version');
    expect(r.rows.map((x) => x.version)).toEqual(MIGRATIONS.map((m) => m.version));
    expect(r.rows.at(-1)?.version).toBe(SCHEMA_VERSION);
    const cols = await wh.query(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'trace_step' ORDER BY ordinal_position`,
    );
    expect(cols.rows.map((c) => c.column_name)).toEqual(
      expect.arrayContaining([
        'input_tokens_total',
        'input_tokens_uncached',
        'input_tokens_cached',
        'reasoning_tokens',
        'state_cost',
      ]),
    );
  });

  it('stores ledgers and scores that answer cost questions', async () => {
    const runs = await wh.query('SELECT trace_id, total_cost FROM trace_run ORDER BY trace_id');
    expect(runs.rows.map((r) => r.trace_id)).toEqual(['trace-run-a', 'trace-run-b', 'trace-run-c']);
    const resolved = await wh.query(
      'SELECT runs, resolved, cost_per_run, cost_per_resolved_task FROM cost_per_resolved_task',
    );
    expect(resolved.rows[0]).toMatchObject({ runs: 2, resolved: 1 });
    expect(Number(resolved.rows[0]?.cost_per_resolved_task)).toBeCloseTo(
      Number(resolved.rows[0]?.cost_per_run) * 2,
      10,
    );
  });

  it('changes nothing when the same recordings are ingested again', async () => {
    const before = await dumpTables(wh);
    await ingestAll(wh);
    expect(await dumpTables(wh)).toEqual(before);
  });

  it('keeps its data in the folder and does not migrate twice', async () => {
    const before = await dumpTables(wh);
    await wh.close();
    wh = await openWarehouse({ dir: join(dir, 'warehouse') });
    expect(await dumpTables(wh)).toEqual(before);
    const r = await wh.query('SELECT count(*) AS n FROM schema_migrations');
    expect(r.rows[0]?.n).toBe(MIGRATIONS.length);
  });

  it('reads a scores file and names the bad field of a wrong one', () => {
    const file = join(dir, 'scores.json');
    writeFileSync(file, JSON.stringify([{ task: { evalId: 'e', taskId: 't', hardSuccess: 'yes' } }]));
    expect(() => loadScores(file)).toThrow(/scores\.json\[0\]\.task\.hard_success/);
  });

  it("ingests what evaluateRecording returns as it is (camelCase), as docs/ledger.md's example does", async () => {
    const recording = await readRecording('recordings/examples/openai-baseline');
    const scores = evaluateRecording(recording, loadContract('examples/contracts/book-flight.yaml'));
    const own = await openWarehouse({ dir: join(dir, 'camel') });
    try {
      await own.ingest(recording, scores); // failed before: a NOT NULL violation on eval_task_result.eval_id
      const r = await own.query('SELECT eval_id, task_id, hard_success FROM eval_task_result');
      expect(r.rows).toEqual([{ eval_id: scores.task.evalId, task_id: 'travel_book_flight_001', hard_success: false }]);
      const v = await own.query('SELECT count(*)::int AS n FROM eval_validator_result');
      expect(v.rows[0]?.n).toBe(scores.validators.length);
    } finally {
      await own.close();
    }
  });

  // Last: it adds the example runs to this warehouse.
  it('drains ingest jobs into the warehouse and records a bad one as failed', async () => {
    const q = await openQueue(wh);
    try {
      await q.enqueue('ingest', { recording: 'recordings/examples/openai-baseline' });
      await q.enqueue('ingest', { recording: 'recordings/examples/anthropic-fixed' });
      const bad = await q.enqueue('ingest', { recording: 'recordings/no-such-recording' }, { retryLimit: 0 });
      const outcomes: string[] = [];
      const handlers = jobHandlers({ warehouse: wh, workDir: join(dir, 'worker') });
      const ran = await runWorker(q, handlers, { once: true, onJob: (e) => outcomes.push(e.outcome) });
      expect(ran).toBe(3);
      expect(outcomes.sort()).toEqual(['done', 'done', 'failed']);
      const runs = await wh.query(
        "SELECT recording_id FROM trace_run WHERE recording_id IN ('anthropic-fixed', 'openai-baseline') ORDER BY 1",
      );
      expect(runs.rows.map((r) => r.recording_id)).toEqual(['anthropic-fixed', 'openai-baseline']);
      expect((await q.get('ingest', bad as string))?.output).toMatchObject({
        message: expect.stringMatching(/no-such-recording/),
      });
    } finally {
      await q.close();
    }
  });
});
