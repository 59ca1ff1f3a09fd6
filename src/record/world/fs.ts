// Filesystem world capture: a snapshot of a root (path -> mode, size, sha256; contents inline or blobs)
// and the changes since the previous scan. A scan stats every file and hashes only those whose
// stat changed. With `watch`, the changes of a step look only at the paths the kernel said were
// touched (inotify, through fs.watch on every folder of the root: any process's writes, not only
// the agent's; sandbox/preload/shared-watch.mjs), so a step costs what it changed, not the size of
// the folder; a folder that cannot be watched, or a watcher error, falls back to scanning everything.
import { type BigIntStats, lstatSync, readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { readQueued, statKey, watchTree } from '../../../sandbox/preload/shared-watch.mjs';
import { type FileContent, sha256Hex, unsafePathReason } from '../../recording/index.js';
import type { FileEntry, FsChangedPayload, FsSnapshot } from '../../recording/types.js';
import type { FileLook } from '../protocol.js';
import { KnownFiles } from './known-files.js';

interface Cached {
  key: string;
  entry: FileEntry;
}

export interface FsTracker {
  readonly root: string;
  /**
   * The root as it is now (contents stored through `store`): a scan, or, watching after the first,
   * what is known once the paths touched since are looked at again.
   */
  snapshot(): Promise<FsSnapshot>;
  /**
   * Scans the root and returns what changed since the previous scan (sorted by path). `busy`:
   * files (relative paths) that file calls of the agent still in flight are changing: left as they
   * were known, and looked at again by the next changes() (their calls' messages carry them).
   */
  changes(busy?: readonly string[]): Promise<FsChangedPayload[]>;
  /**
   * Takes files as the agent's process read them (record-quiet.mjs) and returns what changed
   * against what the tracker knew (sorted by path). A path outside the root, excluded or not in
   * normal form is ignored; a gone path drops what the tracker knew under it. A later changes()
   * looks at these paths again only if their stat is no longer the one read.
   */
  apply(files: FileLook[]): FsChangedPayload[];
  /** How the last changes() found them: only the paths touched since (watching), or by scanning everything. */
  readonly lastPass: 'touched' | 'scan' | undefined;
  /**
   * Files under the root left out of every snapshot and change: their names are not paths the
   * recording format holds (a backslash, a control character; src/recording/paths.ts), which every
   * reader refuses. At most LEFT_OUT_NAMED of them, and how many in all.
   */
  readonly leftOut: { names: readonly string[]; count: number };
  /** Stops watching (when watching). */
  close(): void;
}

/** More touched paths than this in one step: scanning everything is as cheap. */
const WATCHED_LIMIT = 4096;
/** Left-out files named in the warning; the rest are counted. */
const LEFT_OUT_NAMED = 5;

/**
 * Paths under `exclude` (absolute) are not part of the world (e.g. the recording's own folder).
 * With `watch`, changes() after the first snapshot() looks only at the paths touched since.
 * `store` keeps a file's bytes (RecordingWriter.fileContent: inline when small, else a blob).
 */
export function createFsTracker(
  root: string,
  store: (bytes: Uint8Array) => FileContent,
  options: { exclude?: string[]; watch?: boolean } = {},
): FsTracker {
  const absRoot = path.resolve(root);
  const exclude = (options.exclude ?? []).map((p) => path.resolve(p));
  const excluded = (abs: string) => exclude.some((x) => abs === x || abs.startsWith(`${x}${path.sep}`));
  const relOf = (abs: string) => path.relative(absRoot, abs).split(path.sep).join('/');
  // What the tracker knows, with the folders holding it: what it knew under a gone path or a
  // folder is found there, not by a pass over every known file.
  let current = new KnownFiles<Cached>();

  // Watching: one fs.watch (inotify) per folder, started by the first snapshot (each folder watched
  // before it is read); the paths it names are what changes() looks at.
  const tree = options.watch === true ? watchTree(absRoot, { exclude }) : undefined;
  let started = false;
  let lastPass: 'touched' | 'scan' | undefined;
  /** Paths a changes() left to a file call in flight: looked at again by the next one. */
  let held = new Set<string>();
  const leftOut = new Set<string>();
  /** Whether the format holds `rel` as a path; a file whose name it does not is left out (and noted). */
  const holdable = (rel: string): boolean => {
    if (unsafePathReason(rel) === undefined) return true;
    leftOut.add(rel);
    return false;
  };

  /** Collects the files under `dir`. */
  async function walk(dir: string, out: string[]): Promise<void> {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const abs = path.join(dir, entry.name);
      if (excluded(abs)) continue;
      if (entry.isDirectory()) await walk(abs, out);
      else if (entry.isFile()) out.push(abs);
    }
  }

  /**
   * The file at `rel` as it is now (reusing `previous` when its stat did not change), 'dir' for a
   * folder, or undefined. Synchronous: an asynchronous lstat and read are round trips to libuv's
   * threads that cost more than the calls (a step barrier waits on them; a snapshot makes thousands).
   */
  function look(rel: string, previous: Cached | undefined): Cached | 'dir' | undefined {
    if (!holdable(rel)) return undefined;
    const abs = path.join(absRoot, rel);
    let st: BigIntStats;
    let bytes: Buffer;
    try {
      st = lstatSync(abs, { bigint: true });
      const kind = kindOf(st, previous);
      if (kind !== 'read') return kind;
      bytes = readFileSync(abs);
    } catch {
      return undefined;
    }
    return stored(st, bytes, previous);
  }

  /** What a stat says: a folder, not a file, the file as it was (its stat did not change), or a file to read. */
  function kindOf(st: BigIntStats, previous: Cached | undefined): Cached | 'dir' | undefined | 'read' {
    if (st.isDirectory()) return 'dir';
    if (!st.isFile()) return undefined;
    if (previous !== undefined && previous.key === statKey(st)) return previous;
    return 'read';
  }

  const stored = (st: BigIntStats, bytes: Uint8Array, previous: Cached | undefined): Cached =>
    entryOf(statKey(st), Number(st.mode & 0o7777n), bytes, previous);

  /** The file's entry; the previous one again when only its stat changed (rewritten with the same bytes): nothing stored twice. */
  function entryOf(key: string, mode: number, bytes: Uint8Array, previous: Cached | undefined): Cached {
    const was = previous?.entry;
    if (was && was.mode === mode && was.size === bytes.length && was.sha256 === sha256Hex(bytes))
      return { key, entry: was };
    return { key, entry: { mode, size: bytes.length, ...store(bytes) } };
  }

  /** A path the agent named, if it is a file path under the root in the form relOf gives. */
  const known = (rel: string): string | undefined => {
    if (rel === '' || rel.includes('\0')) return undefined;
    const abs = path.resolve(absRoot, rel);
    if (!abs.startsWith(`${absRoot}${path.sep}`) || relOf(abs) !== rel || excluded(abs)) return undefined;
    return holdable(rel) ? rel : undefined;
  };

  async function scan(watching = false): Promise<KnownFiles<Cached>> {
    const files: string[] = [];
    if (watching && tree) tree.start((abs) => files.push(abs));
    // Not watching, or the watcher went blind part way (it stops reading there): a plain walk.
    if (!watching || !tree || tree.blind) {
      files.length = 0;
      await walk(absRoot, files);
    }
    const next = new KnownFiles<Cached>();
    for (const abs of files) {
      const rel = relOf(abs);
      const found = look(rel, current.get(rel));
      if (found && found !== 'dir') next.set(rel, found);
    }
    return next;
  }

  /** The paths a step touched, as relative file paths to look at again; undefined: scan everything. */
  async function touched(): Promise<Set<string> | undefined> {
    if (!tree || tree.blind) return undefined;
    await readQueued();
    const paths = tree.take();
    if (paths === undefined || paths.size > WATCHED_LIMIT) return undefined;
    const out = new Set<string>();
    for (const abs of paths) {
      if (abs !== absRoot && !abs.startsWith(`${absRoot}${path.sep}`)) continue;
      if (excluded(abs)) continue;
      const rel = abs === absRoot ? '' : relOf(abs);
      // A known file is looked at again by changes() (which also sees when it became a folder).
      if (current.has(rel)) {
        out.add(rel);
        continue;
      }
      let kind: 'dir' | 'file' | 'gone' = 'gone';
      try {
        kind = lstatSync(abs).isDirectory() ? 'dir' : 'file';
      } catch {}
      if (kind === 'file') {
        out.add(rel);
        continue;
      }
      // A folder created, moved in, replaced, moved away or removed: what it holds now, and what it
      // held (the watcher watches what is there now).
      if (kind === 'dir') {
        const files: string[] = [];
        await walk(abs, files);
        for (const f of files) out.add(relOf(f));
      }
      for (const known of current.under(rel)) out.add(known);
    }
    return tree.blind ? undefined : out;
  }

  const diff = (
    rels: Iterable<string>,
    beforeOf: (rel: string) => FileEntry | undefined,
    afterOf: (rel: string) => FileEntry | undefined,
  ): FsChangedPayload[] => {
    const out: FsChangedPayload[] = [];
    for (const rel of rels) {
      const a = beforeOf(rel);
      const b = afterOf(rel);
      if (a === undefined && b !== undefined) out.push({ path: rel, op: 'create', after: b });
      else if (a !== undefined && b === undefined) out.push({ path: rel, op: 'delete', before: a });
      else if (a !== undefined && b !== undefined && (a.sha256 !== b.sha256 || a.mode !== b.mode)) {
        out.push({ path: rel, op: 'modify', before: a, after: b });
      }
    }
    return out.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  };

  const toSnapshot = (map: KnownFiles<Cached>): FsSnapshot => {
    const files: Record<string, FileEntry> = {};
    for (const rel of [...map.keys()].sort()) files[rel] = map.get(rel)!.entry;
    return { files };
  };

  return {
    root: absRoot,
    get lastPass() {
      return lastPass;
    },
    get leftOut() {
      return { names: [...leftOut].sort().slice(0, LEFT_OUT_NAMED), count: leftOut.size };
    },
    async snapshot() {
      // Watching, after the first: what the tracker knows once the touched paths are looked at
      // again (or the whole tree, when the watcher went blind). The changes themselves are the
      // steps': the caller drained them already.
      if (started && tree !== undefined) {
        await this.changes();
        return toSnapshot(current);
      }
      // The first snapshot starts the watchers, each before its folder is read.
      current = await scan(tree !== undefined && !started);
      started = true;
      tree?.take();
      return toSnapshot(current);
    },
    apply(files) {
      const prior = new Map<string, Cached | undefined>();
      const keep = (rel: string) => {
        if (!prior.has(rel)) prior.set(rel, current.get(rel));
      };
      for (const file of files) {
        const rel = known(file.path);
        if (rel === undefined) continue;
        if ('gone' in file) {
          // A file it knew: that file alone (no file is also a folder). Else what it knew under a folder.
          const under = current.has(rel) ? [rel] : current.under(rel);
          for (const k of under) {
            keep(k);
            current.delete(k);
          }
          continue;
        }
        keep(rel);
        current.set(rel, entryOf(file.key, file.mode, Buffer.from(file.data, 'base64'), current.get(rel)));
      }
      return diff(
        prior.keys(),
        (rel) => prior.get(rel)?.entry,
        (rel) => current.get(rel)?.entry,
      );
    },
    async changes(busy) {
      const leave = new Set(busy ?? []);
      const paths = await touched();
      lastPass = paths === undefined ? 'scan' : 'touched';
      const wasHeld = held;
      held = new Set();
      if (paths === undefined) {
        const before = current;
        current = await scan();
        // A file a call in flight is changing stays as it was known until the call's message.
        for (const rel of leave) {
          const was = before.get(rel);
          if (was === undefined && !current.has(rel)) continue;
          held.add(rel);
          if (was === undefined) current.delete(rel);
          else current.set(rel, was);
        }
        const after = current;
        return diff(
          new Set([...before.keys(), ...after.keys()]),
          (rel) => before.get(rel)?.entry,
          (rel) => after.get(rel)?.entry,
        );
      }
      for (const rel of wasHeld) paths.add(rel);
      for (const rel of paths) {
        if (!leave.has(rel)) continue;
        paths.delete(rel);
        held.add(rel);
      }
      // Only the touched paths can have changed: the map is updated in place, their entries before kept aside.
      const prior = new Map<string, Cached | undefined>();
      for (const rel of paths) prior.set(rel, current.get(rel));
      const found = [...paths].map((rel) => look(rel, prior.get(rel)));
      let i = 0;
      const folders: string[] = [];
      for (const rel of [...paths]) {
        const now = found[i++];
        if (now === 'dir') folders.push(rel);
        if (now && now !== 'dir') current.set(rel, now);
        else current.delete(rel);
      }
      // A file replaced by a folder: the folder's files are new.
      for (const rel of folders) {
        const files: string[] = [];
        await walk(path.join(absRoot, rel), files);
        for (const abs of files) {
          const f = relOf(abs);
          const now = look(f, undefined);
          paths.add(f);
          if (now && now !== 'dir') current.set(f, now);
        }
      }
      return diff(
        paths,
        (rel) => prior.get(rel)?.entry,
        (rel) => current.get(rel)?.entry,
      );
    },
    close() {
      tree?.close();
    },
  };
}
