// Postgres, the one home: reading a database into the snapshot format, building a database from
// a snapshot's description (never from recorded SQL), change capture on a recorded database, the
// wire-protocol gate in front of a sandbox database, and finding what dead runs left behind.
export { createDbTracker, type DbTracker, type TrackerOptions } from './capture.js';
export { type ConnectOptions, connectDb } from './connect.js';
export { renderDdl } from './ddl.js';
export { describeObjects } from './describe-objects.js';
export {
  createExtensions,
  isSandboxExtension,
  type PgliteExtension,
  pgliteExtensions,
  wantedExtensions,
} from './extensions.js';
export { type DbGate, type GateOptions, openGate, type Upstream } from './gate.js';
export { type LeftoverReport, removeCaptureLeftovers, removeSandboxLeftovers } from './leftovers.js';
export {
  CAPTURE_LOCK_CLASS,
  CAPTURE_SCHEMA_PREFIX,
  CAPTURE_TRIGGER_PREFIX,
  lockKeyOf,
  SANDBOX_LOCK_CLASS,
  SANDBOX_PREFIX,
} from './locks.js';
export {
  checkSnapshotName,
  listNamedSnapshots,
  type NamedSnapshot,
  readNamedSnapshot,
  removeNamedSnapshot,
  type SaveSnapshotOptions,
  SNAPSHOT_FORMAT,
  type SnapshotInfo,
  saveNamedSnapshot,
  snapshotsDir,
} from './named-snapshots.js';
export { type LaidWorld, layWorldOver } from './overlay.js';
export { type DatabaseItem, reapDatabaseItem } from './reap.js';
export {
  applyRowChanges,
  invertRowChanges,
  type SeedReport,
  searchPathSetting,
  seedDatabase,
  setDatabaseSearchPath,
} from './seed.js';
export {
  describeSequences,
  describeTables,
  installNormalizer,
  jsonTextSql,
  normalizedKind,
  readRows,
  snapshotDatabase,
  textHeld,
  textValuesSql,
  userSchemas,
} from './snapshot.js';
export {
  defaultSql,
  isPostgresUrl,
  ownRowSql,
  type Queryable,
  quoteIdent,
  quoteLiteral,
  redactDbUrl,
  sqlType,
  tableRef,
  utcTimestampSql,
  withDatabase,
} from './sql.js';
export { type SqlToken, tokenize } from './sql-tokens.js';
export {
  CANCEL_REQUEST,
  cstrings,
  errorResponse,
  GSS_REQUEST,
  listenOnLoopback,
  MAX_STARTUP,
  PROTOCOL_3,
  parseParams,
  SSL_REQUEST,
  wireMessage,
} from './wire.js';
