// The world's database at a step, loaded into an in-memory PGlite for SQL predicates.
// (A small loader of bisect's own; the replay engineer's sandbox openDbSandbox can replace it.)
import { PGlite } from '@electric-sql/pglite';
import type { DbSnapshot, DbTable } from '../../recording/index.js';
import { TapedeckError } from '../../recording/index.js';
import type { Belief } from '../belief.js';
import { parseMaybeJson } from '../canonical.js';

export interface QueryResult {
  fields: string[];
  rows: Array<Record<string, unknown>>;
}

/** An in-memory Postgres that answers a query against one world snapshot at a time. */
export interface WorldDb {
  /**
   * Loads `snapshot` (and the belief, as tables in schema `tapedeck`), runs `sql`, and throws the
   * loaded state away again (one transaction, rolled back).
   */
  queryAt(snapshot: DbSnapshot | undefined, sql: string, belief?: Belief): Promise<QueryResult>;
  close(): Promise<void>;
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** Opens the in-memory database; nothing touches the disk, and close() releases it. */
export async function openWorldDb(): Promise<WorldDb> {
  const db = await PGlite.create();
  let closed = false;
  return {
    async queryAt(snapshot, sql, belief) {
      await db.exec('BEGIN');
      try {
        if (snapshot) await load(db, snapshot);
        if (belief) await loadBelief(db, belief);
        let results: Awaited<ReturnType<PGlite['exec']>>;
        try {
          results = await db.exec(sql);
        } catch (error) {
          throw new TapedeckError(
            'BISECT_SQL_ERROR',
            `the SQL predicate failed: ${error instanceof Error ? error.message : String(error)}\n  query: ${sql}`,
            { cause: error },
          );
        }
        const last = [...results].reverse().find((r) => r.fields.length > 0) ?? results.at(-1);
        return {
          fields: last?.fields.map((f) => f.name) ?? [],
          rows: (last?.rows ?? []) as Array<Record<string, unknown>>,
        };
      } finally {
        await db.exec('ROLLBACK');
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.close();
    },
  };
}

async function load(db: PGlite, snapshot: DbSnapshot): Promise<void> {
  // Foreign keys are checked by triggers; replica mode lets rows load in any table order.
  await db.exec('SET LOCAL session_replication_role = replica');
  for (const schema of snapshot.schemas) await db.exec(`CREATE SCHEMA IF NOT EXISTS ${quote(schema)}`);
  await db.exec('SAVEPOINT ddl');
  try {
    for (const statement of snapshot.ddl) {
      if (/^\s*CREATE\s+SCHEMA\b/i.test(statement)) continue;
      await db.exec(statement);
    }
    await db.exec('RELEASE SAVEPOINT ddl');
  } catch {
    // DDL the embedded Postgres cannot run (extensions, owners): fall back to the column lists.
    await db.exec('ROLLBACK TO SAVEPOINT ddl');
    for (const table of snapshot.tables) await db.exec(createFromColumns(table));
  }
  for (const table of snapshot.tables) {
    if (table.rows.length === 0) continue;
    const name = `${quote(table.schema)}.${quote(table.name)}`;
    try {
      await db.query(
        `INSERT INTO ${name} OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_recordset(NULL::${name}, $1::json)`,
        [JSON.stringify(table.rows)],
      );
    } catch (error) {
      throw new TapedeckError(
        'BISECT_WORLD_DB',
        `could not load the rows of ${table.schema}.${table.name} into the sandbox database: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }
}

function createFromColumns(table: DbTable): string {
  const columns = table.columns.map((c) => `${quote(c.name)} ${c.type}${c.nullable ? '' : ' NOT NULL'}`);
  if (columns.length === 0) {
    const names = new Set(table.rows.flatMap((r) => Object.keys(r)));
    for (const n of names) columns.push(`${quote(n)} text`);
  }
  return `CREATE TABLE IF NOT EXISTS ${quote(table.schema)}.${quote(table.name)} (${columns.join(', ')})`;
}

/** The belief tables a SQL predicate can join with the world's tables. */
export const BELIEF_DDL = [
  'CREATE SCHEMA tapedeck',
  'CREATE TABLE tapedeck.decisions (step integer, call_id text, name text, args jsonb)',
  'CREATE TABLE tapedeck.actions (step integer, state_type text, name text, args jsonb, result text, mutating boolean, completed boolean)',
  'CREATE TABLE tapedeck.observations (step integer, source text, text text)',
  'CREATE TABLE tapedeck.claims (step integer, text text)',
];

async function loadBelief(db: PGlite, belief: Belief): Promise<void> {
  for (const statement of BELIEF_DDL) await db.exec(statement);
  const json = (value: unknown): string => JSON.stringify(value === undefined ? null : value);
  const insert = async (table: string, rows: unknown[]): Promise<void> => {
    if (rows.length === 0) return;
    await db.query(
      `INSERT INTO tapedeck.${table} SELECT * FROM json_populate_recordset(NULL::tapedeck.${table}, $1::json)`,
      [JSON.stringify(rows)],
    );
  };
  await insert(
    'decisions',
    belief.decisions.flatMap((d) =>
      d.toolCalls.map((c) => ({ step: d.step, call_id: c.id, name: c.name, args: parseMaybeJson(c.arguments) })),
    ),
  );
  await insert(
    'actions',
    belief.actions.map((a) => ({
      step: a.step,
      state_type: a.stateType,
      name: a.name,
      args: typeof a.args === 'object' ? a.args : json(a.args),
      result: a.result,
      mutating: a.mutating,
      completed: a.completed,
    })),
  );
  await insert('observations', belief.observations);
  await insert('claims', belief.claims);
}
