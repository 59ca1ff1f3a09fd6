// The folder named development snapshots live in (named-snapshots.ts reads and writes them): apart,
// so a replay's answer chain finds it without loading the snapshotter a run with no database never uses.
import path from 'node:path';
import { findConfigFile } from '../config/load.js';

/**
 * Where named snapshots live: $TAPEDECK_SNAPSHOTS_DIR, else the loaded project file's
 * (`configured`: its `snapshotsDir`, or `.tapedeck/snapshots` beside it, as withOverrides resolves
 * it), else `.tapedeck/snapshots` in the project's folder (the nearest tapedeck.config.* at or
 * above `cwd`), else in `cwd`.
 */
export function snapshotsDir(
  cwd: string = process.cwd(),
  env: NodeJS.ProcessEnv = process.env,
  configured?: string,
): string {
  if (env.TAPEDECK_SNAPSHOTS_DIR) return path.resolve(cwd, env.TAPEDECK_SNAPSHOTS_DIR);
  if (configured !== undefined) return path.resolve(cwd, configured);
  const config = findConfigFile(cwd);
  return path.join(config === undefined ? path.resolve(cwd) : path.dirname(config), '.tapedeck', 'snapshots');
}
