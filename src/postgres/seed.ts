// Building a database from a snapshot's schema description, and applying recorded row changes.
// Every statement is composed here from the description's parts — quoted names, allow-listed
// types and defaults, values as parameters — never taken from recorded SQL text.
import type { DbChangedPayload, DbSnapshot, DbTable, Row } from '../recording/index.js';
import { describeFromDdl, TapedeckError } from '../recording/index.js';
import { createExtensions, missingExtensionReason, wantedExtensions } from './extensions.js';
import {
  DEFAULT_FUNCTION_EXTENSION,
  defaultSql,
  generatedSql,
  namedType,
  type Queryable,
  quoteIdent,
  quoteLiteral,
  regclass,
  sqlType,
  tableRef,
} from './sql.js';

type Description = Pick<DbSnapshot, 'schemas' | 'tables' | 'sequences' | 'enums' | 'domains' | 'extensions'>;

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
  /** What the sandbox lacks of the description for want of an extension, one line each. */
  lacks: string[];
}

const key = (schema: string, name: string) => JSON.stringify([schema, name]);

/** Rows per INSERT when seeding: each batch is one jsonb parameter. */
const ROWS_PER_INSERT = 1000;

function hasKey(table: Pick<DbTable, 'primaryKey' | 'unique'>, columns: string[]): boolean {
  const same = (list: string[]) => list.length === columns.length && list.every((c) => columns.includes(c));
  return same(table.primaryKey) || (table.unique ?? []).some((u) => same(u.columns));
}

/**
 * The statements that build `description` (rows aside), in the order they run. `extensions`: those
 * the sandbox holds (createExtensions); by default every one a sandbox may create.
 */
function plan(description: Description, extensions?: ReadonlySet<string>): Plan {
  const out: Plan = { schemas: [], sequences: [], tables: [], after: [], lacks: [] };
  const held = extensions ?? new Set(wantedExtensions(description).map((e) => e.name));
  const extensionSchema = new Map((description.extensions ?? []).map((e) => [e.name, e.schema]));
  const lacking = new Map<string, string[]>();
  const lack = (extension: string, what: string) => lacking.set(extension, [...(lacking.get(extension) ?? []), what]);
  for (const e of description.extensions ?? []) if (!held.has(e.name)) lacking.set(e.name, []);
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
  const domains = new Set((description.domains ?? []).map((d) => key(d.schema, d.name)));
  // A column of a described enum or domain (or an array of one) has that type, as has one of an
  // extension's type when the sandbox holds the extension; else sqlType's allow-list (text for the rest).
  const typeOf = (c: Pick<DbTable['columns'][number], 'type' | 'enum' | 'udt'>, what: string): string => {
    const named = c.enum ?? c.udt;
    if (named !== undefined && (enums.has(key(named.schema, named.name)) || domains.has(key(named.schema, named.name))))
      return namedType(named, c.type.replace(/\(\d+\)/g, ''));
    if (c.udt?.extension !== undefined) {
      if (held.has(c.udt.extension)) return namedType(c.udt, c.type);
      lack(c.udt.extension, `${what} holds its values as text`);
    }
    return sqlType(c.type);
  };
  // The missing extension whose type a column (or its domain) would have had: it holds text instead.
  const domainOf = new Map((description.domains ?? []).map((d) => [key(d.schema, d.name), d]));
  const missingType = (c: Pick<DbTable['columns'][number], 'udt'>, depth = 0): string | undefined => {
    if (c.udt === undefined || depth > 32) return undefined;
    if (c.udt.extension !== undefined) return held.has(c.udt.extension) ? undefined : c.udt.extension;
    const domain = domainOf.get(key(c.udt.schema, c.udt.name));
    return domain ? missingType(domain, depth + 1) : undefined;
  };
  for (const d of description.domains ?? []) {
    if (!out.schemas.some((s) => s.what === `schema ${d.schema}`))
      out.schemas.push({ sql: `CREATE SCHEMA IF NOT EXISTS ${quoteIdent(d.schema)}`, what: `schema ${d.schema}` });
    out.schemas.push({
      sql: `CREATE DOMAIN ${tableRef(d.schema, d.name)} AS ${typeOf(d, `domain ${d.schema}.${d.name}`)}${d.nullable ? '' : ' NOT NULL'}`,
      what: `domain ${d.schema}.${d.name}`,
    });
  }
  for (const s of sequences.values()) {
    if (s.identity) continue; // made by its table
    out.sequences.push({
      sql: `CREATE SEQUENCE ${tableRef(s.schema, s.name)} AS ${s.type} INCREMENT BY ${s.increment} MINVALUE ${s.min} MAXVALUE ${s.max} START WITH ${s.start}${s.cycle ? ' CYCLE' : ' NO CYCLE'}`,
      what: `sequence ${s.schema}.${s.name}`,
    });
  }
  for (const t of description.tables) {
    const parts = t.columns.map((c) => {
      let col = `${quoteIdent(c.name)} ${typeOf(c, `column ${t.schema}.${t.name}.${c.name}`)}`;
      // A generated column whose expression is not described is a plain one: no NOT NULL, which
      // rows the agent inserts could not meet.
      if (c.generated === null) return col;
      if (c.generated !== undefined) col += ` GENERATED ALWAYS AS (${generatedSql(c.generated)}) STORED`;
      else if (c.identity) col += ` GENERATED ${c.identity === 'always' ? 'ALWAYS' : 'BY DEFAULT'} AS IDENTITY`;
      else if (c.default && (c.default.kind !== 'sequence' || sequences.has(key(c.default.schema, c.default.name)))) {
        const extension = c.default.kind === 'function' ? DEFAULT_FUNCTION_EXTENSION[c.default.name] : undefined;
        if (extension === undefined) col += ` DEFAULT ${defaultSql(c.default)}`;
        else if (held.has(extension)) col += ` DEFAULT ${defaultSql(c.default, extensionSchema.get(extension))}`;
        else lack(extension, `column ${t.schema}.${t.name}.${c.name} has no default`);
      }
      if (!c.nullable) col += ' NOT NULL';
      return col;
    });
    if (t.primaryKey.length > 0) parts.push(`PRIMARY KEY (${t.primaryKey.map(quoteIdent).join(', ')})`);
    for (const u of t.unique ?? [])
      parts.push(`CONSTRAINT ${quoteIdent(u.name)} UNIQUE (${u.columns.map(quoteIdent).join(', ')})`);
    const inherits =
      t.inherits?.filter((p) => tables.has(key(p.schema, p.name))).map((p) => tableRef(p.schema, p.name)) ?? [];
    out.tables.push({
      sql: `CREATE TABLE ${tableRef(t.schema, t.name)} (${parts.join(', ')})${inherits.length > 0 ? ` INHERITS (${inherits.join(', ')})` : ''}`,
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
      // An operator class of Postgres's own or of an extension the sandbox holds; another one (a
      // user's, or a missing extension's) leaves the index out.
      const opclasses = index.opclasses ?? [];
      const missing = opclasses.find(
        (o) => o !== null && (o.extension === undefined ? o.schema !== 'pg_catalog' : !held.has(o.extension)),
      );
      if (missing) {
        if (missing.extension !== undefined) lack(missing.extension, `index ${t.schema}.${index.name} is left out`);
        else out.lacks.push(`index ${t.schema}.${index.name} (operator class ${missing.schema}.${missing.name})`);
        continue;
      }
      // On a column held as text, only a btree or hash index has text's default operator class.
      const asText = index.columns
        .map((name) => t.columns.find((c) => c.name === name))
        .map((c) => (c ? missingType(c) : undefined))
        .find((e) => e !== undefined);
      if (asText !== undefined && index.method !== 'btree' && index.method !== 'hash') {
        lack(asText, `index ${t.schema}.${index.name} is left out`);
        continue;
      }
      const columns = index.columns.map((c, i) => {
        const o = opclasses[i];
        return `${quoteIdent(c)}${o ? ` ${tableRef(o.schema, o.name)}` : ''}`;
      });
      out.after.push({
        sql: `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX ${quoteIdent(index.name)} ON ${tableRef(t.schema, t.name)} USING ${index.method} (${columns.join(', ')})`,
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
  for (const [extension, what] of lacking) {
    out.lacks.push(
      `extension ${extension} (${extensionSchema.has(extension) ? missingExtensionReason(extension) : "not among the recorded database's extensions"})${what.length > 0 ? `: ${what.join(', ')}` : ''}`,
    );
  }
  return out;
}

/**
 * The description as readable SQL (db.json's `ddl`): what a sandbox runs, minus the rows and the
 * sequence positions (those are data, and change during a run). Never executed from a recording.
 */
export function renderDdl(description: Description): string[] {
  const p = plan(description);
  const extensions = wantedExtensions(description).map((e) => ({
    sql: `CREATE EXTENSION IF NOT EXISTS ${quoteIdent(e.name)} WITH SCHEMA ${quoteIdent(e.schema)}`,
    what: `extension ${e.name}`,
  }));
  return [...extensions, ...p.schemas, ...p.sequences, ...p.tables, ...p.after]
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
        `INSERT INTO ${tableRef(table.schema, table.name)} (${list})${overriding} SELECT ${list} FROM ${rowsOf(table.schema, table.name, 1, 'set')}`,
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
    for (const s of p.after) await run(db, s);
    if (own) await db.query('COMMIT');
    return { lacks: p.lacks };
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
  const describedTables = new Map((snapshot?.tables ?? []).map((t) => [key(t.schema, t.name), t]));
  const inserted = new Set<string>();
  for (const change of changes) {
    const typeOf = (column: string) => columnTypes.get(`${change.schema}.${change.table}.${column}`);
    const described = describedTables.get(key(change.schema, change.table));
    const json = (row: Row) => JSON.stringify(rowJson(row, Object.keys(row), described));
    // Updated and deleted through ONLY: a change is the table's own (an inheritance child's rows are
    // the child's changes).
    const ref = tableRef(change.schema, change.table);
    const keyCols = Object.keys(change.key);
    // The row to change, matched on its key read back as typed values (bytea, uuid, … compare as such).
    const keyed = (param: number) => `${rowsOf(change.schema, change.table, param, 'one')} AS k`;
    const match = keyCols.map((k) => `t.${quoteIdent(k)} IS NOT DISTINCT FROM k.${quoteIdent(k)}`).join(' AND ');
    const what = `${change.op} into ${change.schema}.${change.table}`;
    try {
      if (change.op === 'delete') {
        if (keyCols.length > 0)
          await db.query(`DELETE FROM ONLY ${ref} AS t USING ${keyed(1)} WHERE ${match}`, [json(change.key)]);
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
            `SELECT 1 FROM ONLY ${ref} AS t, ${rowsOf(change.schema, change.table, 1, 'one')} AS v WHERE ${same}`,
            [row],
          );
          if (held.rows.length === 0)
            throw new Error(`the sandbox already holds a different row under key ${JSON.stringify(change.key)}`);
        }
        inserted.add(key(change.schema, change.table));
      } else if (change.op === 'update' && cols.length > 0 && keyCols.length > 0) {
        const sets = cols.map((c) => `${quoteIdent(c)} = v.${quoteIdent(c)}`).join(', ');
        await db.query(
          `UPDATE ONLY ${ref} AS t SET ${sets} FROM ${rowsOf(change.schema, change.table, 1, 'one')} AS v, ${keyed(2)} WHERE ${match}`,
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
