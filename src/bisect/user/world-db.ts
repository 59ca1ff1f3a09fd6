// The world's database at a step, loaded into an in-memory PGlite for SQL predicates.
import type { Extensions, PGlite } from '@electric-sql/pglite';
import { pgliteExtensions, searchPathSetting, seedDatabase } from '../../postgres/index.js';
import type { DbSnapshot } from '../../recording/index.js';
import { jsonOrText, TapedeckError } from '../../recording/index.js';
import type { Belief } from '../belief.js';

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

/**
 * Opens the in-memory database; nothing touches the disk, and close() releases it. `world`: a
 * snapshot whose extensions (those a sandbox creates) PGlite loads, so their types and operators
 * answer the predicate as in the recorded database; without it their columns are text.
 */
export async function openWorldDb(world?: Pick<DbSnapshot, 'extensions'>): Promise<WorldDb> {
  // Loaded here, not at the top: importing 'tapedeck' (a replay entry calling runInput()) must not
  // load PGlite, whose module draws Math.random and would take the agent's recorded values.
  const { PGlite } = await import('@electric-sql/pglite');
  const extensions = world ? await pgliteExtensions(world) : {};
  const db = await PGlite.create(Object.keys(extensions).length > 0 ? { extensions: extensions as Extensions } : {});
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
  // Built from the snapshot's description, never by running its recorded SQL (a recording is data).
  await seedDatabase(db, snapshot, { transaction: false });
  // Unqualified names in the predicate find the tables the recorded run's did (rolled back with the rest).
  const path = searchPathSetting(snapshot);
  if (path !== undefined) await db.exec(`SET LOCAL search_path TO ${path}`);
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
      d.toolCalls.map((c) => ({ step: d.step, call_id: c.id, name: c.name, args: jsonOrText(c.arguments) })),
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
