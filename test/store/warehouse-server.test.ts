import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse, type Warehouse } from '../../src/store/index.js';
import { answers, examplesWithScores, ingestAll } from './fixtures.js';
import { createTestDatabase, dumpTables, PG_URL } from './helpers.js';

describe.skipIf(!PG_URL)('warehouse on a Postgres server (TAPEDECK_PG_URL)', () => {
  let db: { url: string; drop: () => Promise<void> };
  let server: Warehouse;
  let embedded: Warehouse;
  beforeAll(async () => {
    db = await createTestDatabase('tapedeck_wh');
    server = await openWarehouse({ url: db.url });
    embedded = await openWarehouse({ dir: ':memory:' });
    const examples = await examplesWithScores();
    for (const wh of [server, embedded]) {
      await ingestAll(wh);
      for (const { recording, scores } of examples) await wh.ingest(recording, scores);
    }
  });
  afterAll(async () => {
    await server?.close();
    await embedded?.close();
    await db?.drop();
  });

  it('answers every query exactly as embedded PGlite does', async () => {
    expect(server.kind).toBe('postgres');
    const a = await answers(server);
    const b = await answers(embedded);
    expect(a).toEqual(b);
    expect((a[1] as unknown[]).length).toBeGreaterThanOrEqual(3);
  });

  it('holds the example runs with their real evaluations, and the same cost per resolved task', async () => {
    const q =
      'SELECT e.task_id, e.hard_success, e.primary_failure_reason_code, r.total_tokens, r.total_cost FROM eval_task_result e JOIN trace_run r USING (trace_id) ORDER BY r.trace_id';
    const a = (await server.query(q)).rows;
    expect(a).toEqual((await embedded.query(q)).rows);
    expect(a.length).toBeGreaterThanOrEqual(2);
    expect(a.some((r) => r.hard_success === false)).toBe(true);
    const c = 'SELECT * FROM cost_per_resolved_task ORDER BY task_id';
    expect((await server.query(c)).rows).toEqual((await embedded.query(c)).rows);
  });

  it('is idempotent on the server too', async () => {
    const before = await dumpTables(server);
    await ingestAll(server);
    expect(await dumpTables(server)).toEqual(before);
  });
});
