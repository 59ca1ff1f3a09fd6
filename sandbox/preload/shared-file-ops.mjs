// @ts-check
// The agent's file steps, one home for the recorder and the replayer: which fs operations under
// the fs root are FILE_READ / FILE_WRITE steps (FILE_OPS) and what such a step's message is
// (patchFileOps, which wraps fs and fs/promises in their sync, callback and promise forms). The
// recorder (src/record/preload/record.mjs) holds them at its step barriers and records them; the
// replay preload (sandbox/preload/replay.mjs) counts them under `--until K` and, where the replay
// does not copy the recorded steps, reports them to be written as the recorder writes them.
import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { threadOrigin } from './shared-process.mjs';
import { nowMs } from './shared-wire.mjs';

/** fs function -> [the step's name, its state type]. */
export const FILE_OPS = Object.freeze({
  readFile: ['read_file', 'FILE_READ'],
  writeFile: ['write_file', 'FILE_WRITE'],
  appendFile: ['append_file', 'FILE_WRITE'],
  rm: ['delete_file', 'FILE_WRITE'],
  unlink: ['delete_file', 'FILE_WRITE'],
  rename: ['rename_file', 'FILE_WRITE'],
});

/** The names of the steps file operations make. */
export const FILE_STEP_NAMES = Object.freeze([...new Set(Object.values(FILE_OPS).map(([name]) => name))]);

/**
 * Reads and writes of files under the fs root become FILE_READ / FILE_WRITE steps (fs and
 * fs/promises, sync, callback and promise forms), the outermost call only. `current()` gives the
 * run a call belongs to (undefined: not a step, the call goes straight through). The hooks:
 * `before(run)` as such a call begins (any form); `fileOp(run, fileRun, report, paths)` runs the
 * promise form and `report(ts, value, error)` builds its step message; `fileStart(run, paths)`
 * (the callback form: `{ mine, ready }`, ready: a promise to start after) and `fileDone(run,
 * message, paths, mine)` (sync and callback forms, once done). `paths`: the files under the root
 * a write changes (absolute). Returns the undo function.
 */
export function patchFileOps(root, recorder, current, suppressed) {
  /** The absolute path of a call's path argument under the root, or undefined. */
  const under = (target) => {
    try {
      const file = typeof target === 'string' ? target : target instanceof URL ? fileURLToPath(target) : null;
      if (file === null) return undefined;
      const abs = path.resolve(file);
      return abs === root || abs.startsWith(root + path.sep) ? abs : undefined;
    } catch {
      return undefined;
    }
  };
  const relative = (target) => {
    const abs = under(target);
    return abs === undefined ? undefined : path.relative(root, abs).split(path.sep).join('/');
  };
  /** The paths under the root a write changed: its target, and a rename's new name. */
  const changed = (op, target, rest) => {
    if (FILE_OPS[op][1] !== 'FILE_WRITE') return [];
    const paths = [under(target), op === 'rename' ? under(rest[0]) : undefined];
    return paths.filter((p) => p !== undefined && p !== root);
  };
  const sizeOf = (value) => (typeof value === 'string' ? Buffer.byteLength(value) : (value?.byteLength ?? undefined));
  /** The step message of one file operation (sent by the caller). */
  const report = (op, rel, ts, value, error, dataArg) => {
    const [name, stateType] = FILE_OPS[op];
    const bytes = stateType === 'FILE_READ' ? sizeOf(value) : sizeOf(dataArg);
    const message = {
      t: 'tool',
      id: `${origin}-fs-${++fileSeq}`,
      pid: process.pid,
      name,
      ts,
      end: nowMs(),
      args: { path: rel },
      stateType,
      mutating: stateType === 'FILE_WRITE',
    };
    if (error) message.error = { code: error.code ?? error.name ?? 'Error', message: String(error.message) };
    else message.result = bytes === undefined ? { ok: true } : { ok: true, bytes };
    return message;
  };
  let fileSeq = 0;
  const origin = threadOrigin();
  // fs calls itself (appendFileSync -> writeFileSync, rm -> unlink): only the outermost call is a step.
  const inside = new AsyncLocalStorage();
  let insideSync = 0;
  const nested = () => insideSync > 0 || inside.getStore() === true;
  const undo = [];
  const replace = (target, key, make) => {
    const real = target[key];
    if (typeof real !== 'function') return;
    target[key] = make(real);
    undo.push(() => {
      target[key] = real;
    });
  };
  for (const op of Object.keys(FILE_OPS)) {
    replace(
      fs.promises,
      op,
      (real) =>
        async function (target, ...rest) {
          const run = current();
          const rel = run === undefined || suppressed() || nested() ? undefined : relative(target);
          if (rel === undefined) return real.call(this, target, ...rest);
          recorder.before?.(run);
          return inside.run(true, () =>
            recorder.fileOp(
              run,
              () => real.call(this, target, ...rest),
              (ts, value, error) => report(op, rel, ts, value, error, rest[0]),
              changed(op, target, rest),
            ),
          );
        },
    );
    replace(
      fs,
      `${op}Sync`,
      (real) =>
        function (target, ...rest) {
          const run = current();
          const rel = run === undefined || suppressed() || nested() ? undefined : relative(target);
          if (rel === undefined) return real.call(this, target, ...rest);
          recorder.before?.(run);
          const ts = nowMs();
          let value;
          insideSync++;
          try {
            value = real.call(this, target, ...rest);
          } catch (error) {
            insideSync--;
            recorder.fileDone(run, report(op, rel, ts, undefined, error, rest[0]), changed(op, target, rest));
            throw error;
          }
          insideSync--;
          recorder.fileDone(run, report(op, rel, ts, value, undefined, rest[0]), changed(op, target, rest));
          return value;
        },
    );
    replace(
      fs,
      op,
      (real) =>
        function (target, ...rest) {
          const run = current();
          const rel = run === undefined || suppressed() || nested() ? undefined : relative(target);
          const callback = rest.at(-1);
          if (rel === undefined || typeof callback !== 'function') return real.call(this, target, ...rest);
          recorder.before?.(run);
          const args = rest.slice(0, -1);
          const paths = changed(op, target, args);
          const { mine, ready } = recorder.fileStart(run, paths);
          const start = () => {
            const ts = nowMs();
            return inside.run(true, () =>
              real.call(this, target, ...args, (error, value) => {
                recorder.fileDone(run, report(op, rel, ts, value, error, args[0]), paths, mine);
                callback(error, value);
              }),
            );
          };
          if (ready === undefined) return start();
          // Another call's step barrier is not answered yet: the call starts once it is (its
          // callback came later anyway), so the recorder's drain for it does not take this change.
          void ready.then(() => {
            try {
              start();
            } catch (error) {
              recorder.fileDone(run, report(op, rel, nowMs(), undefined, error, args[0]), paths, mine);
              callback(error);
            }
          });
          return undefined;
        },
    );
  }
  syncBuiltinESMExports();
  return () => {
    for (const u of undo.reverse()) u();
    syncBuiltinESMExports();
  };
}
