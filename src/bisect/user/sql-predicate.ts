// A SQL predicate: a query against the world's database at step k. Rows returned = bad (or a boolean column).
import type { PredicateInput, PredicateResult, StepPredicate } from '../predicate.js';
import { openWorldDb, type QueryResult, type WorldDb } from './world-db.js';

const GOOD_COLUMNS = ['good', 'ok', 'pass', 'passed'];
const BAD_COLUMNS = ['bad', 'fail', 'failed'];

/**
 * The verdict of a query result. A single row with a boolean column named good/ok/pass (true = good),
 * bad/fail (true = bad) or skip decides by that column; otherwise any row returned means bad.
 */
export function verdictOfRows(result: QueryResult): PredicateResult {
  const [row] = result.rows;
  if (result.rows.length === 1 && row) {
    if (row.skip === true) return { verdict: 'skip', reason: 'the query answered skip' };
    const good = GOOD_COLUMNS.find((c) => typeof row[c] === 'boolean');
    if (good) return row[good] ? { verdict: 'good' } : { verdict: 'bad', reason: `the query answered ${good} = false` };
    const bad = BAD_COLUMNS.find((c) => typeof row[c] === 'boolean');
    if (bad) return row[bad] ? { verdict: 'bad', reason: `the query answered ${bad} = true` } : { verdict: 'good' };
  }
  if (result.rows.length === 0) return { verdict: 'good' };
  const sample = JSON.stringify(result.rows[0]);
  return {
    verdict: 'bad',
    reason: `the query returned ${result.rows.length} row${result.rows.length === 1 ? '' : 's'}, first: ${sample.length > 200 ? `${sample.slice(0, 200)}…` : sample}`,
  };
}

export interface SqlPredicateOptions {
  name?: string;
  /** A world database to share between searches (the caller closes it); default: one of its own per search. */
  db?: WorldDb;
}

/**
 * A predicate that runs `sql` against worldAt(k).db in an in-memory Postgres, with the belief at k
 * beside it in schema `tapedeck` (decisions, actions, observations, claims) to join against.
 */
export function sqlPredicate(sql: string, options: SqlPredicateOptions = {}): StepPredicate {
  const name = options.name ?? 'sql';
  const shared = options.db;
  let db: Promise<WorldDb> | undefined = shared ? Promise.resolve(shared) : undefined;
  return {
    name,
    async evaluate(input: PredicateInput): Promise<PredicateResult> {
      db ??= openWorldDb(input.world.db);
      return verdictOfRows(await (await db).queryAt(input.world.db, sql, input.belief));
    },
    async close() {
      if (db && !shared) await (await db).close();
      db = shared ? db : undefined;
    },
  };
}
