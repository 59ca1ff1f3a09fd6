// The content-addressed blob store of a recording: blobs/sha256/<first 2 hex>/<other 62 hex>.
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { blocksOnDisk } from './disk.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function isSha256(value: string): boolean {
  return SHA256_HEX.test(value);
}

/** The blob's path relative to the recording directory, e.g. `blobs/sha256/ab/cdef…`. */
export function blobRelativePath(sha256: string): string {
  if (!isSha256(sha256)) throw new TypeError(`not a sha256: ${JSON.stringify(sha256)}`);
  return `blobs/sha256/${sha256.slice(0, 2)}/${sha256.slice(2)}`;
}

/**
 * Writes blobs into one recording directory. A blob is written to a temporary file in its
 * final directory and renamed into place, so a reader never sees a half-written blob;
 * a blob that already exists is not written again.
 */
export class BlobStore {
  private readonly known = new Set<string>();
  private readonly dirs = new Set<string>();
  constructor(readonly dir: string) {}

  /**
   * Stores `bytes` under their hash. `from`: a file already holding exactly these bytes (the same
   * blob in another recording, just read and verified): it is hard-linked instead of written
   * again when it is a plain file of that size on the same file system (creating a file is the
   * slow part: ~0.5-1 ms each on some disks, a link ~30 us); otherwise the bytes are written.
   */
  put(bytes: Uint8Array, sha256 = sha256Hex(bytes), from?: string): string {
    if (this.known.has(sha256)) return sha256;
    const rel = blobRelativePath(sha256);
    const file = join(this.dir, rel);
    if (!existsSync(file)) {
      const parent = join(this.dir, 'blobs', 'sha256', sha256.slice(0, 2));
      if (!this.dirs.has(parent)) {
        mkdirSync(parent, { recursive: true });
        this.dirs.add(parent);
      }
      if (from === undefined || !linkAtomicSync(from, file, bytes.byteLength)) writeFileAtomicSync(file, bytes);
    }
    this.known.add(sha256);
    return sha256;
  }
}

/**
 * Hard-links `from` to `file` through a temporary sibling and a rename, when `from` is a plain
 * file (not a link) of `size` bytes; false when it cannot (another file system, not permitted,
 * not such a file): the caller writes the bytes instead.
 */
function linkAtomicSync(from: string, file: string, size: number): boolean {
  try {
    const st = lstatSync(from);
    if (!st.isFile() || st.size !== size) return false;
  } catch {
    return false;
  }
  const slash = file.lastIndexOf('/');
  const tmp = `${file.slice(0, slash + 1)}.${file.slice(slash + 1)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    linkSync(from, tmp);
  } catch {
    return false;
  }
  try {
    // The link is of what `from` names now: check it is still that plain file of that size.
    const st = lstatSync(tmp);
    if (!st.isFile() || st.size !== size) throw new Error('changed');
    renameSync(tmp, file);
    return true;
  } catch {
    rmSync(tmp, { force: true });
    return false;
  }
}

/** Writes `file` via a temporary sibling and a rename: a crash leaves the old file or the new one, never half of one. */
export function writeFileAtomicSync(file: string, data: Uint8Array | string, mode = 0o644): void {
  const slash = file.lastIndexOf('/');
  const tmp = `${file.slice(0, slash + 1)}.${file.slice(slash + 1)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', mode);
  try {
    writeAllSync(fd, data);
  } catch (error) {
    closeSync(fd);
    unlinkSync(tmp);
    throw error;
  }
  closeSync(fd);
  renameSync(tmp, file);
}

/** writeFileAtomicSync on libuv's threads: the event loop goes on while the disk works (a server recording many runs); in this thread where it blocks on the disk (disk.ts). */
export async function writeFileAtomic(file: string, data: Uint8Array | string, mode = 0o644): Promise<void> {
  if (blocksOnDisk()) return writeFileAtomicSync(file, data, mode);
  const slash = file.lastIndexOf('/');
  const tmp = `${file.slice(0, slash + 1)}.${file.slice(slash + 1)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, data, { flag: 'wx', mode });
  } catch (error) {
    await unlink(tmp).catch(() => {});
    throw error;
  }
  await rename(tmp, file);
}

/** writeSync until every byte is written (a single writeSync may write fewer). */
export function writeAllSync(fd: number, data: Uint8Array | string): void {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let offset = 0;
  while (offset < bytes.byteLength) offset += writeSync(fd, bytes, offset, bytes.byteLength - offset);
}
