// @ts-check
// `replay --until K` in the agent's process: the steps the agent begins without asking the
// replayer (a file read or write under the fs root, a request over a child's stdio) are not
// questions, so the replayer cannot stop the agent at them. The preload counts them against what
// the replayer allows before step K ends (a budget, renewed with every answer) and stops the agent
// before the first one past it.
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FILE_OPS } from './shared-file-ops.mjs';

/**
 * Calls `begin()` before each file operation under `root` that the recorder makes a step of:
 * the same functions (fs.promises, sync and callback forms), the outermost call only.
 * @param {string} root @param {() => void} begin @param {() => boolean} suppressed
 */
export function watchFileSteps(root, begin, suppressed) {
  const under = (/** @type {unknown} */ target) => {
    try {
      const file = typeof target === 'string' ? target : target instanceof URL ? fileURLToPath(target) : null;
      if (file === null) return false;
      const abs = path.resolve(file);
      return abs === root || abs.startsWith(root + path.sep);
    } catch {
      return false;
    }
  };
  // fs calls itself (appendFileSync -> writeFileSync, the sandbox's own calls): only the outermost counts.
  const inside = new AsyncLocalStorage();
  let insideSync = 0;
  const counts = (/** @type {unknown} */ target) =>
    insideSync === 0 && inside.getStore() !== true && !suppressed() && under(target);
  const anyFs = /** @type {Record<string, any>} */ (fs);
  const promises = /** @type {Record<string, any>} */ (fs.promises);
  for (const op of Object.keys(FILE_OPS)) {
    const realAsync = promises[op];
    if (typeof realAsync === 'function')
      promises[op] = function (/** @type {unknown} */ target, /** @type {unknown[]} */ ...rest) {
        if (!counts(target)) return realAsync.call(this, target, ...rest);
        begin();
        return inside.run(true, () => realAsync.call(this, target, ...rest));
      };
    const realSync = anyFs[`${op}Sync`];
    if (typeof realSync === 'function')
      anyFs[`${op}Sync`] = function (/** @type {unknown} */ target, /** @type {unknown[]} */ ...rest) {
        if (!counts(target)) return realSync.call(this, target, ...rest);
        begin();
        insideSync++;
        try {
          return realSync.call(this, target, ...rest);
        } finally {
          insideSync--;
        }
      };
    const realCallback = anyFs[op];
    if (typeof realCallback === 'function')
      anyFs[op] = function (/** @type {unknown} */ target, /** @type {unknown[]} */ ...rest) {
        if (typeof rest.at(-1) !== 'function' || !counts(target)) return realCallback.call(this, target, ...rest);
        begin();
        return inside.run(true, () => realCallback.call(this, target, ...rest));
      };
  }
  syncBuiltinESMExports();
}
