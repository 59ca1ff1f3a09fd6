// Postgres world capture through pg: snapshots of the named schemas (re-runnable DDL + rows by
// primary key as JSON) and trigger-based change capture into a tapedeck-owned schema, so that
// changes made by ANY process (e.g. the tool API) are seen and can be drained per step.
// Values: bigint/numeric as strings, timestamptz as UTC ISO strings, everything else as to_jsonb gives it.
import pg from 'pg';
import { TapedeckError } from '../../recording/errors.js';
import { sortRows } from '../../recording/index.js';
import type { DbChangedPayload, DbSnapshot, DbTable, Row } from '../../recording/types.js';

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;
const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;

interface TableInfo {
  schema: string;
  name: string;
  columns: Array<{ name: string; type: string; nullable: boolean; default: string | null; identity: string }>;
  primaryKey: string[];
  constraints: Array<{ name: string; type: string; def: string }>;
  indexes: string[];
  deps: string[];
}

export interface DbTracker {
  readonly schemas: string[];
  /** Installs change capture (triggers) on every table of the schemas. */
  start(): Promise<void>;
  snapshot(): Promise<DbSnapshot>;
  /** Changes committed since the previous drain, in commit order. */
  drain(): Promise<DbChangedPayload[]>;
  /** Removes the triggers and the capture schema, and disconnects. Safe to call twice. */
  close(): Promise<void>;
}

/** The URL without credentials, for the manifest. */
export function redactDbUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = u.username ? '***' : '';
    u.password = '';
    return u.toString();
  } catch {
    return 'postgres://(unparseable url)';
  }
}

export async function createDbTracker(url: string, options: { schemas?: string[]; id: string }): Promise<DbTracker> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (cause) {
    throw new TapedeckError(
      'DB_UNREACHABLE',
      `cannot connect to the database ${redactDbUrl(url)}: ${(cause as Error).message}. Check --db (a postgres:// URL) and that the server runs.`,
      { cause },
    );
  }
  client.on('error', () => {});
  const cap = q(`_tapedeck_${options.id.replace(/[^a-zA-Z0-9_]/g, '_').slice(0, 40)}`);
  let schemas = options.schemas ?? [];
  if (schemas.length === 0) {
    const { rows } = await client.query<{ nspname: string }>(
      `SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'
         AND nspname NOT LIKE '\\_tapedeck\\_%' ORDER BY nspname`,
    );
    schemas = rows.map((r) => r.nspname);
  } else {
    const { rows } = await client.query<{ nspname: string }>(
      'SELECT nspname FROM pg_namespace WHERE nspname = ANY($1::text[])',
      [schemas],
    );
    const missing = schemas.filter((s) => !rows.some((r) => r.nspname === s));
    if (missing.length > 0) {
      await client.end().catch(() => {});
      throw new TapedeckError(
        'DB_SCHEMA_MISSING',
        `the database has no schema named ${missing.join(', ')} (--db-schema)`,
      );
    }
  }
  let tables: TableInfo[] = [];
  let started = false;
  let closed = false;

  async function loadTables(): Promise<TableInfo[]> {
    const { rows } = await client.query<{ schema: string; name: string; oid: number }>(
      `SELECT n.nspname AS schema, c.relname AS name, c.oid::int AS oid FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r','p') AND n.nspname = ANY($1::text[]) AND NOT c.relispartition
        ORDER BY n.nspname, c.relname`,
      [schemas],
    );
    const out: TableInfo[] = [];
    for (const t of rows) {
      const cols = await client.query<{
        name: string;
        type: string;
        notnull: boolean;
        def: string | null;
        identity: string;
      }>(
        `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
                pg_get_expr(d.adbin, d.adrelid) AS def, a.attidentity::text AS identity
           FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
        [t.oid],
      );
      const pk = await client.query<{ name: string }>(
        `SELECT a.attname AS name FROM pg_index i
           JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
          WHERE i.indrelid = $1 AND i.indisprimary ORDER BY k.ord`,
        [t.oid],
      );
      const cons = await client.query<{ name: string; type: string; def: string; ref: string | null }>(
        `SELECT c.conname AS name, c.contype::text AS type, pg_get_constraintdef(c.oid) AS def,
                CASE WHEN c.contype = 'f' THEN rn.nspname || '.' || rc.relname END AS ref
           FROM pg_constraint c LEFT JOIN pg_class rc ON rc.oid = c.confrelid
           LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace
          WHERE c.conrelid = $1 AND c.contype IN ('p','u','c','f') ORDER BY c.contype, c.conname`,
        [t.oid],
      );
      const idx = await client.query<{ def: string }>(
        `SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
          WHERE i.indrelid = $1 AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
          ORDER BY 1`,
        [t.oid],
      );
      out.push({
        schema: t.schema,
        name: t.name,
        columns: cols.rows.map((c) => ({
          name: c.name,
          type: c.type,
          nullable: !c.notnull,
          default: c.def,
          identity: c.identity,
        })),
        primaryKey: pk.rows.map((r) => r.name),
        constraints: cons.rows.map((c) => ({ name: c.name, type: c.type, def: c.def })),
        indexes: idx.rows.map((r) => r.def),
        deps: cons.rows.filter((c) => c.type === 'f' && c.ref !== null).map((c) => c.ref!),
      });
    }
    // Referenced tables first, so rows can be inserted in order.
    const byKey = new Map(out.map((t) => [`${t.schema}.${t.name}`, t]));
    const ordered: TableInfo[] = [];
    const seen = new Set<string>();
    const visit = (t: TableInfo) => {
      const key = `${t.schema}.${t.name}`;
      if (seen.has(key)) return;
      seen.add(key);
      for (const dep of t.deps) {
        const d = byKey.get(dep);
        if (d !== undefined) visit(d);
      }
      ordered.push(t);
    };
    out.forEach(visit);
    return ordered;
  }

  function ddlOf(list: TableInfo[], sequences: Array<{ schema: string; name: string }>): string[] {
    const ddl: string[] = schemas.map((s) => `CREATE SCHEMA IF NOT EXISTS ${q(s)}`);
    for (const s of sequences) ddl.push(`CREATE SEQUENCE IF NOT EXISTS ${q(s.schema)}.${q(s.name)}`);
    const trailing: string[] = [];
    for (const t of list) {
      const full = `${q(t.schema)}.${q(t.name)}`;
      const parts = t.columns.map((c) => {
        let col = `${q(c.name)} ${c.type}`;
        if (c.identity === 'a' || c.identity === 'd') col += ' GENERATED BY DEFAULT AS IDENTITY';
        else if (c.default !== null) col += ` DEFAULT ${c.default}`;
        if (!c.nullable) col += ' NOT NULL';
        return col;
      });
      for (const c of t.constraints) {
        if (c.type === 'f') trailing.push(`ALTER TABLE ${full} ADD CONSTRAINT ${q(c.name)} ${c.def}`);
        else parts.push(`CONSTRAINT ${q(c.name)} ${c.def}`);
      }
      ddl.push(`CREATE TABLE ${full} (${parts.join(', ')})`);
      for (const index of t.indexes) ddl.push(index);
      // Sequence positions follow the data, so the same DDL is valid before and after the run.
      for (const c of t.columns) {
        const owned = c.identity === 'a' || c.identity === 'd' || /^nextval\(/.test(c.default ?? '');
        if (owned && /int|serial/i.test(c.type)) {
          trailing.push(
            `SELECT setval(pg_get_serial_sequence(${lit(full)}, ${lit(c.name)}), coalesce(max(${q(c.name)}), 0) + 1, false) FROM ${full}`,
          );
        }
      }
    }
    return [...ddl, ...trailing];
  }

  async function ensureHelpers(): Promise<void> {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${cap}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${cap}.log (id bigserial PRIMARY KEY, s text NOT NULL, t text NOT NULL,
         op text NOT NULL, old_row jsonb, new_row jsonb)`,
    );
    await client.query(`CREATE TABLE IF NOT EXISTS ${cap}.cols (s text, t text, col text, kind text)`);
    await client.query(`DELETE FROM ${cap}.cols`);
    for (const t of tables) {
      for (const c of t.columns) {
        const kind = /^(bigint|numeric|decimal|money)/.test(c.type)
          ? 'num'
          : c.type === 'timestamp with time zone'
            ? 'tstz'
            : null;
        if (kind !== null) {
          await client.query(`INSERT INTO ${cap}.cols VALUES ($1, $2, $3, $4)`, [t.schema, t.name, c.name, kind]);
        }
      }
    }
    await client.query(
      `CREATE OR REPLACE FUNCTION ${cap}.norm(s text, t text, r jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $$
         SELECT CASE WHEN r IS NULL THEN NULL ELSE coalesce(jsonb_object_agg(e.key, CASE
           WHEN c.kind = 'num' AND jsonb_typeof(e.value) = 'number' THEN to_jsonb(e.value #>> '{}')
           WHEN c.kind = 'tstz' AND jsonb_typeof(e.value) = 'string'
             THEN to_jsonb(to_char((e.value #>> '{}')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
           ELSE e.value END), '{}'::jsonb) END
         FROM jsonb_each(r) e LEFT JOIN ${cap}.cols c ON c.s = $1 AND c.t = $2 AND c.col = e.key
       $$`,
    );
  }

  async function sequencesOf(): Promise<Array<{ schema: string; name: string }>> {
    const { rows } = await client.query<{ schema: string; name: string }>(
      `SELECT n.nspname AS schema, c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'S' AND n.nspname = ANY($1::text[])
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'i')
        ORDER BY 1, 2`,
      [schemas],
    );
    return rows;
  }

  const keyOf = (table: TableInfo | undefined, row: Row): Row => {
    const cols = table && table.primaryKey.length > 0 ? table.primaryKey : Object.keys(row).sort();
    const key: Row = {};
    for (const c of cols) key[c] = row[c] ?? null;
    return key;
  };

  return {
    schemas,
    async start() {
      tables = await loadTables();
      await ensureHelpers();
      await client.query(
        `CREATE OR REPLACE FUNCTION ${cap}.capture() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           INSERT INTO ${cap}.log (s, t, op, old_row, new_row) VALUES (TG_TABLE_SCHEMA, TG_TABLE_NAME, lower(TG_OP),
             CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END, CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END);
           RETURN NULL;
         END $$`,
      );
      for (const t of tables) {
        await client.query(
          `CREATE TRIGGER ${q(`zz${cap.slice(1, -1)}`)} AFTER INSERT OR UPDATE OR DELETE ON ${q(t.schema)}.${q(t.name)}
             FOR EACH ROW EXECUTE FUNCTION ${cap}.capture()`,
        );
      }
      started = true;
    },
    async snapshot() {
      if (tables.length === 0 && !started) {
        tables = await loadTables();
        await ensureHelpers();
      }
      const out: DbTable[] = [];
      for (const t of tables) {
        const order = (t.primaryKey.length > 0 ? t.primaryKey : t.columns.map((c) => c.name)).map(q).join(', ');
        const { rows } = await client.query<{ r: Row }>(
          `SELECT ${cap}.norm($1, $2, to_jsonb(x)) AS r FROM ${q(t.schema)}.${q(t.name)} x ORDER BY ${order}`,
          [t.schema, t.name],
        );
        out.push({
          schema: t.schema,
          name: t.name,
          columns: t.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable })),
          primaryKey: t.primaryKey,
          rows: sortRows(
            rows.map((r) => r.r),
            t.primaryKey,
          ),
        });
      }
      return { schemas, ddl: ddlOf(tables, await sequencesOf()), tables: out };
    },
    async drain() {
      if (!started) return [];
      const { rows } = await client.query<{ s: string; t: string; op: string; b: Row | null; a: Row | null }>(
        `WITH d AS (DELETE FROM ${cap}.log RETURNING *)
         SELECT id, s, t, op, ${cap}.norm(s, t, old_row) AS b, ${cap}.norm(s, t, new_row) AS a FROM d ORDER BY id`,
      );
      return rows.map((r) => {
        const table = tables.find((t) => t.schema === r.s && t.name === r.t);
        const op = r.op as DbChangedPayload['op'];
        return {
          schema: r.s,
          table: r.t,
          op,
          key: keyOf(table, (op === 'insert' ? r.a : (r.b ?? r.a))!),
          ...(r.b === null ? {} : { before: r.b }),
          ...(r.a === null ? {} : { after: r.a }),
        };
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        for (const t of tables) {
          await client.query(`DROP TRIGGER IF EXISTS ${q(`zz${cap.slice(1, -1)}`)} ON ${q(t.schema)}.${q(t.name)}`);
        }
        await client.query(`DROP SCHEMA IF EXISTS ${cap} CASCADE`);
      } finally {
        await client.end().catch(() => {});
      }
    },
  };
}
