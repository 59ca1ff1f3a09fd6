// Named development snapshots: the schema and rows of a development or staging database, taken
// with the one snapshotter (snapshot.ts) and kept under the project
// (`.tapedeck/snapshots/<name>/`: snapshot.json, what it is and the sha256 of db.json; db.json, the
// snapshot in a recording's db.json format). A replay seeds its database sandbox from one and lays
// the recorded run's rows over it (`--seed-snapshot`, overlay.ts). Written whole (a
// staging folder renamed into place); read as untrusted data (size and depth limits, zod, the
// sha256 checked).
import { createHash } from 'node:crypto';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as z from 'zod';
import {
  type DbSnapshot,
  isStagingName,
  parseDbSnapshot,
  readJsonFile,
  removeRecordingFolder,
  stagingPath,
  sweepStaging,
  TapedeckError,
} from '../recording/index.js';
import { connectDb } from './connect.js';
import { snapshotDatabase, userSchemas } from './snapshot.js';
import { checkSnapshotName, SNAPSHOT_NAME } from './snapshot-name.js';
import { snapshotsDir } from './snapshots-dir.js';
import { redactDbUrl } from './sql.js';

export { checkSnapshotName } from './snapshot-name.js';
export { snapshotsDir } from './snapshots-dir.js';

export const SNAPSHOT_FORMAT = 'tapedeck.snapshot/v1';

const SnapshotInfoSchema = z
  .object({
    format: z.literal(SNAPSHOT_FORMAT),
    name: z.string().regex(SNAPSHOT_NAME),
    createdAt: z.string().max(40),
    /** The database it was taken from, without its password. */
    source: z.string().max(2000),
    schemas: z.array(z.string().max(63)).max(10_000),
    tables: z.number().int().nonnegative(),
    rows: z.number().int().nonnegative(),
    /** Size and sha256 of db.json: checked on every read. */
    bytes: z.number().int().nonnegative(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .strict();

export type SnapshotInfo = z.infer<typeof SnapshotInfoSchema>;

/** A named snapshot read and checked. */
export interface NamedSnapshot {
  info: SnapshotInfo;
  db: DbSnapshot;
  warnings: string[];
}

export interface SaveSnapshotOptions {
  /** The schemas to take (default: every non-system schema of the database). */
  schemas?: string[];
  /** Where snapshots live (default: snapshotsDir()). */
  dir?: string;
  /** Replace a snapshot of the same name. */
  force?: boolean;
}

/**
 * Takes the schema and rows of the database at `url` (one REPEATABLE READ transaction, as the
 * recorder's snapshot mode does) and stores them as snapshot `name`.
 * @example await saveNamedSnapshot('dev', 'postgres://app@127.0.0.1:5432/app_dev', { schemas: ['shop'] })
 */
export async function saveNamedSnapshot(
  name: string,
  url: string,
  options: SaveSnapshotOptions = {},
): Promise<SnapshotInfo> {
  checkSnapshotName(name);
  const dir = options.dir ?? snapshotsDir();
  const folder = path.join(dir, name);
  if (!options.force && (await exists(folder))) {
    throw new TapedeckError(
      'SNAPSHOT_EXISTS',
      `a snapshot named "${name}" exists in ${dir}; pass --force to replace it, or choose another name`,
    );
  }
  const client = await connectDb(url, { what: 'the database', application: 'tapedeck snapshot' });
  let db: DbSnapshot;
  try {
    const present = await userSchemas(client);
    const schemas = options.schemas ?? present;
    const missing = schemas.find((s) => !present.includes(s));
    if (missing !== undefined) {
      throw new TapedeckError(
        'BAD_OPTION',
        `the database ${redactDbUrl(url)} has no schema "${missing}" (it has: ${present.join(', ') || 'none'})`,
      );
    }
    db = (await snapshotDatabase(client, schemas)).snapshot;
  } finally {
    await client.end().catch(() => {});
  }
  const text = JSON.stringify(db);
  const info: SnapshotInfo = {
    format: SNAPSHOT_FORMAT,
    name,
    createdAt: new Date().toISOString(),
    source: redactDbUrl(url),
    schemas: db.schemas,
    tables: db.tables.length,
    rows: db.tables.reduce((n, t) => n + t.rows.length, 0),
    bytes: Buffer.byteLength(text),
    sha256: createHash('sha256').update(text).digest('hex'),
  };
  await mkdir(dir, { recursive: true });
  // A killed save's copy (a whole database's rows) goes now, not at the next listing.
  await sweepStaging(dir);
  const staged = stagingPath(folder);
  try {
    await mkdir(staged);
    await writeFile(path.join(staged, 'db.json'), text);
    await writeFile(path.join(staged, 'snapshot.json'), `${JSON.stringify(info, null, 2)}\n`);
    if (options.force) await removeRecordingFolder(folder);
    await rename(staged, folder);
  } catch (error) {
    await rm(staged, { recursive: true, force: true });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST')
      throw new TapedeckError(
        'SNAPSHOT_EXISTS',
        `a snapshot named "${name}" was saved in ${dir} meanwhile; pass --force to replace it`,
      );
    throw error;
  }
  return info;
}

async function exists(folder: string): Promise<boolean> {
  try {
    await readdir(folder);
    return true;
  } catch {
    return false;
  }
}

function notFound(name: string, dir: string): TapedeckError {
  return new TapedeckError(
    'SNAPSHOT_NOT_FOUND',
    `no snapshot named "${name}" in ${dir} (tapedeck snapshot list shows the saved ones; tapedeck snapshot save ${name} --db <url> makes it)`,
  );
}

/** snapshot.json of `folder`, checked; undefined when there is none. */
async function readInfo(folder: string, name: string): Promise<SnapshotInfo | undefined> {
  const json = await readJsonFile(folder, 'snapshot.json');
  if (json === undefined) return undefined;
  const parsed = SnapshotInfoSchema.safeParse(json.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TapedeckError(
      'BAD_SNAPSHOT',
      `${path.join(folder, 'snapshot.json')}: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  if (parsed.data.name !== name) {
    throw new TapedeckError(
      'BAD_SNAPSHOT',
      `${path.join(folder, 'snapshot.json')}: name: it names "${parsed.data.name.slice(0, 80)}", not "${name}" (its folder)`,
    );
  }
  return parsed.data;
}

/**
 * Reads snapshot `name`: snapshot.json, then db.json against its sha256, then db.json as a
 * recording's db.json is read (zod, names and keys). Every problem is one line naming the file.
 */
export async function readNamedSnapshot(name: string, dir: string = snapshotsDir()): Promise<NamedSnapshot> {
  checkSnapshotName(name);
  const folder = path.join(dir, name);
  const info = await readInfo(folder, name);
  if (info === undefined) throw notFound(name, dir);
  const json = await readJsonFile(folder, 'db.json');
  if (json === undefined)
    throw new TapedeckError('BAD_SNAPSHOT', `${path.join(folder, 'db.json')} is missing: save the snapshot again`);
  const sha256 = createHash('sha256').update(json.text).digest('hex');
  if (sha256 !== info.sha256) {
    throw new TapedeckError(
      'SNAPSHOT_TAMPERED',
      `${path.join(folder, 'db.json')} does not match the sha256 in snapshot.json (changed since it was saved): save the snapshot again`,
    );
  }
  const warnings: string[] = [];
  const db = parseDbSnapshot(folder, 'db.json', json, warnings);
  return { info, db, warnings };
}

/** The saved snapshots (sorted by name); one whose snapshot.json cannot be read is listed with its problem. */
export async function listNamedSnapshots(
  dir: string = snapshotsDir(),
): Promise<Array<SnapshotInfo | { name: string; problem: string }>> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  await sweepStaging(dir, names);
  const out: Array<SnapshotInfo | { name: string; problem: string }> = [];
  for (const name of names.sort()) {
    if (isStagingName(name) || name.startsWith('.') || !SNAPSHOT_NAME.test(name)) continue;
    try {
      const info = await readInfo(path.join(dir, name), name);
      out.push(info ?? { name, problem: 'no snapshot.json' });
    } catch (error) {
      out.push({ name, problem: (error as Error).message });
    }
  }
  return out;
}

/** Removes snapshot `name` (never seen half removed: renamed aside first). */
export async function removeNamedSnapshot(name: string, dir: string = snapshotsDir()): Promise<void> {
  checkSnapshotName(name);
  const folder = path.join(dir, name);
  await sweepStaging(dir);
  if (!(await exists(folder))) throw notFound(name, dir);
  await removeRecordingFolder(folder);
}
