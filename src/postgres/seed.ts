// Building a database from a snapshot's schema description (its DDL: ddl.ts), and applying recorded
// row changes. Every statement is composed from the description's parts — quoted names,
// allow-listed types and defaults, values as parameters — never taken from recorded SQL text.
import type { DbChangedPayload, DbSnapshot, DbTable, Row } from '../recording/index.js';
import { describeFromDdl, heldAsText, TapedeckError } from '../recording/index.js';
import { type Description, identitySequence, key, plan, type Statement } from './ddl.js';
import { createExtensions } from './extensions.js';
import { namedType, ownRowSql, type Queryable, quoteIdent, quoteLiteral, regclass, sqlType, tableRef } from './sql.js';

/** Rows per INSERT when seeding: each batch is one jsonb parameter. */
const ROWS_PER_INSERT = 1000;

/**
 * Rows in the snapshot's JSON form (as to_jsonb gave them: bytea as "\\x…", arrays as JSON arrays,
 * numbers and times as strings, json/jsonb as their text) become typed values in the server: one
 * jsonb parameter that jsonb_populate_record(set) reads against the table's own row type, each value
 * through its type's input function. No client serializer takes part, so PGlite in-process,
 * pglite-socket and a server over the wire all store the values the snapshot recorded.
 * jsonb_populate_record hands a json/jsonb column a JSON string as a JSON string, so a column held
 * as its text (`values: 'text'`) is read as `(j ->> col)::json(b)` instead: its text, through the
 * type's input, exactly. `table`: the described table (none: every value as to_jsonb gave it).
 * @example `SELECT * FROM ${rowsOf(table, 1, 'set', 's')}` // jsonb_populate_recordset(NULL::"app"."blobs", $1::jsonb) AS s
 */
function rowsOf(
  table: Pick<DbTable, 'schema' | 'name'> & { columns?: DbTable['columns'] },
  param: number,
  many: 'one' | 'set',
  alias: string,
): string {
  const type = `NULL::${tableRef(table.schema, table.name)}`;
  const texts = new Map(
    (table.columns ?? []).flatMap((c) => {
      const cast = heldAsText(c) ? textCast(c) : undefined;
      return cast === undefined ? [] : [[c.name, cast] as const];
    }),
  );
  if (texts.size === 0)
    return `jsonb_populate_record${many === 'set' ? 'set' : ''}(${type}, $${param}::jsonb) AS ${alias}`;
  const list = (table.columns ?? [])
    .map((c) => {
      const name = quoteIdent(c.name);
      const cast = texts.get(c.name);
      return cast !== undefined ? `(e.j ->> ${quoteLiteral(c.name)})::${cast} AS ${name}` : `r.${name}`;
    })
    .join(', ');
  const rows =
    many === 'set' ? `jsonb_array_elements($${param}::jsonb) AS e(j)` : `(SELECT $${param}::jsonb AS j) AS e`;
  return `(SELECT ${list} FROM ${rows}, jsonb_populate_record(${type}, e.j) AS r) AS ${alias}`;
}

/**
 * The type a value held as its text is read back as, through its input function (undefined: as
 * jsonb_populate_record reads it): a domain of the description by its name (ddl.ts builds every
 * domain a column uses), arrays included; a built-in type by sqlType's allow-list (json, jsonb[]).
 * An enum's or an extension's type is not held as text.
 */
function textCast(c: DbTable['columns'][number]): string | undefined {
  if (c.enum !== undefined || c.udt?.extension !== undefined) return undefined;
  return c.udt !== undefined ? namedType(c.udt, c.type.replace(/\(\d+\)/g, '')) : sqlType(c.type);
}

/** hstore's text form of the JSON object to_jsonb gives an hstore (string or null values). */
function hstoreText(value: Record<string, unknown>): string {
  const quote = (text: string) => `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  return Object.entries(value)
    .map(([k, v]) => `${quote(k)}=>${v === null ? 'NULL' : quote(typeof v === 'string' ? v : JSON.stringify(v))}`)
    .join(', ');
}

/**
 * A value in the snapshot's JSON form as the column's input function reads it. The one type whose
 * to_jsonb is not its input's text is hstore's (a JSON object, through the extension's cast to json).
 */
function columnValue(column: DbTable['columns'][number] | undefined, value: unknown): unknown {
  if (column?.udt?.extension !== 'hstore' || column.udt.name !== 'hstore' || value === null) return value;
  const encode = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(encode)
      : typeof v === 'object' && v !== null
        ? hstoreText(v as Record<string, unknown>)
        : v;
  return encode(value);
}

/** The values of `columns` in `row`, as one JSON object (absent columns stay absent: NULL). */
function rowJson(row: Row, columns: string[], table?: Pick<DbTable, 'columns'>): Row {
  const out: Row = {};
  for (const c of columns) {
    if (row[c] !== undefined)
      out[c] = columnValue(
        table?.columns.find((d) => d.name === c),
        row[c],
      ) as Row[string];
  }
  return out;
}

async function run(db: Queryable, statement: Statement): Promise<void> {
  try {
    await db.query(statement.sql);
  } catch (error) {
    throw seedError(statement.what, error);
  }
}

/** Runs a statement in a savepoint: undefined when built, else the one line of why not. */
async function runOptional(db: Queryable, statement: Statement): Promise<string | undefined> {
  await db.query('SAVEPOINT tapedeck_rule');
  try {
    await db.query(statement.sql);
    await db.query('RELEASE SAVEPOINT tapedeck_rule');
    return undefined;
  } catch (error) {
    await db.query('ROLLBACK TO SAVEPOINT tapedeck_rule');
    return `not built: ${((error as Error).message ?? String(error)).split('\n')[0]}`;
  }
}

function seedError(what: string, error: unknown): TapedeckError {
  return new TapedeckError(
    'DB_SEED_FAILED',
    `cannot build the sandbox database from the recording's snapshot: ${what}: ${(error as Error).message}`,
    { cause: error },
  );
}

/** Whether the sandbox computes the column itself (a described generated column): never written. */
const computed = (column: DbTable['columns'][number]): boolean => column.generated != null;

async function insertRows(db: Queryable, table: DbTable): Promise<void> {
  const columns = table.columns.filter((c) => !computed(c)).map((c) => c.name);
  if (table.rows.length === 0 || columns.length === 0) return;
  const list = columns.map(quoteIdent).join(', ');
  const overriding = table.columns.some((c) => c.identity === 'always') ? ' OVERRIDING SYSTEM VALUE' : '';
  for (let start = 0; start < table.rows.length; start += ROWS_PER_INSERT) {
    const batch = table.rows.slice(start, start + ROWS_PER_INSERT).map((row) => rowJson(row, columns, table));
    try {
      await db.query(
        `INSERT INTO ${tableRef(table.schema, table.name)} (${list})${overriding} SELECT ${list} FROM ${rowsOf(table, 1, 'set', 's')}`,
        [JSON.stringify(batch)],
      );
    } catch (error) {
      throw seedError(`rows of ${table.schema}.${table.name}`, error);
    }
  }
}

/** What a seeded sandbox lacks of the recorded database, one line each (empty: nothing). */
export interface SeedReport {
  lacks: string[];
}

/**
 * Builds the snapshot's extensions (those on the allow-list it can create), schemas, domains,
 * tables, rows, keys, indexes and sequence positions through `db`, in one transaction (or the
 * caller's, with `transaction: false`), and says what it could not build for want of an extension:
 * a column of a missing extension's type holds its values as text. Errors are TapedeckErrors
 * (DB_SEED_FAILED) naming what could not be built.
 * @example const { lacks } = await seedDatabase(client, recording.pre.db)
 */
export async function seedDatabase(
  db: Queryable,
  snapshot: DbSnapshot,
  options: { transaction?: boolean } = {},
): Promise<SeedReport> {
  const description = describeFromDdl(snapshot).snapshot;
  const own = options.transaction ?? true;
  if (own) await db.query('BEGIN');
  try {
    const p = plan(description, await createExtensions(db, description));
    for (const s of [...p.schemas, ...p.sequences, ...p.tables]) await run(db, s);
    for (const table of description.tables) await insertRows(db, table);
    const lacks = [...p.lacks];
    for (const s of p.after) {
      if (s.optional) {
        const failed = await runOptional(db, s);
        if (failed !== undefined) lacks.push(`${s.what} (${failed})`);
      } else await run(db, s);
    }
    if (own) await db.query('COMMIT');
    return { lacks };
  } catch (error) {
    if (own) await db.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/**
 * The recorded search_path as a setting's value (each schema quoted: a recording is data), or
 * undefined when the description has none (`public` alone, or a recording made before it was kept).
 */
export function searchPathSetting(snapshot: Pick<DbSnapshot, 'searchPath'>): string | undefined {
  const path = snapshot.searchPath;
  return path === undefined || path.length === 0 ? undefined : path.map(quoteIdent).join(', ');
}

/**
 * Gives the database `db` is connected to the recorded search_path for every connection opened
 * after (ALTER DATABASE: its owner may; the seeding session keeps its own). A PGlite sandbox's
 * one backend takes it per connection instead (PgliteServer.startWith).
 */
export async function setDatabaseSearchPath(db: Queryable, snapshot: Pick<DbSnapshot, 'searchPath'>): Promise<void> {
  const setting = searchPathSetting(snapshot);
  if (setting === undefined) return;
  const { rows } = await db.query('SELECT current_database() AS name');
  const name = (rows[0] as { name: string }).name;
  await db.query(`ALTER DATABASE ${quoteIdent(name)} SET search_path TO ${setting}`);
}

/**
 * The changes that undo `changes` (applied with applyRowChanges): each insert a delete, each delete
 * an insert, each update back to its before, last change first.
 */
export function invertRowChanges(changes: readonly DbChangedPayload[]): DbChangedPayload[] {
  return [...changes].reverse().map((c): DbChangedPayload => {
    const { before, after, ...rest } = c;
    const swapped = {
      ...(after === undefined ? {} : { before: after }),
      ...(before === undefined ? {} : { after: before }),
    };
    if (c.op === 'insert') return { ...rest, op: 'delete', ...swapped };
    if (c.op === 'delete') return { ...rest, op: 'insert', ...swapped };
    return { ...rest, ...swapped };
  });
}

/**
 * Applies recorded row changes (the effects of a served tool call): inserts, updates and deletes
 * by key, then moves sequences past ids the inserts used, so the agent's next insert does not collide.
 * What the sandbox already holds is left as it is: an insert of a row present as recorded, a delete
 * of a row not there. An insert under a key that holds another row fails (DB_APPLY_FAILED).
 */
export async function applyRowChanges(
  db: Queryable,
  changes: DbChangedPayload[],
  snapshot?: Description,
): Promise<void> {
  const sequenceColumns = new Map<string, Array<{ column: string; schema: string; name: string }>>();
  for (const t of snapshot?.tables ?? []) {
    for (const c of t.columns) {
      // A serial's or shared sequence's default, or an identity's own sequence (no default described).
      const seq =
        c.default?.kind === 'sequence' ? c.default : c.identity ? identitySequence(snapshot, t, c.name) : undefined;
      if (seq !== undefined) {
        const list = sequenceColumns.get(key(t.schema, t.name)) ?? [];
        list.push({ column: c.name, schema: seq.schema, name: seq.name });
        sequenceColumns.set(key(t.schema, t.name), list);
      }
    }
  }
  const columnTypes = new Map<string, DbTable['columns'][number]>();
  const computedColumns = new Set<string>();
  for (const t of snapshot?.tables ?? [])
    for (const c of t.columns) {
      columnTypes.set(`${t.schema}.${t.name}.${c.name}`, c);
      if (computed(c)) computedColumns.add(`${t.schema}.${t.name}.${c.name}`);
    }
  const describedTables = new Map((snapshot?.tables ?? []).map((t) => [key(t.schema, t.name), t]));
  const inserted = new Set<string>();
  for (const change of changes) {
    const typeOf = (column: string) => columnTypes.get(`${change.schema}.${change.table}.${column}`);
    const described = describedTables.get(key(change.schema, change.table));
    const json = (row: Row) => JSON.stringify(rowJson(row, Object.keys(row), described));
    const target = described ?? { schema: change.schema, name: change.table };
    // A change is the table's own: an inheritance child's rows are the child's changes, a
    // partitioned table's are its partitions' (ONLY would reach none of those), as readRows reads them.
    const ref = tableRef(change.schema, change.table);
    const own = ownRowSql('t', change.schema, change.table);
    const keyCols = Object.keys(change.key);
    // The row to change, matched on its key read back as typed values (bytea, uuid, … compare as such).
    const keyed = (param: number) => rowsOf(target, param, 'one', 'k');
    const match = keyCols.map((k) => `t.${quoteIdent(k)} IS NOT DISTINCT FROM k.${quoteIdent(k)}`).join(' AND ');
    const what = `${change.op} into ${change.schema}.${change.table}`;
    try {
      if (change.op === 'delete') {
        if (keyCols.length > 0)
          await db.query(`DELETE FROM ${ref} AS t USING ${keyed(1)} WHERE ${match} AND ${own}`, [json(change.key)]);
        continue;
      }
      const after = change.after ?? {};
      // The sandbox computes its generated columns again from the row's other values.
      const cols = Object.keys(after).filter((c) => !computedColumns.has(`${change.schema}.${change.table}.${c}`));
      const list = cols.map(quoteIdent).join(', ');
      if (change.op === 'insert' && cols.length > 0) {
        // A row the sandbox already holds, as recorded, is not inserted twice (a recording made
        // before the `own` mark may carry the agent's own insert, which the agent made again);
        // a different row under the same key is a conflict, and fails.
        const row = json(after);
        const { rows } = await db.query(
          `INSERT INTO ${ref} (${list}) OVERRIDING SYSTEM VALUE SELECT ${list} FROM ${rowsOf(target, 1, 'one', 'v')}
             ON CONFLICT DO NOTHING RETURNING true AS inserted`,
          [row],
        );
        if (rows.length === 0) {
          // A value held as its text compares as that text (json and json[] have no equality).
          const same = cols
            .map((c) => {
              const column = typeOf(c);
              if (column !== undefined && heldAsText(column))
                return `t.${quoteIdent(c)}::text IS NOT DISTINCT FROM v.${quoteIdent(c)}::text`;
              return sqlType(column?.type ?? 'text') === 'json'
                ? `t.${quoteIdent(c)}::jsonb IS NOT DISTINCT FROM v.${quoteIdent(c)}::jsonb`
                : `t.${quoteIdent(c)} IS NOT DISTINCT FROM v.${quoteIdent(c)}`;
            })
            .join(' AND ');
          const held = await db.query(
            `SELECT 1 FROM ${ref} AS t, ${rowsOf(target, 1, 'one', 'v')} WHERE ${same} AND ${own}`,
            [row],
          );
          if (held.rows.length === 0)
            throw new Error(`the sandbox already holds a different row under key ${JSON.stringify(change.key)}`);
        }
        inserted.add(key(change.schema, change.table));
      } else if (change.op === 'update' && cols.length > 0 && keyCols.length > 0) {
        const sets = cols.map((c) => `${quoteIdent(c)} = v.${quoteIdent(c)}`).join(', ');
        await db.query(
          `UPDATE ${ref} AS t SET ${sets} FROM ${rowsOf(target, 1, 'one', 'v')}, ${keyed(2)} WHERE ${match} AND ${own}`,
          [json(after), json(change.key)],
        );
      }
    } catch (error) {
      throw new TapedeckError(
        'DB_APPLY_FAILED',
        `cannot apply a recorded change (${what}): ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }
  for (const tableKey of inserted) {
    const [schema, table] = JSON.parse(tableKey) as [string, string];
    for (const seq of sequenceColumns.get(tableKey) ?? []) {
      // Only forward: an id the recorded run had not reached yet stays for the agent.
      await db
        .query(
          `SELECT setval(${regclass(seq.schema, seq.name)}, m) FROM (SELECT max(${quoteIdent(seq.column)})::bigint AS m FROM ${tableRef(schema, table)}) x
            WHERE m IS NOT NULL AND m > (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM ${tableRef(seq.schema, seq.name)})`,
        )
        .catch(() => {});
    }
  }
}
