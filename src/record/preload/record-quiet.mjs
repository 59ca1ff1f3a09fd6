// @ts-check
// Step barriers that cost nothing while the world stands still or changes a little (record --fs
// without --db). A barrier is a round trip to the recorder, which drains the world's changes so
// they go to the right step; each costs the agent and the recorder a wake-up. An agent process
// that watches the fs root itself (inotify, through fs.watch on every folder, as the recorder's
// tracker does: any process's writes, not only this one's) knows what changed under it since its
// last boundary:
// - nothing: the round trip is skipped (the recorder's drain would find nothing);
// - a few files, changed or removed: the agent reads them itself, as the recorder's drain would
//   at that moment, and the boundary's message carries them (`files`): the recorder applies them
//   instead of draining (src/record/world/fs.ts, apply);
// - a file call of this process under the root (sandbox/preload/shared-file-ops.mjs): its message carries the
//   file's state right after the call (`own`), and the watcher's events for it are accounted for
//   as long as the file's stat is still the one read. While such a call is in flight (calls that
//   overlap), the files it changes are its own message's: a boundary of another call leaves them
//   (`busy`) and looks at them again at the next boundary.
//
// It stays exact because it only ever errs towards a round trip:
// - the kernel queues an inotify event in the writing call itself, and two turns of the event
//   loop read every event queued before them, so a change made before a boundary is seen at it;
// - the baseline of the next interval is taken at the check, before the round trip, so what
//   happens while the recorder drains is counted again (a round trip more, never a change lost);
// - a file is read after its stat, so the key the recorder keeps is never newer than the bytes;
//   a change after the read gives the file a new key, seen at the next look;
// - a message whose handling drains the world (a call's or a tool's end) sent since the last
//   boundary makes the next one a round trip, so the recorder handles it while the agent waits;
// - a folder made or moved, a link, a file over the size limit, more than a few files, a folder
//   that cannot be watched, a watcher error, the root moved, or too many folders: a round trip
//   (the last four: every boundary from then on).
// The watching itself is sandbox/preload/shared-watch.mjs (the recorder's fs tracker and the
// replay's world copy watch the same way).
import fs from 'node:fs';
import path from 'node:path';
import { readQueued, statKey, watchTree } from '../../../sandbox/preload/shared-watch.mjs';

// Taken before shared-file-ops.mjs patches node:fs: the agent's own looks are not its file calls.
const realLstat = fs.lstatSync;
const realReadFile = fs.readFileSync;

/** Messages whose handling drains the world in the recorder (src/record/session.ts). */
const DRAINS = new Set(['res', 'xchg', 'end', 'tool']);
/** More files than this at one boundary, or more bytes: the recorder reads them itself. */
const MAX_FILES = 64;
const MAX_BYTES = 1 << 20;

/**
 * A file under the root as the agent read it: `gone` (no file or folder there now), or its
 * mode, stat key and bytes (base64). Validated in src/record/protocol.ts (FileLookSchema).
 * @typedef {{ path: string, gone: true } | { path: string, mode: number, key: string, data: string }} FileLook
 */

/**
 * Watches `root` (absolute; paths under `exclude` are not part of the world) from the first
 * check on. check() at a step boundary: true when the boundary's round trip can be skipped, the
 * files to send with its message instead of a round trip, or false. own(paths) after this
 * process's file call under the root: the files to send with its message, or undefined.
 * sent(message): told of every message the run sends.
 * @param {string} root
 * @param {string[]} exclude
 */
export function createQuietWorld(root, exclude) {
  const absRoot = path.resolve(root);
  const tree = watchTree(absRoot, { exclude });
  let started = false;
  let drains = 0;
  let seenDrains = -1;
  /** Files this process changed and reported itself since the last boundary: path -> stat key then. */
  let owned = new Map();
  /** How many of the watcher's pending paths own() has found reported (each is looked at once). */
  let reportedUpTo = 0;
  /** Paths a boundary left to a file call in flight: looked at again at the next one. */
  let carried = new Set();

  /** @param {string} abs */
  const keyNow = (abs) => {
    try {
      return statKey(realLstat(abs, { bigint: true }));
    } catch (error) {
      const code = /** @type {NodeJS.ErrnoException} */ (error)?.code;
      return code === 'ENOENT' || code === 'ENOTDIR' ? 'gone' : undefined;
    }
  };

  /**
   * The files at `paths` (absolute, under the root) as they are now, or undefined when the
   * recorder must look itself (a folder, a link, too many, too large, unreadable).
   * @param {Iterable<string>} paths
   * @returns {FileLook[] | undefined}
   */
  function look(paths) {
    /** @type {FileLook[]} */
    const files = [];
    let bytes = 0;
    for (const abs of paths) {
      if (files.length >= MAX_FILES) return undefined;
      if (!abs.startsWith(`${absRoot}${path.sep}`)) return undefined;
      const rel = path.relative(absRoot, abs).split(path.sep).join('/');
      let st;
      try {
        st = realLstat(abs, { bigint: true });
      } catch (error) {
        const code = /** @type {NodeJS.ErrnoException} */ (error)?.code;
        if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined;
        files.push({ path: rel, gone: true });
        continue;
      }
      if (!st.isFile() || st.size > BigInt(MAX_BYTES - bytes)) return undefined;
      let data;
      try {
        data = realReadFile(abs);
      } catch {
        return undefined;
      }
      bytes += data.length;
      if (bytes > MAX_BYTES) return undefined;
      files.push({ path: rel, mode: Number(st.mode & 0o7777n), key: statKey(st), data: data.toString('base64') });
    }
    return files;
  }

  return {
    /**
     * At a step boundary: true when nothing under the root changed (but what this process
     * reported itself, or its file calls in flight are changing: `busy`, absolute paths) and
     * nothing that drains was sent since the last one; the files that changed, read now, when
     * they are few plain files; else false (a round trip).
     * @param {{ has(abs: string): boolean }} [busy] asked as the files are looked at
     * @returns {Promise<boolean | FileLook[]>}
     */
    async check(busy) {
      if (!started) {
        // The first boundary is a round trip; the next ones compare with what is seen from here on.
        started = true;
        tree.start();
        seenDrains = drains;
        owned = new Map();
        reportedUpTo = 0;
        carried = new Set();
        return false;
      }
      // Blind: never quiet again (the watchers are closed).
      if (tree.blind) return false;
      await readQueued();
      const touched = tree.take();
      const drained = drains !== seenDrains;
      seenDrains = drains;
      const reported = owned;
      owned = new Map();
      reportedUpTo = 0;
      if (touched === undefined) return false;
      const changed = [];
      const seen = carried;
      carried = new Set();
      for (const abs of [...seen, ...touched]) {
        const key = reported.get(abs);
        if (key !== undefined && key === keyNow(abs)) continue;
        // A file call in flight changes it: its own message carries it (or, when it cannot, drains).
        if (busy?.has(abs)) carried.add(abs);
        else changed.push(abs);
      }
      if (drained) return false;
      if (changed.length === 0) return true;
      return look(changed) ?? false;
    },
    /**
     * After this process's file call under the root changed `paths` (absolute): their state now,
     * for the call's own message, or undefined (the message then drains as before). Undefined too
     * when the watcher already saw a change this process did not report: the recorder's drain
     * with the call's message takes it, in the call's step, as before. The call's own paths and
     * those its other file calls in flight change (`busy`) are not such a change.
     * @param {string[]} paths
     * @param {{ has(abs: string): boolean }} [busy]
     * @returns {FileLook[] | undefined}
     */
    own(paths, busy) {
      if (!started || tree.blind) return undefined;
      // Only the paths seen since the last call: an agent writing many files between two calls
      // costs one look at each, not one at every path so far at each write.
      const pending = tree.pending();
      for (; reportedUpTo < pending.length; reportedUpTo++) {
        const abs = /** @type {string} */ (pending[reportedUpTo]);
        if (!owned.has(abs) && !paths.includes(abs) && !busy?.has(abs)) return undefined;
      }
      const files = look(paths);
      if (files === undefined) return undefined;
      for (const file of files) owned.set(path.join(absRoot, file.path), 'gone' in file ? 'gone' : file.key);
      return files;
    },
    /** @param {unknown} message a message of the run (or a function that builds one: counted as one that drains) */
    sent(message) {
      if (typeof message === 'function') drains++;
      else {
        const m = /** @type {{ t?: string, quiet?: boolean }} */ (message);
        // A quiet message carries what changed, or says nothing did: the recorder drains nothing for it.
        if (DRAINS.has(m?.t ?? '') && m?.quiet !== true) drains++;
      }
    },
    close: () => tree.close(),
  };
}
