// The evaluation warehouse: the seed's eval and trace tables in Postgres (PGlite or a server).

export { warehouseOptionsFrom } from './location.js';
export { MIGRATIONS, type Migration, migrate, SCHEMA_VERSION } from './migrations.js';
export {
  type EnqueueOptions,
  JOB_KINDS,
  JOB_STATES,
  type Job,
  type JobHandler,
  type JobInfo,
  type JobKind,
  type JobState,
  openQueue,
  QUEUE_SCHEMA,
  type Queue,
  type QueueOptions,
  runWorker,
  type WorkerOptions,
} from './queue.js';
export { loadScores, normalizeScores, type Scores, type ScoresInput, scoresTraceId } from './scores.js';
export type { QueryResult } from './sql.js';
export {
  DEFAULT_WAREHOUSE_DIR,
  type IngestResult,
  openWarehouse,
  type TableName,
  type Warehouse,
  type WarehouseOptions,
} from './warehouse.js';
