// The shop agent (test/record/fixtures/observed-agent.mjs) under a changed behaviour, for replays
// seeded from a development snapshot: before its recorded work it reads rows the recorded run
// never touched (item 12, customer 9) beside rows it did (item 11, item 4321, customer 7).
import pg from 'pg';
import { runShopAgent } from '../record/fixtures/observed-agent.mjs';

// runInput()'s work, without importing tapedeck: the run starts here.
globalThis[Symbol.for('tapedeck.recorder')]?.runStarts?.();
const input = JSON.parse(process.env.TAPEDECK_RUN_INPUT ?? '{}');
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL });
const rows = async (sql, params) => (await pool.query(sql, params)).rows;
const seen = {
  items: await rows('SELECT id, sku, qty, price FROM shop.items WHERE id = ANY($1::bigint[]) ORDER BY id', [
    [11, 12, 4321],
  ]),
  customers: await rows('SELECT id, name FROM shop.customers WHERE id = ANY($1::int[]) ORDER BY id', [[7, 9]]),
};
const out = await runShopAgent(pool, input);
await pool.end();
process.stdout.write(`${JSON.stringify({ explore: seen, out })}\n`);
