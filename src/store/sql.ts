// One small SQL interface over the two backends: embedded PGlite (a local folder) and a
// Postgres server (pg). Both parse values the same way so queries give identical results.
import { mkdirSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import type pg from 'pg';

export interface QueryResult {
  fields: string[];
  rows: Array<Record<string, unknown>>;
}

export interface SqlSession {
  query(sql: string, params?: unknown[]): Promise<QueryResult>;
}

export interface SqlClient extends SqlSession {
  readonly kind: 'pglite' | 'postgres';
  /** Runs one or more statements without parameters; returns the last statement's result. */
  exec(sql: string): Promise<QueryResult>;
  transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const OID = { INT8: 20, DATE: 1082, TIMESTAMP: 1114, TIMESTAMPTZ: 1184 } as const;

/** int8 as a number when it fits (count(*) and sums), else as its exact text. */
function parseInt8(text: string): number | string {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

/** TIMESTAMP (no zone) as ISO text in UTC, the way it was stored. */
function parseTimestamp(text: string): string {
  if (text === 'infinity' || text === '-infinity') return text;
  return `${text.replace(' ', 'T')}Z`;
}

function parseTimestamptz(text: string): string {
  const iso = text.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00');
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? text : new Date(ms).toISOString();
}

const identity = (text: string): string => text;

function normalizeValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  return value;
}

function normalizeRows(rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  for (const row of rows) {
    for (const key of Object.keys(row)) row[key] = normalizeValue(row[key]);
  }
  return rows;
}

export async function openPglite(dir: string | undefined): Promise<SqlClient> {
  if (dir !== undefined) mkdirSync(dir, { recursive: true });
  // Loaded here, not at the top: only commands that open a warehouse pay for PGlite.
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create({
    ...(dir === undefined ? {} : { dataDir: dir }),
    parsers: {
      [OID.INT8]: parseInt8,
      [OID.DATE]: identity,
      [OID.TIMESTAMP]: parseTimestamp,
      [OID.TIMESTAMPTZ]: parseTimestamptz,
    },
  });
  await db.exec(`SET TIME ZONE 'UTC'`);
  type PgliteLike = { query: PGlite['query'] };
  const session = (q: PgliteLike): SqlSession => ({
    async query(sql, params) {
      const r = await q.query<Record<string, unknown>>(sql, params);
      return { fields: r.fields.map((f) => f.name), rows: normalizeRows(r.rows) };
    },
  });
  return {
    kind: 'pglite',
    ...session(db),
    async exec(sql) {
      const results = await db.exec(sql);
      const last = results.at(-1);
      return last
        ? { fields: last.fields.map((f) => f.name), rows: normalizeRows(last.rows as Array<Record<string, unknown>>) }
        : { fields: [], rows: [] };
    },
    transaction: (fn) => db.transaction((tx) => fn(session(tx))),
    close: () => db.close(),
  };
}

export async function openPostgres(url: string): Promise<SqlClient> {
  const pg = (await import('pg')).default;
  const types = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === OID.INT8) return parseInt8;
      if (oid === OID.DATE) return identity;
      if (oid === OID.TIMESTAMP) return parseTimestamp;
      if (oid === OID.TIMESTAMPTZ) return parseTimestamptz;
      return pg.types.getTypeParser(oid, format ?? 'text');
    },
  };
  const pool = new pg.Pool({ connectionString: url, types, max: 4, options: '-c TimeZone=UTC' });
  pool.on('error', () => {
    // An idle client lost its connection; the next query gets a fresh one.
  });
  const toResult = (r: pg.QueryResult): QueryResult => ({
    fields: (r.fields ?? []).map((f) => f.name),
    rows: normalizeRows((r.rows ?? []) as Array<Record<string, unknown>>),
  });
  const session = (q: { query: pg.Pool['query'] }): SqlSession => ({
    async query(sql, params) {
      return toResult(await q.query(sql, params as unknown[]));
    },
  });
  return {
    kind: 'postgres',
    ...session(pool),
    async exec(sql) {
      const r = (await pool.query(sql)) as pg.QueryResult | pg.QueryResult[];
      const last = Array.isArray(r) ? r.at(-1) : r;
      return last ? toResult(last) : { fields: [], rows: [] };
    },
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = await fn(session(client));
        await client.query('COMMIT');
        return out;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
