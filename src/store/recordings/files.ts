// A recording folder as a list of files (what a store keeps), and the checks a store's answer must
// pass before it is written to disk: a store is as untrusted as a recording.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { TapedeckError } from '../../recording/errors.js';
import { isSha256, readManifest } from '../../recording/index.js';
import { unsafePathReason } from '../../recording/paths.js';
import type { Manifest } from '../../recording/types.js';

export interface RecordingFile {
  /** POSIX path relative to the recording folder, e.g. `blobs/sha256/ab/cd…`. */
  path: string;
  size: number;
  sha256: string;
}

/** At most this many files in one recording, and this many bytes, from a store. */
export const MAX_STORED_FILES = 1_000_000;
export const MAX_STORED_BYTES = 64 * 1024 ** 3;
/** Recording ids a store accepts: one path segment of a URL and of a folder name. */
export const STORE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

export function checkStoreId(id: string, where: string): void {
  if (!STORE_ID.test(id) || id.includes('..')) {
    throw new TapedeckError(
      'BAD_RECORDING_ID',
      `${where}: recording id ${JSON.stringify(id)} cannot be stored (letters, digits, '.', '_' and '-' only, at most 200)`,
    );
  }
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * Every regular file of a recording folder with its size and sha256, sorted by path. Dot entries
 * (the recorder's `.spool/`) are left out; a symlink or a special file is refused (a store keeps data).
 */
export async function recordingFiles(dir: string): Promise<RecordingFile[]> {
  const out: RecordingFile[] = [];
  async function walk(rel: string): Promise<void> {
    for (const entry of await readdir(join(dir, rel), { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        const info = await lstat(join(dir, path));
        out.push({ path, size: info.size, sha256: await sha256File(join(dir, path)) });
      } else {
        throw new TapedeckError(
          'BAD_RECORDING',
          `${dir}/${path}: is not a regular file or folder; a recording holds files only`,
        );
      }
    }
  }
  await walk('');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The content hash of a recording: sha256 over its sorted `path sha256` lines. */
export function contentHashOf(files: readonly RecordingFile[]): string {
  const hash = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)))
    hash.update(`${f.path} ${f.sha256}\n`);
  return hash.digest('hex');
}

/** Refuses a file list from a store that would write outside the folder, or more than the limits allow. */
export function checkStoredFiles(files: readonly RecordingFile[], where: string): void {
  if (files.length > MAX_STORED_FILES) {
    throw new TapedeckError('BAD_STORE', `${where}: ${files.length} files, more than the ${MAX_STORED_FILES} allowed`);
  }
  let bytes = 0;
  const seen = new Set<string>();
  for (const f of files) {
    const why = unsafePathReason(f.path);
    if (why) throw new TapedeckError('BAD_STORE', `${where}: file path ${JSON.stringify(f.path)} ${why}`);
    if (f.path.split('/').some((s) => s.startsWith('.')))
      throw new TapedeckError('BAD_STORE', `${where}: file path ${JSON.stringify(f.path)} has a dot segment`);
    if (seen.has(f.path)) throw new TapedeckError('BAD_STORE', `${where}: file ${f.path} is listed twice`);
    seen.add(f.path);
    if (!isSha256(f.sha256)) throw new TapedeckError('BAD_STORE', `${where}: file ${f.path} has no valid sha256`);
    if (!Number.isSafeInteger(f.size) || f.size < 0)
      throw new TapedeckError('BAD_STORE', `${where}: file ${f.path} has a bad size`);
    bytes += f.size;
  }
  if (bytes > MAX_STORED_BYTES) {
    throw new TapedeckError('BAD_STORE', `${where}: ${bytes} bytes, more than the ${MAX_STORED_BYTES} allowed`);
  }
  // A file and a folder of the same name cannot both exist.
  for (const f of files) {
    const parts = f.path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      if (seen.has(prefix)) throw new TapedeckError('BAD_STORE', `${where}: ${prefix} is both a file and a folder`);
    }
  }
}

/** What every backend's put() starts from: the recording's manifest, id (checked), files, content hash and size. */
export async function recordingToPut(
  dir: string,
): Promise<{ manifest: Manifest; id: string; files: RecordingFile[]; hash: string; bytes: number }> {
  const manifest = await readManifest(dir);
  checkStoreId(manifest.id, dir);
  const files = await recordingFiles(dir);
  return {
    manifest,
    id: manifest.id,
    files,
    hash: contentHashOf(files),
    bytes: files.reduce((n, f) => n + f.size, 0),
  };
}
