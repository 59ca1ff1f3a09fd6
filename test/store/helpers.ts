// Test helpers for the warehouse: a throwaway database on the real server, and table dumps.
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

/** Every file of a folder with its bytes (base64), by relative path: two folders compare byte for byte. */
export function filesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[path.slice(dir.length + 1)] = readFileSync(path).toString('base64');
  }
  return out;
}

/** A copy of a recording in `tmp` with another manifest id (a different recording). */
export function copyWithId(source: string, tmp: string, id: string): string {
  const dir = join(tmp, id);
  cpSync(source, dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { id: string };
  manifest.id = id;
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return dir;
}
