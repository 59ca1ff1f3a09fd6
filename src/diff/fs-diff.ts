// Filesystem diff: two fs snapshots joined by path (one hash lookup per file), unified text diffs for text files.
import { formatPatch, structuredPatch } from 'diff';
import { type FileEntry, type FsSnapshot, fileIdentity } from '../recording/index.js';
import { fileText } from './file-text.js';
import type { FsChange } from './types.js';

export { decodeText } from './file-text.js';

export interface FsDiffOptions {
  /** Reads a blob's bytes by sha256 (inline contents need none); without it, changes carry no text diff. */
  readBlob?: (sha256: string) => Uint8Array;
  /** path -> steps that touched it (from fs.changed events). */
  attribution?: ReadonlyMap<string, number[]>;
  /** Skip the unified diff for files larger than this (bytes). Default 1 MiB. */
  maxPatchBytes?: number;
}

const EMPTY: Record<string, FileEntry> = {};

/**
 * Changes from `before` to `after`: created, modified (content or mode), deleted files.
 * Sorted by path. Unchanged files cost one map lookup and one string compare.
 */
export function diffFs(
  before: FsSnapshot | undefined,
  after: FsSnapshot | undefined,
  options: FsDiffOptions = {},
): FsChange[] {
  const a = before?.files ?? EMPTY;
  const b = after?.files ?? EMPTY;
  const changes: FsChange[] = [];
  for (const path of Object.keys(a)) {
    const was = a[path]!;
    const now = b[path];
    if (now === undefined) changes.push(fileChange(path, 'delete', was, undefined, options));
    else if (now.sha256 !== was.sha256 || now.mode !== was.mode)
      changes.push(fileChange(path, 'modify', was, now, options));
  }
  for (const path of Object.keys(b)) {
    if (a[path] === undefined) changes.push(fileChange(path, 'create', undefined, b[path]!, options));
  }
  return changes.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

function fileChange(
  path: string,
  op: FsChange['op'],
  before: FileEntry | undefined,
  after: FileEntry | undefined,
  options: FsDiffOptions,
): FsChange {
  const steps = options.attribution?.get(path) ?? [];
  const change: FsChange = { kind: 'file', path, op, binary: false, stepId: steps.at(-1) ?? null, steps };
  // What the files are, not where their bytes are kept (inline or a blob): equal files diff equal.
  if (before) change.before = fileIdentity(before);
  if (after) change.after = fileIdentity(after);
  const limit = options.maxPatchBytes ?? 1 << 20;
  if (!options.readBlob || (before && before.size > limit) || (after && after.size > limit)) return change;
  const oldText = before ? fileText(before, options.readBlob, limit) : '';
  const newText = after ? fileText(after, options.readBlob, limit) : '';
  if (oldText === undefined || newText === undefined) {
    change.binary = oldText === null || newText === null;
    return change;
  }
  if (oldText === null || newText === null) {
    change.binary = true;
    return change;
  }
  const patch = structuredPatch(
    op === 'create' ? '/dev/null' : `a/${path}`,
    op === 'delete' ? '/dev/null' : `b/${path}`,
    oldText,
    newText,
    undefined,
    undefined,
    { context: 3 },
  );
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith('+')) added++;
      else if (line.startsWith('-')) removed++;
    }
  }
  change.patch = formatPatch(patch);
  change.added = added;
  change.removed = removed;
  return change;
}
