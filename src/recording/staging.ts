// A recording folder appears whole or not at all. It is made under a temporary name in its parent
// (`.tmp-<id>-<host>-<pid>-<random>`), filled until it is a readable recording (manifest.json and
// events.jsonl), and renamed into place; it is removed the same way in reverse (renamed to a
// temporary name, then deleted). A process killed in between leaves a `.tmp-` folder, which
// readers skip (they skip every dot-folder) and the next listing of that parent removes once its
// owner is gone (`sweepStaging`).
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { disk } from './disk.js';
import { TapedeckError } from './errors.js';

export const STAGING_PREFIX = '.tmp-';
/** A temp folder older than this is stale whatever its owner (a reused pid, another machine's folder). */
export const STAGING_MAX_AGE_MS = 60 * 60_000;
const NAME = /^\.tmp-.*-([0-9a-f]{6})-(\d+)-[0-9a-f]{8}$/;

let hostTag: string | undefined;
/** Six hex digits of this machine's name: a pid means something only on its own machine. */
function thisHost(): string {
  hostTag ??= createHash('sha256').update(hostname()).digest('hex').slice(0, 6);
  return hostTag;
}

/** A fresh temporary name for `dir` in its parent, owned by this process. */
export function stagingPath(dir: string): string {
  const id = basename(dir).slice(0, 100);
  return join(dirname(dir), `${STAGING_PREFIX}${id}-${thisHost()}-${process.pid}-${randomBytes(4).toString('hex')}`);
}

export function isStagingName(name: string): boolean {
  return name.startsWith(STAGING_PREFIX);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether a temp folder's owner is gone: a dead pid on this machine, or older than STAGING_MAX_AGE_MS. */
async function isStale(path: string, name: string, now: number): Promise<boolean> {
  const match = NAME.exec(name);
  if (match && match[1] === thisHost() && Number(match[2]) !== process.pid && !isAlive(Number(match[2]))) return true;
  try {
    return now - (await stat(path)).mtimeMs > STAGING_MAX_AGE_MS;
  } catch {
    return false;
  }
}

/**
 * Removes the stale temp folders in `parent` (see isStale); returns their paths. `names`: the
 * parent's entries when the caller has read them already.
 */
export async function sweepStaging(parent: string, names?: string[]): Promise<string[]> {
  let entries = names;
  if (entries === undefined) {
    try {
      entries = await readdir(parent);
    } catch {
      return [];
    }
  }
  const removed: string[] = [];
  const now = Date.now();
  for (const name of entries) {
    if (!isStagingName(name)) continue;
    const path = join(parent, name);
    if (!(await isStale(path, name, now))) continue;
    try {
      await rm(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // Not ours to remove (permissions): it stays hidden from readers all the same.
    }
  }
  return removed;
}

export interface StagedFolder {
  /** Where to write the recording's files now. */
  readonly path: string;
  /** Renames the folder into place (nothing to do when it was written in place). */
  publish(): Promise<void>;
  /** Removes what was written (a recording that could not be started). */
  abandon(): Promise<void>;
}

/**
 * Prepares to create the recording folder `dir`: a temp folder beside it, renamed onto `dir` by
 * `publish`. A folder that exists already and is empty is replaced by the rename; one that holds
 * other files (an --out folder the user made) is written in place, as it is not ours to make.
 */
export async function stageRecordingFolder(dir: string): Promise<StagedFolder> {
  // existsSync first: a missing folder (the usual case) costs no thrown error.
  if (existsSync(dir) && (await disk.readdir(dir)).length > 0) {
    return { path: dir, publish: async () => {}, abandon: async () => {} };
  }
  const path = stagingPath(dir);
  try {
    await disk.mkdir(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await disk.mkdir(dirname(dir), { recursive: true });
    await disk.mkdir(path);
  }
  return {
    path,
    async publish() {
      try {
        await disk.rename(path, dir);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error;
        await disk.rm(path, { recursive: true, force: true });
        throw new TapedeckError(
          'RECORDING_EXISTS',
          `${dir} was filled by someone else while the recording was being created; choose a new directory.`,
        );
      }
    },
    async abandon() {
      await disk.rm(path, { recursive: true, force: true });
    },
  };
}

/**
 * Removes a recording folder so that it is never seen half removed: renamed to a temp name first
 * (a kill after that leaves a `.tmp-` folder for the next listing), then deleted.
 */
export async function removeRecordingFolder(dir: string): Promise<void> {
  const hidden = stagingPath(dir);
  try {
    await disk.rename(dir, hidden);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    await disk.rm(dir, { recursive: true, force: true });
    return;
  }
  await disk.rm(hidden, { recursive: true, force: true });
}
