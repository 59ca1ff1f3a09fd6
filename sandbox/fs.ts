// Filesystem worlds: materialising a snapshot into a real folder (time travel), and the seed
// the replay preload loads into its memfs volume.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FsSnapshot } from '../src/recording/index.js';
import { fileBytes, TapedeckError } from '../src/recording/index.js';

export type ReadBlob = (sha256: string) => Buffer | Uint8Array;

/** The absolute path of a snapshot entry under `root`; refuses paths that escape it. */
export function entryPath(root: string, relative: string): string {
  const abs = path.resolve(root, relative);
  const base = path.resolve(root);
  if (path.isAbsolute(relative) || (abs !== base && !abs.startsWith(base + path.sep))) {
    throw new TapedeckError(
      'UNSAFE_PATH',
      `Snapshot path "${relative}" escapes its root; the recording is damaged or hostile.`,
    );
  }
  return abs;
}

/**
 * Writes every file of `fs` under `dir` (created if missing) with its recorded mode; contents
 * inline in their entries or read through `readBlob`.
 * @example await materializeFs(worldAt(rec, 5).fs, rec.readBlob, '/tmp/world-5')
 */
export async function materializeFs(fs: FsSnapshot, readBlob: ReadBlob, dir: string): Promise<void> {
  await writing(dir, undefined, () => mkdir(dir, { recursive: true }));
  const made = new Set<string>();
  for (const [relative, entry] of Object.entries(fs.files)) {
    const abs = entryPath(dir, relative);
    const parent = path.dirname(abs);
    if (!made.has(parent)) {
      await writing(dir, relative, () => mkdir(parent, { recursive: true }));
      made.add(parent);
    }
    const bytes = fileBytes(entry, readBlob);
    await writing(dir, relative, () => writeFile(abs, bytes, { mode: entry.mode & 0o777 }));
  }
}

/**
 * Runs one write of materializeFs; a file system error (no space, no permission, a path that is
 * a file and a folder at once) becomes a one-line TapedeckError naming the file and the folder.
 */
async function writing(dir: string, relative: string | undefined, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code !== 'string') throw error;
    const what =
      relative === undefined ? 'the world folder' : `the world's file ${JSON.stringify(relative.slice(0, 200))}`;
    const message = (error as Error).message.replace(/\s+/g, ' ').slice(0, 500);
    throw new TapedeckError('WORLD_WRITE_FAILED', `cannot write ${what} into ${dir}: ${message}`, { cause: error });
  }
}

/** The memfs seed of the replay preload: [absolute path, mode, base64 content] per file. */
export function fsSeed(
  fs: FsSnapshot | undefined,
  readBlob: ReadBlob,
  root: string,
): { files: Array<[string, number, string]> } {
  const files: Array<[string, number, string]> = [];
  for (const [relative, entry] of Object.entries(fs?.files ?? {})) {
    files.push([entryPath(root, relative), entry.mode, Buffer.from(fileBytes(entry, readBlob)).toString('base64')]);
  }
  return { files };
}

/** Removes a folder this module made (best effort, for cleanup paths). */
export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true }).catch(() => {});
}
