// A recorded world's files form a tree: no path is both a file and a folder ("a" a file and "a/b"
// another). A snapshot or an fs.changed step that says otherwise cannot be written to a disk, so
// the reader refuses it before any engine tries (materializeFs, the replay's memfs seed).
import type { FileEntry, FsChangedPayload } from './types.js';

/** The folders `path` lies in, outermost first: `a/b/c` -> `a`, `a/b`. */
function foldersOf(path: string): string[] {
  const out: string[] = [];
  for (let at = path.indexOf('/'); at >= 0; at = path.indexOf('/', at + 1)) out.push(path.slice(0, at));
  return out;
}

/**
 * Why the file `path` cannot be in a tree holding `isFile` (undefined: it can): a folder it lies
 * in is a file, or it is itself a folder (`holding` names a file in it).
 */
function clashOf(path: string, isFile: (p: string) => boolean, holding: (p: string) => string | undefined) {
  const file = foldersOf(path).find(isFile);
  if (file !== undefined) return `${JSON.stringify(file.slice(0, 200))} is a file`;
  const inside = holding(path);
  if (inside !== undefined)
    return `${JSON.stringify(path.slice(0, 200))} is a folder (it holds ${JSON.stringify(inside.slice(0, 200))})`;
  return undefined;
}

/**
 * The first path of a snapshot's files that is both a file and a folder, and why; undefined when
 * they form a tree.
 * @example fileTreeClash(['a', 'a/b']) // { path: 'a/b', problem: '"a" is a file' }
 */
export function fileTreeClash(paths: Iterable<string>): { path: string; problem: string } | undefined {
  const files = new Set(paths);
  for (const path of files) {
    const file = foldersOf(path).find((folder) => files.has(folder));
    if (file !== undefined) return { path, problem: `${JSON.stringify(file.slice(0, 200))} is a file` };
  }
  return undefined;
}

/** An fs.changed event as the tree check needs it: its line in events.jsonl (1-based). */
export interface FsChangeAt {
  line: number;
  seq: number;
  stepId: number;
  payload: FsChangedPayload;
}

/**
 * The first fs.changed event that makes a world at a step boundary hold a path that is both a file
 * and a folder, and why; undefined when every world forms a tree. The world after step k is
 * `pre` plus the changes of steps 0..k in seq order (worldAt), so each step's changes are
 * checked once all of them are applied: inside one step a change may pass through such a state
 * (the recorder lists a step's changes by path, so `a` created comes before `a/b` deleted).
 */
export function fsChangesClash(
  pre: Readonly<Record<string, FileEntry>> | undefined,
  changes: readonly FsChangeAt[],
): { line: number; step: number; problem: string } | undefined {
  const files = new Set(Object.keys(pre ?? {}));
  // Files under each folder: a folder is a path some file lies in.
  const under = new Map<string, number>();
  const count = (path: string, by: number) => {
    for (const folder of foldersOf(path)) {
      const n = (under.get(folder) ?? 0) + by;
      if (n === 0) under.delete(folder);
      else under.set(folder, n);
    }
  };
  for (const path of files) count(path, 1);
  // The seq of the last change applied to each path: a later step's change written before an
  // earlier step's (out of seq order) does not override it, as in worldAt.
  const lastSeq = new Map<string, number>();
  const byStep = [...changes].sort((x, y) => x.stepId - y.stepId || x.seq - y.seq);
  const isFile = (p: string) => files.has(p);
  const holding = (p: string) => {
    if (!under.has(p)) return undefined;
    for (const f of files) if (f.startsWith(`${p}/`)) return f;
    return undefined;
  };
  for (let i = 0; i < byStep.length; ) {
    const step = (byStep[i] as FsChangeAt).stepId;
    const added = new Map<string, number>();
    for (; i < byStep.length && (byStep[i] as FsChangeAt).stepId === step; i++) {
      const { line, seq, payload } = byStep[i] as FsChangeAt;
      const { path } = payload;
      if ((lastSeq.get(path) ?? -1) > seq) continue;
      lastSeq.set(path, seq);
      const present = payload.op !== 'delete' && payload.after !== undefined;
      if (present && !files.has(path)) {
        files.add(path);
        count(path, 1);
      } else if (!present && files.has(path)) {
        files.delete(path);
        count(path, -1);
      }
      if (present) added.set(path, line);
      else added.delete(path);
    }
    for (const [path, line] of added) {
      const problem = clashOf(path, isFile, holding);
      if (problem !== undefined) return { line, step, problem };
    }
  }
  return undefined;
}
