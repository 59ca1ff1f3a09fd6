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
// The watching itself is sandbox/preload/shared-watch.mjs (the recorder's fs tracker and the
// replay's world copy watch the same way).
import { readQueued, watchTree } from '../../../sandbox/preload/shared-watch.mjs';

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
  const tree = watchTree(root, { exclude });
  let started = false;
  let drains = 0;
  let seen = { changes: -1, drains: -1 };

  return {
    /** At a step boundary: true when nothing under the root changed and nothing that drains was sent since the last one. */
    async check() {
      if (!started) {
        // The first boundary is a round trip; the next ones compare with what is seen from here on.
        started = true;
        tree.start();
        seen = { changes: tree.changes, drains };
        return false;
      }
      // Blind: never quiet again (the watchers are closed).
      if (tree.blind) return false;
      await readQueued();
      const quiet = !tree.blind && tree.changes === seen.changes && drains === seen.drains;
      seen = { changes: tree.changes, drains };
      // Only the count is used: the touched paths are not kept.
      tree.take();
      return quiet;
    },
    /** @param {unknown} message a message of the run (or a function that builds one: counted as one that drains) */
    sent(message) {
      if (typeof message === 'function' || DRAINS.has(/** @type {{ t?: string }} */ (message)?.t ?? '')) drains++;
    },
    close: () => tree.close(),
  };
}
