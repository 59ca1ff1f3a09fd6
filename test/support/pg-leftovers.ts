// What tapedeck left on the test server, as pg_catalog shows it: sandbox databases and roles no
// live replay holds, and capture schemas and triggers. Other tests (and engineers) share the
// server, so a sandbox a live run holds (its advisory lock) is not a leftover.
import type pg from 'pg';
import { lockKeyOf, SANDBOX_LOCK_CLASS } from '../../src/postgres/index.js';

/** Sandbox databases and roles (tapedeck_sbx_<8 hex>) that no live replay holds. */
export async function deadSandboxes(admin: pg.Client): Promise<string[]> {
  const { rows: held } = await admin.query<{ key: string }>(
    `SELECT objid::bigint::text AS key FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::bigint::oid AND objsubid = 2 AND granted`,
    [SANDBOX_LOCK_CLASS],
  );
  const live = new Set(held.map((r) => Number(r.key) | 0));
  const { rows } = await admin.query<{ name: string }>(
    `SELECT datname AS name FROM pg_database WHERE datname ~ '^tapedeck_sbx_[0-9a-f]{8}$'
     UNION SELECT rolname FROM pg_roles WHERE rolname ~ '^tapedeck_sbx_[0-9a-f]{8}$'`,
  );
  return rows
    .map((r) => r.name)
    .filter((name) => !live.has(lockKeyOf(name.slice('tapedeck_sbx_'.length))))
    .sort();
}

/** Every tapedeck object in the database `client` is connected to: capture schemas, triggers, functions. */
export async function captureObjects(client: pg.Client | pg.Pool): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT 'schema ' || nspname AS name FROM pg_namespace WHERE nspname LIKE '\\_tapedeck\\_%'
     UNION ALL SELECT 'trigger ' || tgname FROM pg_trigger WHERE tgname LIKE '%tapedeck%'
     UNION ALL SELECT 'function ' || proname FROM pg_proc WHERE proname LIKE '%tapedeck%'`,
  );
  return rows.map((r) => r.name).sort();
}
