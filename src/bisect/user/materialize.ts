// Writes a world's files into a folder (for shell predicates), contents from the recording's blobs.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import type { FsSnapshot } from '../../recording/index.js';
import { TapedeckError } from '../../recording/index.js';

/** Materialises `fs` under `dir`; refuses paths that would escape it. */
export function materializeWorld(fs: FsSnapshot, readBlob: (sha256: string) => Buffer, dir: string): void {
  const root = resolve(dir);
  for (const [path, entry] of Object.entries(fs.files)) {
    const target = resolve(join(root, path));
    if (!target.startsWith(root + sep)) {
      throw new TapedeckError('BISECT_WORLD_FS', `refusing to materialise ${path}: it escapes the world folder`);
    }
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, readBlob(entry.sha256));
    chmodSync(target, entry.mode & 0o777 || 0o644);
  }
}
