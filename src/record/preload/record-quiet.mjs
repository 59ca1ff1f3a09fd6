// @ts-check
// Step barriers that cost nothing while the world stands still (record --fs without --db). A
// barrier is a round trip to the recorder, which drains the world's changes so they go to the
// right step; each costs the agent and the recorder a wake-up. An agent process that watches the
// fs root itself (inotify, through fs.watch on every folder, as the recorder's tracker does: any
// process's writes, not only this one's) knows when nothing under it changed since its last
// boundary, and then the recorder's drain would find nothing: the round trip is skipped.
//
// It stays exact because it only ever errs towards a round trip:
// - the kernel queues an inotify event in the writing call itself, and two turns of the event
//   loop read every event queued before them, so a change made before a boundary is seen at it;
// - the baseline of the next interval is taken at the check, before the round trip, so what
//   happens while the recorder drains is counted again (a round trip more, never a change lost);
// - a message whose handling drains the world (a call's or a tool's end) sent since the last
//   boundary makes the next one a round trip, so the recorder handles it while the agent waits;
// - a folder that cannot be watched, a watcher error, the root moved, or too many folders: every
//   boundary is a round trip again.
import fs from 'node:fs';
import path from 'node:path';

/** More folders than this under the root: watching them costs more than the round trips. */
const MAX_FOLDERS = 4096;

/** One turn of the event loop: file-change events the kernel queued before now are delivered after two. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Messages whose handling drains the world in the recorder (src/record/session.ts). */
const DRAINS = new Set(['res', 'xchg', 'end', 'tool']);

/**
 * Watches `root` (absolute; paths under `exclude` are not part of the world) from the first
 * check on. check() at a step boundary: true when the boundary's round trip can be skipped.
 * sent(message): told of every message the run sends.
 * @param {string} root
 * @param {string[]} exclude
 */
export function createQuietWorld(root, exclude) {
  const absRoot = path.resolve(root);
  const excluded = (/** @type {string} */ abs) => exclude.some((x) => abs === x || abs.startsWith(`${x}${path.sep}`));
  /** @type {Map<string, fs.FSWatcher>} */
  const watchers = new Map();
  let started = false;
  let blind = false;
  let changes = 0;
  let drains = 0;
  let seen = { changes: -1, drains: -1 };

  const unwatchUnder = (/** @type {string} */ dir) => {
    for (const [d, w] of watchers) {
      if (d === dir || d.startsWith(`${dir}${path.sep}`)) {
        w.close();
        watchers.delete(d);
      }
    }
  };
  /** Watches `dir` and every folder under it (each before it is read). */
  const watchTree = (/** @type {string} */ dir) => {
    if (blind || excluded(dir)) return;
    if (watchers.size >= MAX_FOLDERS) {
      blind = true;
      return;
    }
    try {
      const watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || name === undefined) {
          changes++;
          blind = true;
          return;
        }
        const abs = path.join(dir, name.toString());
        if (excluded(abs)) return;
        changes++;
        // The root itself moved or removed (its own watcher names it): nothing to compare with.
        if (dir === absRoot && abs === path.join(absRoot, path.basename(absRoot))) blind = true;
        // A folder made, moved in, replaced or removed: what is there now is watched afresh.
        if (watchers.has(abs)) unwatchUnder(abs);
        let folder = false;
        try {
          folder = fs.lstatSync(abs).isDirectory();
        } catch {}
        if (folder) watchTree(abs);
      });
      watcher.on('error', () => {
        blind = true;
      });
      watchers.set(dir, watcher);
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) watchTree(path.join(dir, entry.name));
      }
    } catch {
      blind = true;
    }
  };

  const close = () => {
    blind = true;
    for (const w of watchers.values()) w.close();
    watchers.clear();
  };

  return {
    /** At a step boundary: true when nothing under the root changed and nothing that drains was sent since the last one. */
    async check() {
      if (!started) {
        // The first boundary is a round trip; the next ones compare with what is seen from here on.
        started = true;
        watchTree(absRoot);
        if (blind) close();
        seen = { changes, drains };
        return false;
      }
      if (blind) {
        // Never quiet again: the watchers are of no more use.
        close();
        return false;
      }
      await turn();
      await turn();
      const quiet = !blind && changes === seen.changes && drains === seen.drains;
      seen = { changes, drains };
      return quiet;
    },
    /** @param {unknown} message a message of the run (or a function that builds one: counted as one that drains) */
    sent(message) {
      if (typeof message === 'function' || DRAINS.has(/** @type {{ t?: string }} */ (message)?.t ?? '')) drains++;
    },
    close,
  };
}
