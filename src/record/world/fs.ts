// Filesystem world capture: a snapshot of a root (path -> mode, size, sha256; contents as blobs)
// and the changes since the previous scan. Rescans are cheap: stat every file, hash only those
// whose stat changed.
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FileEntry, FsChangedPayload, FsSnapshot } from '../../recording/types.js';

interface Cached {
  key: string;
  entry: FileEntry;
}

export interface FsTracker {
  readonly root: string;
  /** Scans the root and returns the snapshot (blobs stored through putBlob). */
  snapshot(): Promise<FsSnapshot>;
  /** Scans the root and returns what changed since the previous scan (sorted by path). */
  changes(): Promise<FsChangedPayload[]>;
}

/** Paths under `exclude` (absolute) are not part of the world (e.g. the recording's own folder). */
export function createFsTracker(
  root: string,
  putBlob: (bytes: Uint8Array) => string,
  options: { exclude?: string[] } = {},
): FsTracker {
  const absRoot = path.resolve(root);
  const exclude = (options.exclude ?? []).map((p) => path.resolve(p));
  let current = new Map<string, Cached>();

  async function walk(dir: string, out: string[]): Promise<void> {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const abs = path.join(dir, entry.name);
      if (exclude.some((x) => abs === x || abs.startsWith(`${x}${path.sep}`))) continue;
      if (entry.isDirectory()) await walk(abs, out);
      else if (entry.isFile()) out.push(abs);
    }
  }

  async function scan(): Promise<Map<string, Cached>> {
    const files: string[] = [];
    await walk(absRoot, files);
    const next = new Map<string, Cached>();
    await Promise.all(
      files.map(async (abs) => {
        const rel = path.relative(absRoot, abs).split(path.sep).join('/');
        let st: import('node:fs').BigIntStats;
        try {
          st = await stat(abs, { bigint: true });
        } catch {
          return;
        }
        const key = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.mode}`;
        const previous = current.get(rel);
        if (previous !== undefined && previous.key === key) {
          next.set(rel, previous);
          return;
        }
        let bytes: Buffer;
        try {
          bytes = await readFile(abs);
        } catch {
          return;
        }
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        putBlob(bytes);
        next.set(rel, { key, entry: { mode: Number(st.mode & 0o7777n), size: bytes.length, sha256 } });
      }),
    );
    return next;
  }

  const toSnapshot = (map: Map<string, Cached>): FsSnapshot => {
    const files: Record<string, FileEntry> = {};
    for (const rel of [...map.keys()].sort()) files[rel] = map.get(rel)!.entry;
    return { files };
  };

  return {
    root: absRoot,
    async snapshot() {
      current = await scan();
      return toSnapshot(current);
    },
    async changes() {
      const before = current;
      const after = await scan();
      current = after;
      const out: FsChangedPayload[] = [];
      for (const rel of new Set([...before.keys(), ...after.keys()])) {
        const a = before.get(rel)?.entry;
        const b = after.get(rel)?.entry;
        if (a === undefined && b !== undefined) out.push({ path: rel, op: 'create', after: b });
        else if (a !== undefined && b === undefined) out.push({ path: rel, op: 'delete', before: a });
        else if (a !== undefined && b !== undefined && (a.sha256 !== b.sha256 || a.mode !== b.mode)) {
          out.push({ path: rel, op: 'modify', before: a, after: b });
        }
      }
      return out.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
    },
  };
}
