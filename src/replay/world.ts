// The world a replay leaves behind, materialised on disk for inspection: files under <dir>/fs,
// rows in <dir>/db.json. Used for time travel (`--until K`, materializeWorld) without a database.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { materializeFs } from '../../sandbox/fs.js';
import { type DbSnapshot, type FsSnapshot, type Recording, worldAt } from '../recording/index.js';

/** Writes a world: files under dir/fs, and the database's rows in dir/db.json when there is one. */
export async function writeWorld(
  dir: string,
  fs: FsSnapshot,
  readBlob: (sha: string) => Buffer,
  db?: DbSnapshot,
): Promise<void> {
  await materializeFs(fs, readBlob, path.join(dir, 'fs'));
  if (db) await writeFile(path.join(dir, 'db.json'), `${JSON.stringify(db, null, 2)}\n`);
}

/**
 * Materialises the recorded world after step k (time travel without running the agent):
 * files under dir/fs and, when the recording has a database, rows in dir/db.json.
 */
export async function materializeWorld(
  recording: Recording,
  step: number,
  dir: string,
): Promise<{ fs: FsSnapshot; db?: DbSnapshot }> {
  const world = worldAt(recording, step);
  await writeWorld(dir, world.fs, recording.readBlob, world.db);
  return world;
}
