// Observed world capture on a real Postgres server: the run's own statements (keyed reads, an
// update without RETURNING, an insert with RETURNING, a rolled-back and a committed
// transaction, a prepared statement, an upsert, a delete) become exactly its db.changed events;
// the agent sees the results it would see without tapedeck; the pre-world holds the rows it
// touched (and the customer its order references), the post-world equals the real database's
// rows; nothing is created in the database; and the recording replays exactly in a sandbox.
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record } from '../../src/record/index.js';
import { type DbChangedPayload, readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { runShopAgent, SHOP_DDL } from './fixtures/observed-agent.mjs';
import { FIXTURES, scratchDatabase, tempDir } from './helpers.js';

const ADMIN = process.env.TAPEDECK_PG_URL;
const tmp = tempDir();
let url: string;

const SCHEMA = `${SHOP_DDL}
INSERT INTO shop.customers SELECT g, 'customer ' || g FROM generate_series(1, 200) g;
INSERT INTO shop.items (sku, qty, price) SELECT 'SKU-' || g, 100, (g % 50) + 0.99 FROM generate_series(1, 5000) g;
INSERT INTO shop.notes (customer_id, body) SELECT g % 200 + 1, 'note ' || g FROM generate_series(1, 400) g;
`;

/** The rows of a table as the snapshot format has them, read by the test itself. */
async function rowsOf(client: pg.Client, table: string, where: string): Promise<unknown[]> {
  const { rows } = await client.query(`SELECT to_jsonb(t) AS r FROM ${table} t WHERE ${where} ORDER BY 1`);
  return rows.map((r) => r.r);
}

let db: Awaited<ReturnType<typeof scratchDatabase>> | undefined;

beforeAll(async () => {
  if (!ADMIN) return;
  db = await scratchDatabase(ADMIN, 'tdprod_obs_', SCHEMA);
  url = db.url;
});

afterAll(async () => {
  await db?.drop();
  tmp.remove();
});

describe.skipIf(!ADMIN)('observed world capture (pg)', () => {
  it('records exactly the run’s own changes and the rows it touched, leaves the agent’s results as they were, and replays', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 3 });
    // pool.end() resolves before its clients' sockets close: the database's drop (WITH FORCE) may
    // still reach one as an error, which a pool without a listener throws.
    pool.on('error', () => {});
    const input = { customer: 7, items: [11, 4321] };
    // The same agent without recording, on another customer: what it sees is what it must see recorded.
    const plain = await runShopAgent(pool, { customer: 8, items: [12, 4322] });
    const out = path.join(tmp.dir, 'rec');
    const run = await record(
      { out, name: 'shop', input, command: [process.execPath, path.join(FIXTURES, 'observed-agent.mjs')] },
      () => runShopAgent(pool, input),
    );
    const seen = run.result;
    expect(seen.update).toEqual(plain.update);
    expect(seen.update).toMatchObject({ rowCount: 1, rows: [], fields: 0 });
    expect(seen.order.fields).toEqual(['id', 'qty']);
    expect(Object.keys(seen.upsert[0] ?? {})).toEqual(['id', 'name']);
    expect(seen.read.map((r) => r.id)).toEqual(['11', '4321']);

    const recording = await readRecording(run.dir);
    expect(recording.manifest.world?.db).toMatchObject({ mode: 'observed', schemas: ['shop'], env: 'DATABASE_URL' });
    const changes = recording.events.filter((e) => e.type === 'db.changed').map((e) => e.payload as DbChangedPayload);
    const orderId = seen.order.rows[0]?.id ?? -1;
    expect(changes.map((c) => `${c.op} ${c.table} ${JSON.stringify(c.key)}`)).toEqual([
      'update items {"id":"11"}',
      `insert orders {"id":${orderId}}`,
      'update items {"id":"4321"}',
      // audit has no primary key: its key is the whole row
      'insert audit {"n":7,"what":"restock"}',
      'update customers {"id":7}',
      ...changes.filter((c) => c.op === 'delete').map((c) => `delete notes ${JSON.stringify(c.key)}`),
    ]);
    expect(changes.filter((c) => c.op === 'delete')).toHaveLength(2);
    expect(changes[0]).toMatchObject({
      before: { id: '11', qty: 100, price: '11.99', updated: null },
      after: { id: '11', qty: 99, updated: '2026-11-26T12:00:07.000000Z' },
    });
    expect(changes[2]).toMatchObject({ before: { qty: 100 }, after: { qty: 105 } });
    expect(changes[4]).toMatchObject({ before: { name: 'customer 7' }, after: { name: 'customer 7 (renamed)' } });

    // Pre: the rows it touched as they were; the customer its order references; nothing else.
    const pre = new Map(recording.pre.db?.tables.map((t) => [t.name, t.rows]));
    expect(pre.get('items')?.map((r) => r.id)).toEqual(['11', '4321']);
    expect(pre.get('customers')).toEqual([{ id: 7, name: 'customer 7' }]);
    expect(pre.get('orders')).toEqual([]);
    expect(pre.get('notes')).toHaveLength(2);
    // Post: equal to the real database's rows for those keys.
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    const post = new Map(recording.post.db?.tables.map((t) => [t.name, t.rows]));
    expect(post.get('notes')).toEqual([]);
    expect(post.get('orders')).toEqual([
      expect.objectContaining({ id: orderId, customer_id: 7, item_id: '11', note: '{"n": 7, "via": "agent"}' }),
    ]);
    expect((post.get('items') ?? []).map((r) => [r.id, r.qty])).toEqual(
      (await rowsOf(check, 'shop.items', 'id IN (11, 4321)')).map((r) => [
        String((r as { id: number }).id),
        (r as { qty: number }).qty,
      ]),
    );
    // The order's sequence position: where this run drew its id.
    const seq = recording.pre.db?.sequences?.find((s) => s.ownedBy?.table === 'orders');
    expect(Number(seq?.last)).toBe(orderId - 1);
    // Nothing tapedeck-made in the database.
    const objects = await check.query(
      `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast', 'shop')
           OR c.relname ILIKE '%tapedeck%'
        UNION ALL SELECT n.nspname, p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
        UNION ALL SELECT 'trigger', tgname FROM pg_trigger WHERE NOT tgisinternal`,
    );
    expect(objects.rows).toEqual([]);
    await check.end();
    await pool.end();

    const replayed = await replay({
      recording: run.dir,
      mode: 'exact',
      out: path.join(tmp.dir, 'replay'),
      stdio: 'pipe',
    });
    expect(replayed.divergences).toEqual([]);
    expect(replayed.worldDiff).toEqual([]);
    expect(JSON.parse(replayed.output?.stdout ?? '{}')).toEqual(JSON.parse(JSON.stringify(seen)));
  });
});
