// Change capture on a recorded database: every row written to the captured tables, by any
// process (the agent, its tool API), is logged so the recorder can drain it per step; a write of
// the run's own sessions (application_name tapedeck-run-<hex>, PGAPPNAME) is marked as such.
//
// Nothing of it may outlive the recorder or get in the application's way:
// - The trigger function is a TEMPORARY function of the recorder's own session. When that session
//   ends — close(), or the server noticing a SIGKILLed recorder's connection drop — Postgres drops
//   the function and, with it, every trigger that calls it. No trigger outlives its recorder.
// - It is SECURITY DEFINER with a pinned search_path: an application role writing to a captured
//   table needs no privilege on tapedeck's objects, and cannot be made to run anything else.
// - The log is an UNLOGGED table in a schema of this run only (_tapedeck_cap_<8 hex>). The run
//   holds an advisory lock named by the same hex for as long as its session lives, so any later
//   tapedeck command can tell a dead run's schema from a live one and remove it (leftovers.ts).
// - Triggers are installed one table at a time with a short lock timeout (retried), so the
//   recorder never holds one table's lock while waiting for another's: it cannot deadlock with
//   the application.
import { randomBytes } from 'node:crypto';
import type { DbChangedPayload, DbSnapshot, Row } from '../recording/index.js';
import { TapedeckError } from '../recording/index.js';
import { connectDb } from './connect.js';
import { removeCaptureLeftovers } from './leftovers.js';
import {
  CAPTURE_LOCK_CLASS,
  CAPTURE_SCHEMA_PREFIX,
  CAPTURE_TRIGGER_PREFIX,
  lockKeyOf,
  RUN_APPLICATION_PREFIX,
  withLockRetry,
} from './locks.js';
import {
  describeTables,
  installNormalizer,
  snapshotDatabase,
  type TableDescription,
  textValuesSql,
  userSchemas,
} from './snapshot.js';
import { quoteIdent, quoteLiteral, redactDbUrl, tableRef } from './sql.js';

export interface DbTracker {
  readonly schemas: string[];
  /** The capture schema of this run (`_tapedeck_cap_<hex>`). */
  readonly captureSchema: string;
  /**
   * The application_name (`tapedeck-run-<hex>`) this run's own clients connect with (PGAPPNAME):
   * a write from a session named for another run is that run's, and this one does not log it.
   */
  readonly applicationName: string;
  /** Installs change capture (triggers) on every table of the schemas. */
  start(): Promise<void>;
  snapshot(): Promise<DbSnapshot>;
  /** Changes committed since the previous drain, in log order; those of the run's own sessions marked `own`. */
  drain(): Promise<DbChangedPayload[]>;
  /** Removes the triggers and the capture schema, and disconnects. Safe to call twice. */
  close(): Promise<void>;
}

export interface TrackerOptions {
  schemas?: string[];
  /** Called once the capture schema exists, before any trigger (e.g. to register it as a leftover). */
  onCaptureSchema?: (schema: string) => void | Promise<void>;
}

/**
 * Opens change capture on the database at `url`: dead runs' leftovers are removed first, then this
 * run takes its lock. Call start() to install the triggers, close() to remove everything.
 */
export async function createDbTracker(url: string, options: TrackerOptions = {}): Promise<DbTracker> {
  const client = await connectDb(url, {
    application: 'tapedeck capture',
    hint: 'Check --db (a postgres:// URL) and that the server runs.',
  });
  const hex = randomBytes(4).toString('hex');
  const cap = `${CAPTURE_SCHEMA_PREFIX}${hex}`;
  const trigger = `${CAPTURE_TRIGGER_PREFIX}${hex}`;
  const fn = `pg_temp.tapedeck_capture_${hex}`;
  const applicationName = `${RUN_APPLICATION_PREFIX}${hex}`;
  let schemas: string[];
  try {
    await removeCaptureLeftovers(client);
    await client.query('SELECT pg_advisory_lock($1, $2)', [CAPTURE_LOCK_CLASS, lockKeyOf(hex)]);
    if (options.schemas === undefined || options.schemas.length === 0) schemas = await userSchemas(client);
    else {
      const { rows } = await client.query<{ nspname: string }>(
        'SELECT nspname FROM pg_namespace WHERE nspname = ANY($1::text[])',
        [options.schemas],
      );
      const missing = options.schemas.filter((s) => !rows.some((r) => r.nspname === s));
      if (missing.length > 0) {
        throw new TapedeckError(
          'DB_SCHEMA_MISSING',
          `the database has no schema named ${missing.join(', ')} (--db-schema)`,
        );
      }
      schemas = [...options.schemas];
    }
  } catch (error) {
    await client.end().catch(() => {});
    throw error;
  }
  let tables: TableDescription[] = [];
  const triggered: TableDescription[] = [];
  let started = false;
  let closed = false;
  let normalized = false;

  const keyOf = (table: TableDescription | undefined, row: Row): Row => {
    const cols = table && table.primaryKey.length > 0 ? table.primaryKey : Object.keys(row).sort();
    const key: Row = {};
    for (const c of cols) key[c] = row[c] ?? null;
    return key;
  };

  async function removeTriggers(): Promise<void> {
    for (const t of triggered.splice(0)) {
      await withLockRetry(
        client,
        `DROP TRIGGER IF EXISTS ${quoteIdent(trigger)} ON ${tableRef(t.schema, t.name)}`,
      ).catch(() => {});
    }
  }

  return {
    schemas,
    captureSchema: cap,
    applicationName,
    async start() {
      if (started) return;
      try {
        await client.query(`CREATE SCHEMA ${quoteIdent(cap)}`);
      } catch (cause) {
        throw new TapedeckError(
          'DB_CAPTURE_FAILED',
          `cannot set up change capture on ${redactDbUrl(url)}: ${(cause as Error).message}. The --db role needs CREATE on the database and TRIGGER on the captured tables.`,
          { cause },
        );
      }
      await options.onCaptureSchema?.(cap);
      await client.query(
        `CREATE UNLOGGED TABLE ${quoteIdent(cap)}.log (id bigserial PRIMARY KEY, s text NOT NULL, t text NOT NULL,
           op text NOT NULL, old_row jsonb, new_row jsonb, own boolean NOT NULL DEFAULT false)`,
      );
      const log = quoteLiteral(`${quoteIdent(cap)}.log`);
      await client.query(
        `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
           SET search_path = pg_catalog, pg_temp AS $$
         DECLARE app text := current_setting('application_name'); o jsonb; n jsonb; t jsonb;
         BEGIN
           -- Another recording's agent: its row, not ours (parallel runs on one database).
           IF app LIKE ${quoteLiteral(`${RUN_APPLICATION_PREFIX}%`)} AND app NOT LIKE ${quoteLiteral(`${applicationName}%`)} THEN
             RETURN NULL;
           END IF;
           IF to_regclass(${log}) IS NOT NULL THEN
             IF TG_OP <> 'INSERT' THEN o := to_jsonb(OLD); END IF;
             IF TG_OP <> 'DELETE' THEN n := to_jsonb(NEW); END IF;
             -- The values the snapshot holds as their text (json, jsonb): the table's query, given
             -- as the trigger's argument by the recorder (textValuesSql), reads them off the row.
             IF TG_NARGS > 0 THEN
               IF o IS NOT NULL THEN EXECUTE TG_ARGV[0] INTO t USING OLD; o := o || t; END IF;
               IF n IS NOT NULL THEN EXECUTE TG_ARGV[0] INTO t USING NEW; n := n || t; END IF;
             END IF;
             -- This run's own sessions (the agent's tree): a replay runs those writes again itself.
             INSERT INTO ${quoteIdent(cap)}.log (s, t, op, old_row, new_row, own) VALUES (TG_TABLE_SCHEMA, TG_TABLE_NAME,
               lower(TG_OP), o, n, app LIKE ${quoteLiteral(`${applicationName}%`)});
           END IF;
           RETURN NULL;
         END $$`,
      );
      // It runs its trigger's argument as its owner: no other role may put it on a table (its temp
      // schema is closed to them already; this says so of the function itself too).
      await client.query(`REVOKE ALL ON FUNCTION ${fn}() FROM PUBLIC`);
      tables = await describeTables(client, schemas);
      try {
        for (const t of tables) {
          const texts = textValuesSql(t.columns, '($1)');
          await withLockRetry(
            client,
            `CREATE TRIGGER ${quoteIdent(trigger)} AFTER INSERT OR UPDATE OR DELETE ON ${tableRef(t.schema, t.name)}
               FOR EACH ROW EXECUTE FUNCTION ${fn}(${texts === undefined ? '' : quoteLiteral(`SELECT ${texts}`)})`,
          );
          triggered.push(t);
        }
      } catch (cause) {
        await removeTriggers();
        throw new TapedeckError(
          'DB_CAPTURE_FAILED',
          `cannot install change capture on ${redactDbUrl(url)}: ${(cause as Error).message}`,
          { cause },
        );
      }
      started = true;
    },
    async snapshot() {
      const {
        snapshot,
        tables: described,
        inside,
      } = await snapshotDatabase(client, schemas, async () =>
        started
          ? (await client.query<{ id: string }>(`SELECT id::text FROM ${quoteIdent(cap)}.log`)).rows.map((r) => r.id)
          : [],
      );
      if (!started) tables = described;
      normalized = true;
      // Changes committed before the snapshot was taken are in it already.
      if (inside && inside.length > 0) {
        await client.query(`DELETE FROM ${quoteIdent(cap)}.log WHERE id = ANY($1::bigint[])`, [inside]);
      }
      return snapshot;
    },
    async drain() {
      if (!started) return [];
      if (!normalized) {
        await installNormalizer(client, tables);
        normalized = true;
      }
      const { rows } = await client.query<{
        s: string;
        t: string;
        op: string;
        b: Row | null;
        a: Row | null;
        own: boolean;
      }>(
        `WITH d AS (DELETE FROM ${quoteIdent(cap)}.log RETURNING *)
         SELECT id, s, t, op, pg_temp.tapedeck_norm(s, t, old_row) AS b, pg_temp.tapedeck_norm(s, t, new_row) AS a, own
           FROM d ORDER BY id`,
      );
      return rows.map((r) => {
        const table = tables.find((t) => t.schema === r.s && t.name === r.t);
        const op = r.op as DbChangedPayload['op'];
        return {
          schema: r.s,
          table: r.t,
          op,
          key: keyOf(table, (op === 'insert' ? r.a : (r.b ?? r.a)) ?? {}),
          ...(r.b === null ? {} : { before: r.b }),
          ...(r.a === null ? {} : { after: r.a }),
          ...(r.own ? { own: true as const } : {}),
        };
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await removeTriggers();
        await client.query(`DROP FUNCTION IF EXISTS ${fn}() CASCADE`).catch(() => {});
        await client.query(`DROP SCHEMA IF EXISTS ${quoteIdent(cap)} CASCADE`).catch(() => {});
        await client.query('SELECT pg_advisory_unlock_all()').catch(() => {});
      } finally {
        await client.end().catch(() => {});
      }
    },
  };
}
