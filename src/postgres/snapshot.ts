// Reading a Postgres database into the snapshot format: the schema description from the catalog
// (tables, columns, types, keys, indexes, sequences and their positions) and every row as JSON.
// The one snapshotter: the recorder (pre/post snapshots of the user's database) and the replay
// (the sandbox's end state) both use it. Values: bigint/numeric as strings, timestamptz as UTC ISO
// strings, json/jsonb as their text, everything else as to_jsonb gives it — the same normalisation
// change capture applies.
import type { DbSequence, DbSnapshot, DbTable, Row } from '../recording/index.js';
import { parseColumnDefault, parseGeneratedExpression, sortRows } from '../recording/index.js';
import { renderDdl } from './ddl.js';
import { describeIndexes, describeTableExtras } from './describe-constraints.js';
import { describeObjects, udtJoin, udtOf } from './describe-objects.js';
import { castsKept, ownRowSql, type Queryable, quoteIdent, quoteLiteral, tableRef, utcTimestampSql } from './sql.js';

/**
 * How a column's values are normalised in the snapshot form (every reader of rows applies this):
 * 'num' (bigint, numeric, money) as their text, 'tstz' (timestamptz, with or without a precision)
 * as UTC ISO with microseconds, whatever the session's time zone; 'text' (json, jsonb) as the
 * value's text (`col::text`: to_jsonb would drop a json's own text, jsonb's precision beyond a
 * double once parsed, and JSON null against SQL NULL), the column described `values: 'text'`;
 * undefined: as to_jsonb gives them. Arrays are left to to_jsonb.
 */
export function normalizedKind(type: string): 'num' | 'tstz' | 'text' | undefined {
  if (type.endsWith(']')) return undefined;
  if (type === 'json' || type === 'jsonb') return 'text';
  if (/^(bigint|numeric|decimal|money)/.test(type)) return 'num';
  if (/^timestamp(\(\d\))? with time zone$/.test(type)) return 'tstz';
  return undefined;
}

/**
 * Catalog SQL: whether the type `typeOid` holds JSON a snapshot keeps as its text (`values:
 * 'text'`): json or jsonb, a domain over one (over another domain too), an array of either
 * (`jsonb[]`, `app.payload[]`) or a domain over such an array. Their text is what to_jsonb would
 * not keep: a json's own text, jsonb's numbers beyond a double, JSON null apart from SQL NULL.
 * `typeOid` is tapedeck's own expression.
 */
export function jsonTextSql(typeOid: string): string {
  return `EXISTS (WITH RECURSIVE b(t) AS (SELECT ${typeOid}
            UNION ALL SELECT CASE WHEN y.typtype = 'd' THEN y.typbasetype ELSE y.typelem END
              FROM b JOIN pg_type y ON y.oid = b.t WHERE y.typtype = 'd' OR (y.typcategory = 'A' AND y.typelem <> 0))
          SELECT 1 FROM b WHERE b.t IN (114, 3802))`;
}

/** Whether the rows hold a described column's values as their text: json-based (jsonTextSql), or a recording's json/jsonb. */
export const textHeld = (column: Pick<DbTable['columns'][number], 'type' | 'values'>): boolean =>
  column.values === 'text' || normalizedKind(column.type) === 'text';

/** A table as described, before its rows are read. */
export type TableDescription = Omit<DbTable, 'rows'> & { oid: number };

const FK_ACTION: Record<string, NonNullable<DbTable['foreignKeys']>[number]['onDelete']> = {
  a: 'no action',
  r: 'restrict',
  c: 'cascade',
  n: 'set null',
  d: 'set default',
};

async function rowsOf<T>(db: Queryable, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await db.query(sql, params)).rows as T[];
}

/** The non-system schemas of the database (tapedeck's own capture schemas left out). */
export async function userSchemas(db: Queryable): Promise<string[]> {
  const rows = await rowsOf<{ nspname: string }>(
    db,
    `SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'
       AND nspname NOT LIKE '\\_tapedeck\\_%' ORDER BY nspname`,
  );
  return rows.map((r) => r.nspname);
}

/** Describes the tables of `schemas` from the catalog, referenced tables first. */
export async function describeTables(db: Queryable, schemas: string[]): Promise<TableDescription[]> {
  const tables = await rowsOf<{ schema: string; name: string; oid: number }>(
    db,
    `SELECT n.nspname AS schema, c.relname AS name, c.oid::int AS oid FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r','p') AND n.nspname = ANY($1::text[]) AND NOT c.relispartition
      ORDER BY n.nspname, c.relname`,
    [schemas],
  );
  const out: TableDescription[] = [];
  for (const t of tables) {
    const cols = await rowsOf<{
      name: string;
      type: string;
      notnull: boolean;
      def: string | null;
      identity: string;
      generated: string;
      enum_schema: string | null;
      enum_name: string | null;
      seq_schema: string | null;
      seq_name: string | null;
      u_schema: string | null;
      u_name: string | null;
      u_ext: string | null;
      u_kind: string | null;
      json_text: boolean;
    }>(
      db,
      `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
              pg_get_expr(d.adbin, d.adrelid) AS def, a.attidentity::text AS identity,
              a.attgenerated::text AS generated,
              (SELECT en.nspname FROM pg_type et JOIN pg_namespace en ON en.oid = et.typnamespace
                WHERE et.typtype = 'e' AND et.oid IN (a.atttypid, (SELECT typelem FROM pg_type WHERE oid = a.atttypid))) AS enum_schema,
              (SELECT et.typname FROM pg_type et
                WHERE et.typtype = 'e' AND et.oid IN (a.atttypid, (SELECT typelem FROM pg_type WHERE oid = a.atttypid))) AS enum_name,
              s.nspname AS seq_schema, s.relname AS seq_name, u.u_schema, u.u_name, u.u_ext, u.u_kind::text,
              ${jsonTextSql('a.atttypid')} AS json_text
         FROM pg_attribute a
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
         LEFT JOIN LATERAL (
           SELECT sn.nspname, sc.relname FROM pg_depend dep
             JOIN pg_class sc ON sc.oid = dep.refobjid AND sc.relkind = 'S'
             JOIN pg_namespace sn ON sn.oid = sc.relnamespace
            WHERE dep.classid = 'pg_attrdef'::regclass AND dep.objid = d.oid AND dep.refclassid = 'pg_class'::regclass
            LIMIT 1) s ON true
         ${udtJoin('a.atttypid', 'u')}
        WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY a.attnum`,
      [t.oid],
    );
    const cons = await rowsOf<{
      name: string;
      type: string;
      cols: string[];
      ref_schema: string | null;
      ref_table: string | null;
      ref_cols: string[] | null;
      del: string;
      upd: string;
      deferrable: boolean;
      deferred: boolean;
    }>(
      db,
      `SELECT c.conname AS name, c.contype::text AS type,
              ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, o)
                      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.o) AS cols,
              rn.nspname AS ref_schema, rc.relname AS ref_table,
              ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, o)
                      JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.o) AS ref_cols,
              c.confdeltype::text AS del, c.confupdtype::text AS upd,
              c.condeferrable AS deferrable, c.condeferred AS deferred
         FROM pg_constraint c
         LEFT JOIN pg_class rc ON rc.oid = c.confrelid
         LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace
        WHERE c.conrelid = $1 AND c.contype IN ('p','u','f') ORDER BY c.contype, c.conname`,
      [t.oid],
    );
    const inherits = await rowsOf<{ schema: string; name: string }>(
      db,
      `SELECT pn.nspname AS schema, pc.relname AS name FROM pg_inherits i
         JOIN pg_class pc ON pc.oid = i.inhparent JOIN pg_namespace pn ON pn.oid = pc.relnamespace
        WHERE i.inhrelid = $1 AND pc.relkind = 'r' ORDER BY i.inhseqno`,
      [t.oid],
    );
    const primary = cons.find((c) => c.type === 'p');
    const deferrable = (c: { deferrable: boolean; deferred: boolean }) =>
      c.deferrable ? { deferrable: c.deferred ? ('deferred' as const) : ('immediate' as const) } : {};
    const unique = cons.filter((c) => c.type === 'u').map((c) => ({ name: c.name, columns: c.cols, ...deferrable(c) }));
    const foreignKeys = cons
      .filter((c) => c.type === 'f' && c.ref_schema !== null && c.ref_table !== null)
      .map((c) => ({
        name: c.name,
        columns: c.cols,
        references: { schema: c.ref_schema as string, table: c.ref_table as string, columns: c.ref_cols ?? [] },
        ...(FK_ACTION[c.del] && c.del !== 'a' ? { onDelete: FK_ACTION[c.del] } : {}),
        ...(FK_ACTION[c.upd] && c.upd !== 'a' ? { onUpdate: FK_ACTION[c.upd] } : {}),
        ...deferrable(c),
      }));
    const indexes = await describeIndexes(db, t.oid);
    out.push({
      oid: t.oid,
      schema: t.schema,
      name: t.name,
      columns: cols.map((c) => {
        if (c.generated !== '') {
          // A stored generated column: its expression (the default's slot holds it) as data.
          const plain = new Set(cols.filter((o) => o.generated === '').map((o) => o.name));
          const expression = c.def === null ? undefined : parseGeneratedExpression(c.def, plain);
          const kept = expression !== undefined && castsKept(expression) ? expression : null;
          const values = c.json_text ? { values: 'text' as const } : {};
          return { name: c.name, type: c.type, nullable: !c.notnull, ...values, generated: kept };
        }
        const parsed = c.def === null ? undefined : parseColumnDefault(c.def, t.schema);
        // A sequence default names its sequence by the catalog's dependency, not by parsing the text.
        const udt = c.enum_name === null ? udtOf(c.u_schema, c.u_name, c.u_ext) : undefined;
        const d =
          parsed?.kind === 'sequence' && c.seq_schema !== null && c.seq_name !== null
            ? { kind: 'sequence' as const, schema: c.seq_schema, name: c.seq_name }
            : parsed;
        return {
          name: c.name,
          type: c.type,
          nullable: !c.notnull,
          ...(c.json_text ? { values: 'text' as const } : {}),
          ...(c.enum_schema !== null && c.enum_name !== null
            ? { enum: { schema: c.enum_schema, name: c.enum_name } }
            : {}),
          ...(udt !== undefined ? { udt } : {}),
          ...(d === undefined || c.identity !== '' ? {} : { default: d }),
          ...(c.identity === 'a'
            ? { identity: 'always' as const }
            : c.identity === 'd'
              ? { identity: 'by default' as const }
              : {}),
        };
      }),
      primaryKey: primary?.cols ?? [],
      ...(primary?.deferrable ? { primaryKeyDeferrable: primary.deferred ? 'deferred' : 'immediate' } : {}),
      ...(unique.length > 0 ? { unique } : {}),
      ...(foreignKeys.length > 0 ? { foreignKeys } : {}),
      ...(indexes.length > 0 ? { indexes } : {}),
      ...(inherits.length > 0 ? { inherits } : {}),
      ...(await describeTableExtras(db, t.oid, new Set(cols.map((c) => c.name)))),
    });
  }
  // Referenced (and inherited) tables first, so rows can be inserted and tables made in order.
  const byKey = new Map(out.map((t) => [`${t.schema}.${t.name}`, t]));
  const ordered: TableDescription[] = [];
  const seen = new Set<string>();
  const visit = (t: TableDescription) => {
    const key = `${t.schema}.${t.name}`;
    if (seen.has(key)) return;
    seen.add(key);
    for (const fk of t.foreignKeys ?? []) {
      const dep = byKey.get(`${fk.references.schema}.${fk.references.table}`);
      if (dep !== undefined) visit(dep);
    }
    for (const parent of t.inherits ?? []) {
      const dep = byKey.get(`${parent.schema}.${parent.name}`);
      if (dep !== undefined) visit(dep);
    }
    ordered.push(t);
  };
  out.forEach(visit);
  return ordered;
}

/**
 * The sequences of `schemas` with their positions (last_value, is_called) as they are now.
 * `fromView`: positions from pg_sequences, which needs only USAGE on a sequence (an application
 * role's grant), instead of reading each sequence (which needs SELECT); observed capture uses it.
 */
export async function describeSequences(
  db: Queryable,
  schemas: string[],
  options: { fromView?: boolean } = {},
): Promise<DbSequence[]> {
  const seqs = await rowsOf<{
    schema: string;
    name: string;
    type: string;
    start: string;
    increment: string;
    min: string;
    max: string;
    cycle: boolean;
    owner_table: string | null;
    owner_column: string | null;
    deptype: string | null;
  }>(
    db,
    `SELECT n.nspname AS schema, c.relname AS name, format_type(s.seqtypid, NULL) AS type,
            s.seqstart::text AS start, s.seqincrement::text AS increment, s.seqmin::text AS min,
            s.seqmax::text AS max, s.seqcycle AS cycle,
            t.relname AS owner_table, a.attname AS owner_column, d.deptype::text AS deptype
       FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid
            AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i') AND d.refobjsubid > 0
       LEFT JOIN pg_class t ON t.oid = d.refobjid AND t.relnamespace = c.relnamespace
       LEFT JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
      WHERE n.nspname = ANY($1::text[]) ORDER BY 1, 2`,
    [schemas],
  );
  const viewed = new Map<string, { last: string; called: boolean }>();
  if (options.fromView === true && seqs.length > 0) {
    const rows = await rowsOf<{ schema: string; name: string; last: string | null }>(
      db,
      `SELECT schemaname AS schema, sequencename AS name, last_value::text AS last FROM pg_sequences
        WHERE schemaname = ANY($1::text[])`,
      [schemas],
    );
    for (const r of rows) {
      viewed.set(
        `${r.schema}\u0000${r.name}`,
        r.last === null ? { last: '', called: false } : { last: r.last, called: true },
      );
    }
  }
  const out: DbSequence[] = [];
  for (const s of seqs) {
    const seen = viewed.get(`${s.schema}\u0000${s.name}`);
    const [position] =
      options.fromView === true
        ? [seen === undefined || !seen.called ? undefined : seen]
        : await rowsOf<{ last: string; called: boolean }>(
            db,
            `SELECT last_value::text AS last, is_called AS called FROM ${tableRef(s.schema, s.name)}`,
          );
    out.push({
      schema: s.schema,
      name: s.name,
      type: s.type === 'smallint' || s.type === 'integer' ? s.type : 'bigint',
      start: s.start,
      increment: s.increment,
      min: s.min,
      max: s.max,
      cycle: s.cycle,
      last: position?.last ?? s.start,
      called: position?.called ?? false,
      ...(s.owner_table !== null && s.owner_column !== null
        ? { ownedBy: { table: s.owner_table, column: s.owner_column } }
        : {}),
      ...(s.deptype === 'i' ? { identity: true } : {}),
    });
  }
  return out;
}

/**
 * Installs, in this session only (temporary objects), the function that turns a row's to_jsonb
 * into the snapshot's JSON form. Call again after the tables change.
 */
export async function installNormalizer(
  db: Queryable,
  tables: Array<Pick<DbTable, 'schema' | 'name' | 'columns'>>,
): Promise<void> {
  await db.query('CREATE TEMP TABLE IF NOT EXISTS tapedeck_cols (s text, t text, col text, kind text)');
  await db.query('DELETE FROM pg_temp.tapedeck_cols');
  const values: string[] = [];
  for (const t of tables) {
    for (const c of t.columns) {
      const kind = normalizedKind(c.type);
      if (kind !== undefined) values.push(`(${[t.schema, t.name, c.name, kind].map(quoteLiteral).join(', ')})`);
    }
  }
  if (values.length > 0) await db.query(`INSERT INTO pg_temp.tapedeck_cols VALUES ${values.join(', ')}`);
  await db.query(
    `CREATE OR REPLACE FUNCTION pg_temp.tapedeck_norm(s text, t text, r jsonb) RETURNS jsonb LANGUAGE sql STABLE AS $$
       SELECT CASE WHEN r IS NULL THEN NULL ELSE coalesce(jsonb_object_agg(e.key, CASE
         WHEN c.kind = 'num' AND jsonb_typeof(e.value) = 'number' THEN to_jsonb(e.value #>> '{}')
         WHEN c.kind = 'tstz' AND jsonb_typeof(e.value) = 'string'
           THEN to_jsonb(${utcTimestampSql(`(e.value #>> '{}')::timestamptz`)})
         ELSE e.value END), '{}'::jsonb) END
       FROM jsonb_each(r) e LEFT JOIN pg_temp.tapedeck_cols c ON c.s = $1 AND c.t = $2 AND c.col = e.key
     $$`,
  );
}

/**
 * The values of the row `ref` that the snapshot holds as their text (textHeld), as a
 * jsonb object to lay over its to_jsonb (`to_jsonb(x) || …`); undefined when it has none.
 * `ref` is an SQL expression of the row (an alias, or `($1)` of a row type).
 */
export function textValuesSql(
  columns: ReadonlyArray<Pick<DbTable['columns'][number], 'name' | 'type' | 'values'>>,
  ref: string,
): string | undefined {
  const pairs = columns.filter(textHeld).map((c) => `${quoteLiteral(c.name)}, ${ref}.${quoteIdent(c.name)}::text`);
  if (pairs.length === 0) return undefined;
  // jsonb_build_object takes at most 100 arguments: 50 columns a call, joined.
  const parts: string[] = [];
  for (let i = 0; i < pairs.length; i += 50) parts.push(`jsonb_build_object(${pairs.slice(i, i + 50).join(', ')})`);
  return parts.join(' || ');
}

/** The rows of one table in snapshot form, sorted by primary key (needs installNormalizer first). */
export async function readRows(
  db: Queryable,
  table: Pick<DbTable, 'schema' | 'name' | 'columns' | 'primaryKey'>,
): Promise<Row[]> {
  const order = (table.primaryKey.length > 0 ? table.primaryKey : table.columns.map((c) => c.name)).map(quoteIdent);
  const texts = textValuesSql(table.columns, 'x');
  const rows = await rowsOf<{ r: Row }>(
    db,
    `SELECT pg_temp.tapedeck_norm($1, $2, to_jsonb(x)${texts === undefined ? '' : ` || ${texts}`}) AS r FROM ${tableRef(table.schema, table.name)} x
      WHERE ${ownRowSql('x', table.schema, table.name)}${order.length > 0 ? ` ORDER BY ${order.join(', ')}` : ''}`,
    [table.schema, table.name],
  );
  return sortRows(
    rows.map((r) => r.r),
    table.primaryKey,
  );
}

/**
 * The snapshot of `schemas`: description, rows and sequence positions, read in one
 * REPEATABLE READ transaction so that they are of one moment. `inside` runs in the same
 * transaction (change capture reads which logged changes the snapshot already holds).
 */
export async function snapshotDatabase<T = undefined>(
  db: Queryable,
  schemas: string[],
  inside?: () => Promise<T>,
): Promise<{ snapshot: DbSnapshot; tables: TableDescription[]; inside: T | undefined }> {
  await db.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  try {
    const described = await describeTables(db, schemas);
    await installNormalizer(db, described);
    const tables: DbTable[] = [];
    for (const { oid: _oid, ...t } of described) tables.push({ ...t, rows: await readRows(db, t) });
    const sequences = await describeSequences(db, schemas);
    const objects = await describeObjects(db, schemas, described);
    const extra = inside ? await inside() : undefined;
    await db.query('COMMIT');
    const body = { schemas, tables, sequences, ...objects };
    return { snapshot: { ...body, ddl: renderDdl(body) }, tables: described, inside: extra };
  } catch (error) {
    await db.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
