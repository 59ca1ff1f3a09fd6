// The evaluation warehouse: ledgers and scores in the seed's Postgres tables, on embedded
// PGlite (a local folder) or a Postgres server. Ingest is idempotent: per trace, delete then
// insert in one transaction, with every value (created_at too) taken from the recording.
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { buildLedger, type Ledger, type LedgerOptions } from '../ledger/index.js';
import { TapedeckError } from '../recording/errors.js';
import type { Recording } from '../recording/types.js';
import { migrate } from './migrations.js';
import { normalizeScores, type Scores, type ScoresInput } from './scores.js';
import { openPglite, openPostgres, type QueryResult, type SqlClient, type SqlSession } from './sql.js';

export const DEFAULT_WAREHOUSE_DIR = '.tapedeck/warehouse';

export interface WarehouseOptions {
  /** A Postgres server (postgres://…); wins over `dir`. */
  url?: string;
  /** The PGlite data folder (default .tapedeck/warehouse); ':memory:' for a throwaway one. */
  dir?: string;
}

export type TableName =
  | 'trace_run'
  | 'trace_step'
  | 'trace_context_breakdown'
  | 'trace_tool_event'
  | 'trace_price_snapshot'
  | 'eval_task_result'
  | 'eval_validator_result'
  | 'eval_state_result';

export interface IngestResult {
  traceId: string;
  recordingId: string;
  rows: Record<TableName, number>;
}

export interface Warehouse {
  readonly kind: 'pglite' | 'postgres';
  /** Where it lives: the folder, or the server URL without its password. */
  readonly location: string;
  /** Builds the recording's ledger and stores it with its scores (replacing what that trace had). */
  ingest(recording: Recording, scores?: ScoresInput | ScoresInput[], options?: LedgerOptions): Promise<IngestResult>;
  /** Stores an already-built ledger. */
  ingestLedger(ledger: Ledger, scores?: ScoresInput | ScoresInput[]): Promise<IngestResult>;
  query(sql: string, params?: unknown[]): Promise<QueryResult>;
  /** One or more statements without parameters; the last one's result. */
  exec(sql: string): Promise<QueryResult>;
  close(): Promise<void>;
}

/**
 * Opens (and migrates) the warehouse.
 * @example const wh = await openWarehouse({ dir: '.tapedeck/warehouse' }); await wh.ingest(rec); await wh.close();
 */
export async function openWarehouse(options: WarehouseOptions = {}): Promise<Warehouse> {
  let db: SqlClient;
  let location: string;
  if (options.url) {
    location = redactUrl(options.url);
    try {
      db = await openPostgres(options.url);
      await db.query('SELECT 1');
    } catch (error) {
      throw new TapedeckError(
        'WAREHOUSE_UNREACHABLE',
        `cannot reach the warehouse database ${location}: ${(error as Error).message}`,
      );
    }
  } else {
    const dir = options.dir ?? DEFAULT_WAREHOUSE_DIR;
    location = dir === ':memory:' ? ':memory:' : resolve(dir);
    if (location !== ':memory:' && existsSync(location) && !statSync(location).isDirectory()) {
      throw new TapedeckError(
        'WAREHOUSE_UNREADABLE',
        `${dir} is a file, not a warehouse folder: give a folder or a postgres:// URL`,
      );
    }
    try {
      db = await openPglite(dir === ':memory:' ? undefined : location);
    } catch (error) {
      throw new TapedeckError(
        'WAREHOUSE_UNREADABLE',
        `cannot open the warehouse in ${location}: ${(error as Error).message}`,
      );
    }
  }
  try {
    await migrate(db);
  } catch (error) {
    await db.close().catch(() => undefined);
    throw error;
  }
  const ingestLedger = (ledger: Ledger, scores?: ScoresInput | ScoresInput[]): Promise<IngestResult> => {
    // camelCase as evaluateRecording returns them, or the seed's snake_case: the rows are snake_case
    const list = (scores === undefined ? [] : Array.isArray(scores) ? scores : [scores]).map((s, i) =>
      normalizeScores(s, `scores[${i}]`),
    );
    return db.transaction((tx) => writeLedger(tx, ledger, list));
  };
  return {
    kind: db.kind,
    location,
    ingest: (recording, scores, ledgerOptions) => ingestLedger(buildLedger(recording, ledgerOptions), scores),
    ingestLedger,
    query: (sql, params) => db.query(sql, params),
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
  };
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/:[^:@/]+@/, ':***@');
  }
}

const BATCH = 5000;

async function insertRows(tx: SqlSession, table: TableName, rows: ReadonlyArray<object>): Promise<number> {
  for (let i = 0; i < rows.length; i += BATCH) {
    const chunk = rows.slice(i, i + BATCH);
    await tx.query(`INSERT INTO ${table} SELECT * FROM jsonb_populate_recordset(NULL::${table}, $1::jsonb)`, [
      JSON.stringify(chunk),
    ]);
  }
  return rows.length;
}

async function writeLedger(tx: SqlSession, ledger: Ledger, scores: Scores[]): Promise<IngestResult> {
  const traceId = ledger.traceId;
  const createdAt = ledger.run.created_at;
  await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [traceId]);
  type Row = Record<string, unknown>;
  const tasks: Row[] = scores.flatMap((s) =>
    s.task ? [{ created_at: createdAt, ...s.task, trace_id: s.task.trace_id ?? traceId }] : [],
  );
  const validators: Row[] = scores.flatMap((s) => s.validators.map((v) => ({ created_at: createdAt, ...v })));
  const states: Row[] = scores.flatMap((s) =>
    s.state.map((v) => ({ created_at: createdAt, ...v, trace_id: v.trace_id ?? traceId })),
  );
  const evalIds = [...new Set([...tasks, ...validators, ...states].map((r) => String(r.eval_id)))];
  const run = { ...ledger.run };
  const taskId = tasks[0]?.task_id;
  if (typeof taskId === 'string') run.task_id = taskId;

  for (const table of [
    'trace_step',
    'trace_context_breakdown',
    'trace_tool_event',
    'trace_price_snapshot',
    'trace_run',
  ] as const) {
    await tx.query(`DELETE FROM ${table} WHERE trace_id = $1`, [traceId]);
  }
  if (evalIds.length > 0) {
    for (const table of ['eval_task_result', 'eval_validator_result', 'eval_state_result'] as const) {
      await tx.query(`DELETE FROM ${table} WHERE eval_id = ANY($1::text[])`, [evalIds]);
    }
  }
  const rows: Record<TableName, number> = {
    trace_run: await insertRows(tx, 'trace_run', [run]),
    trace_step: await insertRows(tx, 'trace_step', ledger.steps),
    trace_context_breakdown: await insertRows(tx, 'trace_context_breakdown', ledger.context),
    trace_tool_event: await insertRows(tx, 'trace_tool_event', ledger.tools),
    trace_price_snapshot: await insertRows(tx, 'trace_price_snapshot', ledger.prices),
    eval_task_result: await insertRows(tx, 'eval_task_result', tasks),
    eval_validator_result: await insertRows(tx, 'eval_validator_result', validators),
    eval_state_result: await insertRows(tx, 'eval_state_result', states),
  };
  return { traceId, recordingId: ledger.recordingId, rows };
}
