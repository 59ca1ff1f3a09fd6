// Test helpers for the warehouse: a throwaway database on the real server, and table dumps.
import pg from 'pg';
import type { Warehouse } from '../../src/store/index.js';

export const PG_URL = process.env.TAPEDECK_PG_URL;

/** Creates a uniquely named database on the TAPEDECK_PG_URL server; returns its URL and a dropper. */
export async function createTestDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!PG_URL) throw new Error('TAPEDECK_PG_URL is not set');
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export const TABLES = [
  'trace_run',
  'trace_step',
  'trace_context_breakdown',
  'trace_tool_event',
  'trace_price_snapshot',
  'eval_task_result',
  'eval_validator_result',
  'eval_state_result',
] as const;

/** Every row of every seed table, in a stable order. */
export async function dumpTables(wh: Warehouse): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const r = await wh.query(
      `SELECT * FROM ${table} ORDER BY ${table === 'eval_validator_result' || table.startsWith('eval') ? 'eval_id' : 'trace_id'}, 2, 3, 4`,
    );
    out[table] = r.rows;
  }
  return out;
}
