// The isolation a replay runs in: fs worlds (memfs seed, materialisation), database sandboxes
// (PGlite, template clone, testcontainers), the Postgres relay, sandboxed services and the
// child-process preloads (sandbox/preload/replay.mjs, sandbox/preload/service.mjs).
import { packagePath } from '../src/package.js';

export {
  applyRowChanges,
  type DbSandbox,
  type DbSandboxKind,
  type DbSandboxOptions,
  openDbSandbox,
  seedDatabase,
  snapshotDatabase,
} from './db.js';
export { entryPath, fsSeed, materializeFs, type ReadBlob } from './fs.js';
export { type PgRelay, type PgTarget, pgTargetOf, startPgRelay } from './pg-relay.js';
export {
  checkContainerRuntime,
  fillPlaceholders,
  type HostPort,
  type SandboxService,
  SERVICE_PRELOAD,
  type ServiceIsolation,
  type ServiceValues,
  serviceName,
  serviceOrigin,
  startService,
} from './services.js';

/** Absolute path of the replay preload, for `node --import`. */
export const REPLAY_PRELOAD = packagePath('sandbox/preload/replay.mjs');
