// The isolation a replay runs in: fs worlds (memfs seed, materialisation), database sandboxes
// (PGlite, a database of its own on a server, testcontainers), the Postgres relay, sandboxed
// services, the child-process preloads (sandbox/preload/replay.mjs, sandbox/preload/service.mjs),
// and the register of what a killed process leaves behind.
export {
  DB_SANDBOX_KINDS,
  type DbSandbox,
  type DbSandboxKind,
  type DbSandboxOptions,
  openDbSandbox,
} from './db.js';
export { entryPath, fsSeed, materializeFs, type ReadBlob } from './fs.js';
export {
  type LeftoverItem,
  leftoverDir,
  makeNotedTempDir,
  noteLeftover,
  type ReapReport,
  reapLeftovers,
} from './leftovers.js';
export { type PgRelay, type PgTarget, pgTargetOf, startPgRelay } from './pg-relay.js';
export { FILE_STEP_NAMES } from './preload/shared-file-ops.mjs';
export * from './protocol.js';
export { checkContainerRuntime } from './service-image.js';
export {
  fillPlaceholders,
  type SandboxService,
  type ServiceValues,
  serviceName,
  serviceOrigin,
} from './service-settings.js';
export { SERVICE_PRELOAD, type ServiceIsolation, startService } from './services.js';
