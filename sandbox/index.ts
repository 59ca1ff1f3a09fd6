// The isolation a replay runs in: fs worlds (memfs seed, materialisation), database sandboxes
// (PGlite, template clone, testcontainers) and the child-process preload (sandbox/preload/replay.mjs).
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

/** Absolute path of the replay preload, for `node --import`. */
export const REPLAY_PRELOAD = packagePath('sandbox/preload/replay.mjs');
