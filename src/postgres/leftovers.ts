// Finding and removing what a killed tapedeck left on a Postgres server: capture schemas and
// triggers of dead recorder runs (in one database), and sandbox databases and roles of dead
// replays (on the server). A run is alive exactly while its session holds its advisory lock, so
// this is safe to run next to live recordings and replays, from any machine.
import type pg from 'pg';
import { CAPTURE_LOCK_CLASS, CAPTURE_SCHEMA_PREFIX, lockKeyOf, SANDBOX_LOCK_CLASS, withLockRetry } from './locks.js';
import { quoteIdent, tableRef } from './sql.js';

// Older versions made tapedeck_tpl_/sbx_<10 hex> databases and _tapedeck_<id> schemas, with no lock.
const NEW_SANDBOX = /^tapedeck_sbx_([0-9a-f]{8})$/;
const OLD_SANDBOX = /^tapedeck_(?:tpl|sbx)_[0-9a-f]{10}$/;
const NEW_CAPTURE = /^_tapedeck_cap_([0-9a-f]{8})$/;
const NEW_TRIGGER = /^zz_tapedeck_([0-9a-f]{8})$/;

export interface LeftoverReport {
  /** What was removed (`schema x`, `trigger t on s.t`, `database d`, `role r`). */
  removed: string[];
  /** What is left because a live run holds it. */
  live: string[];
  /** What could not be removed, and why. */
  failed: string[];
}

const emptyReport = (): LeftoverReport => ({ removed: [], live: [], failed: [] });

async function heldKeys(client: pg.Client, lockClass: number, anyDatabase: boolean): Promise<Set<number>> {
  const { rows } = await client.query<{ key: string }>(
    `SELECT objid::bigint::text AS key FROM pg_locks
      WHERE locktype = 'advisory' AND classid = $1::bigint::oid AND objsubid = 2 AND granted
        ${anyDatabase ? '' : 'AND database = (SELECT oid FROM pg_database WHERE datname = current_database())'}`,
    [lockClass],
  );
  return new Set(rows.map((r) => Number(r.key) | 0));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Ends the sessions that still hold the locks of runs known to be dead (their process is gone,
 * the server has not noticed yet), and waits up to 5 s for the locks to go.
 */
async function releaseDeadLocks(client: pg.Client, lockClass: number, hexes: readonly string[]): Promise<void> {
  const keys = new Set(hexes.filter((h) => /^[0-9a-f]{8}$/.test(h)).map(lockKeyOf));
  if (keys.size === 0) return;
  const holders = async () => {
    const { rows } = await client.query<{ pid: number; key: string }>(
      `SELECT pid, objid::bigint::text AS key FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::bigint::oid
          AND objsubid = 2 AND granted AND pid <> pg_backend_pid()`,
      [lockClass],
    );
    return rows.filter((r) => keys.has(Number(r.key) | 0)).map((r) => r.pid);
  };
  const pids = await holders();
  if (pids.length === 0) return;
  await client.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) pid', [pids]).catch(() => {});
  for (let wait = 0; wait < 50 && (await holders()).length > 0; wait++) await sleep(100);
}

/**
 * Removes the capture triggers and schemas of recorder runs that are gone, in the database
 * `client` is connected to. Schemas of an older tapedeck (`_tapedeck_<id>`, no lock) count as gone.
 * `dead`: capture schemas of runs whose process is known to be gone (the leftover register):
 * a session of theirs the server still keeps is ended first.
 */
export async function removeCaptureLeftovers(
  client: pg.Client,
  options: { dead?: readonly string[] } = {},
): Promise<LeftoverReport> {
  const report = emptyReport();
  const deadHexes = (options.dead ?? []).map((s) => NEW_CAPTURE.exec(s)?.[1]).filter((h) => h !== undefined);
  await releaseDeadLocks(client, CAPTURE_LOCK_CLASS, deadHexes);
  const { rows: schemas } = await client.query<{ name: string }>(
    `SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE '\\_tapedeck\\_%' ORDER BY 1`,
  );
  const { rows: triggers } = await client.query<{ name: string; schema: string; table: string }>(
    `SELECT t.tgname AS name, n.nspname AS schema, c.relname AS table FROM pg_trigger t
       JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE NOT t.tgisinternal AND t.tgname LIKE 'zz\\_tapedeck\\_%' ORDER BY 1, 2, 3`,
  );
  if (schemas.length === 0 && triggers.length === 0) return report;
  const live = await heldKeys(client, CAPTURE_LOCK_CLASS, false);
  const isLive = (name: string, pattern: RegExp) => {
    const m = pattern.exec(name);
    return m !== null && live.has(lockKeyOf(m[1] as string));
  };
  // Triggers first (each on its own, waiting politely for the application), then their schemas.
  for (const t of triggers) {
    const what = `trigger ${t.name} on ${t.schema}.${t.table}`;
    if (isLive(t.name, NEW_TRIGGER)) {
      report.live.push(what);
      continue;
    }
    try {
      await withLockRetry(client, `DROP TRIGGER IF EXISTS ${quoteIdent(t.name)} ON ${tableRef(t.schema, t.table)}`);
      report.removed.push(what);
    } catch (error) {
      report.failed.push(`${what}: ${(error as Error).message}`);
    }
  }
  for (const { name } of schemas) {
    if (!name.startsWith(CAPTURE_SCHEMA_PREFIX) && !name.startsWith('_tapedeck_')) continue;
    if (isLive(name, NEW_CAPTURE)) {
      report.live.push(`schema ${name}`);
      continue;
    }
    try {
      await withLockRetry(client, `DROP SCHEMA IF EXISTS ${quoteIdent(name)} CASCADE`);
      report.removed.push(`schema ${name}`);
    } catch (error) {
      report.failed.push(`schema ${name}: ${(error as Error).message}`);
    }
  }
  return report;
}

/**
 * Removes the sandbox databases and roles of replays that are gone, on the server `client` is
 * connected to. An older tapedeck's sandbox (no lock) counts as gone when no one is connected to it.
 */
export async function removeSandboxLeftovers(client: pg.Client, only?: string[]): Promise<LeftoverReport> {
  const report = emptyReport();
  const { rows: databases } = await client.query<{ name: string; connected: number }>(
    `SELECT d.datname AS name, (SELECT count(*)::int FROM pg_stat_activity a WHERE a.datname = d.datname) AS connected
       FROM pg_database d WHERE d.datname LIKE 'tapedeck\\_%' ORDER BY 1`,
  );
  const { rows: roles } = await client.query<{ name: string }>(
    `SELECT rolname AS name FROM pg_roles WHERE rolname LIKE 'tapedeck\\_sbx\\_%' ORDER BY 1`,
  );
  const wanted = (name: string) => only === undefined || only.includes(name);
  // Named ones are known dead (the leftover register): a session of theirs the server still keeps is ended.
  if (only !== undefined) {
    const hexes = only.map((n) => NEW_SANDBOX.exec(n)?.[1]).filter((h) => h !== undefined);
    await releaseDeadLocks(client, SANDBOX_LOCK_CLASS, hexes);
  }
  const live = await heldKeys(client, SANDBOX_LOCK_CLASS, true);
  const isLive = (name: string) => {
    const m = NEW_SANDBOX.exec(name);
    return m !== null && live.has(lockKeyOf(m[1] as string));
  };
  for (const db of databases) {
    if (!wanted(db.name) || !(NEW_SANDBOX.test(db.name) || OLD_SANDBOX.test(db.name))) continue;
    if (isLive(db.name) || (OLD_SANDBOX.test(db.name) && db.connected > 0)) {
      report.live.push(`database ${db.name}`);
      continue;
    }
    try {
      await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(db.name)} WITH (FORCE)`);
      report.removed.push(`database ${db.name}`);
    } catch (error) {
      report.failed.push(`database ${db.name}: ${(error as Error).message}`);
    }
  }
  for (const role of roles) {
    if (!wanted(role.name) || !NEW_SANDBOX.test(role.name) || isLive(role.name)) continue;
    if (databases.some((d) => d.name === role.name) && !report.removed.includes(`database ${role.name}`)) continue;
    try {
      await client.query(`DROP ROLE IF EXISTS ${quoteIdent(role.name)}`);
      report.removed.push(`role ${role.name}`);
    } catch (error) {
      report.failed.push(`role ${role.name}: ${(error as Error).message}`);
    }
  }
  return report;
}
