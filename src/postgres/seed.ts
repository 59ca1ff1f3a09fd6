// Building a database from a snapshot's schema description, and applying recorded row changes.
// Every statement is composed here from the description's parts — quoted names, allow-listed
// types and defaults, values as parameters — never taken from recorded SQL text.
import type { DbChangedPayload, DbSnapshot, DbTable, Row } from '../recording/index.js';
import { describeFromDdl, TapedeckError } from '../recording/index.js';
import {
  defaultSql,
  generatedSql,
  type Queryable,
  quoteIdent,
  quoteLiteral,
  regclass,
  sqlType,
  tableRef,
} from './sql.js';

type Description = Pick<DbSnapshot, 'schemas' | 'tables' | 'sequences' | 'enums'>;

interface Statement {
  sql: string;
  /** What it builds, for an error message. */
  what: string;
}

interface Plan {
  schemas: Statement[];
  sequences: Statement[];
  tables: Statement[];
  /** After the rows: foreign keys, indexes, sequence ownership and positions. */
  after: Statement[];
}

const key = (schema: string, name: string) => JSON.stringify([schema, name]);

/** Rows per INSERT when seeding: each batch is one jsonb parameter. */
const ROWS_PER_INSERT = 1000;

function hasKey(table: Pick<DbTable, 'primaryKey' | 'unique'>, columns: string[]): boolean {
  const same = (list: string[]) => list.length === columns.length && list.every((c) => columns.includes(c));
  return same(table.primaryKey) || (table.unique ?? []).some((u) => same(u.columns));
}

/** The statements that build `description` (rows aside), in the order they run. */
function plan(description: Description): Plan {
  const out: Plan = { schemas: [], sequences: [], tables: [], after: [] };
  const sequences = new Map((description.sequences ?? []).map((s) => [key(s.schema, s.name), s]));
  const tables = new Map(description.tables.map((t) => [key(t.schema, t.name), t]));
  for (const schema of description.schemas) {
    out.schemas.push({ sql: `CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`, what: `schema ${schema}` });
  }
  const enums = new Set<string>();
  for (const e of description.enums ?? []) {
    enums.add(key(e.schema, e.name));
    out.schemas.push({
      sql: `CREATE TYPE ${tableRef(e.schema, e.name)} AS ENUM (${e.labels.map(quoteLiteral).join(', ')})`,
      what: `enum type ${e.schema}.${e.name}`,
    });
  }
  // A column of a described enum (or an array of one) has that type; else sqlType's allow-list.
  const typeOf = (c: DbTable['columns'][number]): string =>
    c.enum !== undefined && enums.has(key(c.enum.schema, c.enum.name))
      ? `${tableRef(c.enum.schema, c.enum.name)}${'[]'.repeat(Math.min((c.type.match(/\[\]/g) ?? []).length, 6))}`
      : sqlType(c.type);
  for (const s of sequences.values()) {
    if (s.identity) continue; // made by its table
    out.sequences.push({
      sql: `CREATE SEQUENCE ${tableRef(s.schema, s.name)} AS ${s.type} INCREMENT BY ${s.increment} MINVALUE ${s.min} MAXVALUE ${s.max} START WITH ${s.start}${s.cycle ? ' CYCLE' : ' NO CYCLE'}`,
      what: `sequence ${s.schema}.${s.name}`,
    });
  }
  for (const t of description.tables) {
    const parts = t.columns.map((c) => {
      let col = `${quoteIdent(c.name)} ${typeOf(c)}`;
      // A generated column whose expression is not described is a plain one: no NOT NULL, which
      // rows the agent inserts could not meet.
      if (c.generated === null) return col;
      if (c.generated !== undefined) col += ` GENERATED ALWAYS AS (${generatedSql(c.generated)}) STORED`;
      else if (c.identity) col += ` GENERATED ${c.identity === 'always' ? 'ALWAYS' : 'BY DEFAULT'} AS IDENTITY`;
      else if (c.default && (c.default.kind !== 'sequence' || sequences.has(key(c.default.schema, c.default.name)))) {
        col += ` DEFAULT ${defaultSql(c.default)}`;
      }
      if (!c.nullable) col += ' NOT NULL';
      return col;
    });
    if (t.primaryKey.length > 0) parts.push(`PRIMARY KEY (${t.primaryKey.map(quoteIdent).join(', ')})`);
    for (const u of t.unique ?? [])
      parts.push(`CONSTRAINT ${quoteIdent(u.name)} UNIQUE (${u.columns.map(quoteIdent).join(', ')})`);
    out.tables.push({
      sql: `CREATE TABLE ${tableRef(t.schema, t.name)} (${parts.join(', ')})`,
      what: `table ${t.schema}.${t.name}`,
    });
    for (const fk of t.foreignKeys ?? []) {
      const target = tables.get(key(fk.references.schema, fk.references.table));
      // A key to a table outside the snapshot, or to columns that are no key there, cannot be built.
      if (!target || !hasKey(target, fk.references.columns)) continue;
      const actions = `${fk.onDelete ? ` ON DELETE ${fk.onDelete.toUpperCase()}` : ''}${fk.onUpdate ? ` ON UPDATE ${fk.onUpdate.toUpperCase()}` : ''}`;
      out.after.push({
        // NOT VALID: rows a snapshot read table by table need not agree; new rows are checked.
        sql: `ALTER TABLE ${tableRef(t.schema, t.name)} ADD CONSTRAINT ${quoteIdent(fk.name)} FOREIGN KEY (${fk.columns.map(quoteIdent).join(', ')}) REFERENCES ${tableRef(fk.references.schema, fk.references.table)} (${fk.references.columns.map(quoteIdent).join(', ')})${actions} NOT VALID`,
        what: `foreign key ${fk.name} of ${t.schema}.${t.name}`,
      });
    }
    for (const index of t.indexes ?? []) {
      out.after.push({
        sql: `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${quoteIdent(index.name)} ON ${tableRef(t.schema, t.name)} USING ${index.method} (${index.columns.map(quoteIdent).join(', ')})`,
        what: `index ${index.name} of ${t.schema}.${t.name}`,
      });
    }
  }
  for (const s of sequences.values()) {
    const owner = s.ownedBy && tables.get(key(s.schema, s.ownedBy.table));
    const ownerOk = owner?.columns.some((c) => c.name === s.ownedBy?.column);
    const target =
      s.identity && owner && ownerOk
        ? `pg_get_serial_sequence(${quoteLiteral(tableRef(s.schema, s.ownedBy?.table ?? ''))}, ${quoteLiteral(s.ownedBy?.column ?? '')})`
        : s.identity
          ? undefined
          : regclass(s.schema, s.name);
    if (target === undefined) continue;
    if (!s.identity && owner && ownerOk && s.ownedBy) {
      out.after.push({
        sql: `ALTER SEQUENCE ${tableRef(s.schema, s.name)} OWNED BY ${tableRef(s.schema, s.ownedBy.table)}.${quoteIdent(s.ownedBy.column)}`,
        what: `owner of sequence ${s.schema}.${s.name}`,
      });
    }
    // The position the recorded run saw: the next id handed out is the one it got.
    out.after.push({
      sql: `SELECT setval(${target}, ${s.last}, ${s.called ? 'true' : 'false'})`,
      what: `position of sequence ${s.schema}.${s.name}`,
    });
  }
  // Identity columns of a snapshot that did not record their sequence: just past the highest id.
  for (const t of description.tables) {
    for (const c of t.columns) {
      if (!c.identity) continue;
      const recorded = [...sequences.values()].some(
        (s) => s.identity && s.schema === t.schema && s.ownedBy?.table === t.name && s.ownedBy.column === c.name,
      );
      if (recorded) continue;
      out.after.push({
        sql: `SELECT setval(pg_get_serial_sequence(${quoteLiteral(tableRef(t.schema, t.name))}, ${quoteLiteral(c.name)}), max(${quoteIdent(c.name)})) FROM ${tableRef(t.schema, t.name)} HAVING max(${quoteIdent(c.name)}) IS NOT NULL`,
        what: `position of the identity of ${t.schema}.${t.name}.${c.name}`,
      });
    }
  }
  return out;
}

/**
 * The description as readable SQL (db.json's `ddl`): what a sandbox runs, minus the rows and the
 * sequence positions (those are data, and change during a run). Never executed from a recording.
 */
export function renderDdl(description: Description): string[] {
  const p = plan(description);
  return [...p.schemas, ...p.sequences, ...p.tables, ...p.after]
    .filter((s) => !s.what.startsWith('position of'))
    .map((s) => s.sql);
}

/**
 * Rows in the snapshot's JSON form (as to_jsonb gave them: bytea as "\\x…", arrays as JSON arrays,
 * json as JSON, numbers and times as strings) become typed values in the server: one jsonb
 * parameter that jsonb_populate_record(set) reads against the table's own row type, each value
 * through its type's input function. No client serializer takes part, so PGlite in-process,
 * pglite-socket and a server over the wire all store the values the snapshot recorded.
 * @example `SELECT * FROM ${rowsOf('app', 'blobs', 1, 'set')}` // jsonb_populate_recordset(NULL::"app"."blobs", $1::jsonb)
 */
function rowsOf(schema: string, table: string, param: number, many: 'one' | 'set'): string {
  return `jsonb_populate_record${many === 'set' ? 'set' : ''}(NULL::${tableRef(schema, table)}, $${param}::jsonb)`;
}

/** The values of `columns` in `row`, as one JSON object (absent columns stay absent: NULL). */
function rowJson(row: Row, columns: string[]): Row {
  const out: Row = {};
  for (const c of columns) if (row[c] !== undefined) out[c] = row[c];
  return out;
}

async function run(db: Queryable, statement: Statement): Promise<void> {
  try {
    await db.query(statement.sql);
  } catch (error) {
    throw seedError(statement.what, error);
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
    const batch = table.rows.slice(start, start + ROWS_PER_INSERT).map((row) => rowJson(row, columns));
    try {
      await db.query(
        `INSERT INTO ${tableRef(table.schema, table.name)} (${list})${overriding} SELECT ${list} FROM ${rowsOf(table.schema, table.name, 1, 'set')}`,
        [JSON.stringify(batch)],
      );
    } catch (error) {
      throw seedError(`rows of ${table.schema}.${table.name}`, error);
    }
  }
}

/**
 * Builds the snapshot's schemas, tables, rows, keys, indexes and sequence positions through `db`,
 * in one transaction (or the caller's, with `transaction: false`). Errors are TapedeckErrors (DB_SEED_FAILED) naming what could not be built.
 * @example await seedDatabase(client, recording.pre.db)
 */
export async function seedDatabase(
  db: Queryable,
  snapshot: DbSnapshot,
  options: { transaction?: boolean } = {},
): Promise<void> {
  const description = describeFromDdl(snapshot).snapshot;
  const p = plan(description);
  const own = options.transaction ?? true;
  if (own) await db.query('BEGIN');
  try {
    for (const s of [...p.schemas, ...p.sequences, ...p.tables]) await run(db, s);
    for (const table of description.tables) await insertRows(db, table);
    for (const s of p.after) await run(db, s);
    if (own) await db.query('COMMIT');
  } catch (error) {
    if (own) await db.query('ROLLBACK').catch(() => {});
    throw error;
  }
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
      if (c.default?.kind === 'sequence') {
        const list = sequenceColumns.get(key(t.schema, t.name)) ?? [];
        list.push({ column: c.name, schema: c.default.schema, name: c.default.name });
        sequenceColumns.set(key(t.schema, t.name), list);
      }
    }
  }
  const columnTypes = new Map<string, string>();
  const computedColumns = new Set<string>();
  for (const t of snapshot?.tables ?? [])
    for (const c of t.columns) {
      columnTypes.set(`${t.schema}.${t.name}.${c.name}`, c.type);
      if (computed(c)) computedColumns.add(`${t.schema}.${t.name}.${c.name}`);
    }
  const inserted = new Set<string>();
  for (const change of changes) {
    const typeOf = (column: string) => columnTypes.get(`${change.schema}.${change.table}.${column}`);
    const ref = tableRef(change.schema, change.table);
    const keyCols = Object.keys(change.key);
    // The row to change, matched on its key read back as typed values (bytea, uuid, … compare as such).
    const keyed = (param: number) => `${rowsOf(change.schema, change.table, param, 'one')} AS k`;
    const match = keyCols.map((k) => `t.${quoteIdent(k)} IS NOT DISTINCT FROM k.${quoteIdent(k)}`).join(' AND ');
    const what = `${change.op} into ${change.schema}.${change.table}`;
    try {
      if (change.op === 'delete') {
        if (keyCols.length > 0)
          await db.query(`DELETE FROM ${ref} AS t USING ${keyed(1)} WHERE ${match}`, [JSON.stringify(change.key)]);
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
        const row = JSON.stringify(after);
        const { rows } = await db.query(
          `INSERT INTO ${ref} (${list}) OVERRIDING SYSTEM VALUE SELECT ${list} FROM ${rowsOf(change.schema, change.table, 1, 'one')}
             ON CONFLICT DO NOTHING RETURNING true AS inserted`,
          [row],
        );
        if (rows.length === 0) {
          const same = cols
            .map((c) =>
              sqlType(typeOf(c) ?? 'text') === 'json'
                ? `t.${quoteIdent(c)}::jsonb IS NOT DISTINCT FROM v.${quoteIdent(c)}::jsonb`
                : `t.${quoteIdent(c)} IS NOT DISTINCT FROM v.${quoteIdent(c)}`,
            )
            .join(' AND ');
          const held = await db.query(
            `SELECT 1 FROM ${ref} AS t, ${rowsOf(change.schema, change.table, 1, 'one')} AS v WHERE ${same}`,
            [row],
          );
          if (held.rows.length === 0)
            throw new Error(`the sandbox already holds a different row under key ${JSON.stringify(change.key)}`);
        }
        inserted.add(key(change.schema, change.table));
      } else if (change.op === 'update' && cols.length > 0 && keyCols.length > 0) {
        const sets = cols.map((c) => `${quoteIdent(c)} = v.${quoteIdent(c)}`).join(', ');
        await db.query(
          `UPDATE ${ref} AS t SET ${sets} FROM ${rowsOf(change.schema, change.table, 1, 'one')} AS v, ${keyed(2)} WHERE ${match}`,
          [JSON.stringify(after), JSON.stringify(change.key)],
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
