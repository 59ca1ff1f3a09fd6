// @ts-check
// Watching a folder tree for changes (inotify, through fs.watch on every folder: any process's
// writes, not only this one's), so that what changed since the last look is known from the paths
// the kernel named rather than by reading the whole tree again. One home for the recorder's world
// capture (src/record/world/fs.ts), the recording agent's quiet barriers (record-quiet.mjs), and
// the replay's world copy on disk (src/replay/world-copy.ts, replay-fs.mjs).
//
// What a watcher can and cannot tell, which every user relies on:
// - the kernel queues an event in the writing call itself; Node reads them on a turn of the event
//   loop, and two turns read every event queued before the first (`readQueued()`);
// - a folder made or moved in is watched at once and walked (watched before it is read), and what
//   it holds is reported as touched: files made in it before its watch existed are not missed;
// - a folder removed or moved away is reported as touched and no longer watched: the user drops
//   what it knew under that path when the path is gone;
// - when a folder cannot be watched, a watcher fails, the watched root itself moves, an event comes
//   without a name, or there are more folders than MAX_FOLDERS, the watcher is blind: from then on
//   only a walk of the whole tree can tell what changed (`take()` says so, and watching stops).
import fs from 'node:fs';
import path from 'node:path';

// Taken before any preload patches node:fs.
const realWatch = fs.watch;
const realLstat = fs.lstatSync;
const realReaddir = fs.readdirSync;

/**
 * What tells a file's content unchanged without reading it (from an lstat with `bigint: true`):
 * the recorder's fs tracker and the agent's own looks (record-quiet.mjs) compare the same key.
 * @param {fs.BigIntStats} st
 */
export const statKey = (st) => `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.mode}`;

/** More folders than this under the root: watching them costs more than walking. */
const MAX_FOLDERS = 4096;

/** One turn of the event loop. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Resolves once every change the kernel queued before the call has been read (two loop turns).
 * @returns {Promise<void>}
 */
export async function readQueued() {
  await turn();
  await turn();
}

/**
 * Watches the tree under `root` (absolute). Paths under `exclude` are not part of it.
 * @param {string} root
 * @param {{ exclude?: string[] }} [options]
 */
export function watchTree(root, options = {}) {
  const absRoot = path.resolve(root);
  const exclude = (options.exclude ?? []).map((p) => path.resolve(p));
  const excluded = (/** @type {string} */ abs) => exclude.some((x) => abs === x || abs.startsWith(`${x}${path.sep}`));
  /** @type {Map<string, fs.FSWatcher>} */
  const watchers = new Map();
  /** @type {Set<string>} */
  let touched = new Set();
  /** The same paths in the order they were first touched (what `pending()` hands out). @type {string[]} */
  let order = [];
  const touch = (/** @type {string} */ abs) => {
    if (touched.has(abs)) return;
    touched.add(abs);
    order.push(abs);
  };
  let blind = false;
  let closed = false;

  const goBlind = () => {
    blind = true;
    for (const w of watchers.values()) w.close();
    watchers.clear();
  };
  const unwatchUnder = (/** @type {string} */ dir) => {
    for (const [d, w] of watchers) {
      if (d === dir || d.startsWith(`${dir}${path.sep}`)) {
        w.close();
        watchers.delete(d);
      }
    }
  };

  /**
   * Watches `dir` (before reading it), then every folder under it. `onFile(abs)` is told of each
   * file found, `onFolder(abs)` of each folder (`dir` included).
   * @param {string} dir
   * @param {(abs: string) => void} [onFile]
   * @param {(abs: string) => void} [onFolder]
   */
  const folder = (dir, onFile, onFolder) => {
    if (blind || closed || excluded(dir)) return;
    if (!watchers.has(dir)) {
      if (watchers.size >= MAX_FOLDERS) return goBlind();
      try {
        const watcher = realWatch(dir, { persistent: false }, (event, name) => {
          if (blind || closed) return;
          if (name === null || name === undefined) return goBlind();
          const abs = path.join(dir, name.toString());
          if (excluded(abs)) return;
          // The root itself moved or removed (its own watcher names it): nothing to compare with.
          if (dir === absRoot && abs === path.join(absRoot, path.basename(absRoot))) return goBlind();
          touch(abs);
          // Content or attributes changed (inotify's IN_MODIFY or IN_ATTRIB alone): nothing was made,
          // moved or removed there.
          if (event === 'change') return;
          // A folder made, moved in, replaced or removed: what is there now is watched afresh.
          if (watchers.has(abs)) unwatchUnder(abs);
          let isFolder = false;
          try {
            isFolder = realLstat(abs).isDirectory();
          } catch {}
          if (isFolder) folder(abs, touch);
        });
        watcher.on('error', () => goBlind());
        watchers.set(dir, watcher);
      } catch {
        return goBlind();
      }
    }
    onFolder?.(dir);
    let entries;
    try {
      entries = realReaddir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const abs = path.join(dir, entry.name);
      if (excluded(abs)) continue;
      if (entry.isDirectory()) folder(abs, onFile, onFolder);
      else onFile?.(abs);
      if (blind) return;
    }
  };

  return {
    root: absRoot,
    /**
     * Watches the root and every folder under it (each before it is read); `onFile` and
     * `onFolder` are told of what is found, so one pass both watches and takes a baseline.
     * @param {(abs: string) => void} [onFile]
     * @param {(abs: string) => void} [onFolder]
     */
    start(onFile, onFolder) {
      folder(absRoot, onFile, onFolder);
    },
    /**
     * The paths touched since the last take (files, and folders made, moved or removed), or
     * undefined when the watcher is blind (then only a walk of the whole tree can tell).
     * @returns {Set<string> | undefined}
     */
    take() {
      if (blind || closed) return undefined;
      const out = touched;
      touched = new Set();
      order = [];
      return out;
    },
    /**
     * The paths touched since the last take, as read so far, in the order first touched, without
     * taking them: a caller that keeps its place reads only what is new (empty when blind: then
     * `take()` says so).
     * @returns {readonly string[]}
     */
    pending() {
      return order;
    },
    /** Whether only a walk of the whole tree can tell what changed. */
    get blind() {
      return blind || closed;
    },
    close() {
      closed = true;
      for (const w of watchers.values()) w.close();
      watchers.clear();
    },
  };
}
