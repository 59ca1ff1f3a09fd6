// @ts-check
// Which Python processes run without tapedeck's hook (sandbox/python/), told from their command
// line, so that the recording and the replay say so instead of differing without a word. The hook
// is started by the sitecustomize first on PYTHONPATH: `-S` imports no site at all, `-I` and `-E`
// ignore PYTHONPATH (in the OS sandbox the interpreter's own sitecustomize is covered, so they are
// hooked there, unless it had none to cover: sandbox/python/hook.ts isolatedSites). No `-X` option
// changes whether site runs. Which programs a command line runs (directly, through env, a shell's
// `-c` string, a script's shebang) is shared-commands.mjs's; the Python side
// (_tapedeck_values.py unhooked) reads a child's command line the same way.
import fs from 'node:fs';
import path from 'node:path';
import { candidates, commandRuns, PYTHON_PROGRAM } from './shared-commands.mjs';
import { editChildEnv } from './shared-process.mjs';

const { realpathSync } = fs;

/** The real paths of the interpreters whose own sitecustomize the OS sandbox covers (delimiter-separated). */
export const PYTHON_COVERED_ENV = 'TAPEDECK_PYTHON_COVERED';

export { PYTHON_PROGRAM };

/**
 * @typedef {object} UnhookedPython
 * @property {string} program the interpreter as the command (or a script's shebang) named it
 * @property {'-S' | '-I' | '-E'} flag the option that keeps the hook out
 * @property {boolean} [uncovered] -I/-E in the OS sandbox, on an interpreter with no sitecustomize of its own to cover
 */

/** @typedef {import('./shared-commands.mjs').Where} Where */

/**
 * The Python process `argv` starts, when it runs without the hook. `covered`: in the OS sandbox,
 * the interpreters (real paths) whose own sitecustomize is covered; undefined outside it. `PATH`
 * finds a program named without a folder, `cwd` one named with a relative folder (a script's shebang).
 * @param {readonly string[]} argv
 * @param {Where} [where]
 * @returns {UnhookedPython | undefined}
 */
export function unhookedPython(argv, where = {}) {
  for (const { program, args } of pythonRuns(argv, where)) {
    const found = unhooked(program, args, where);
    if (found) return found;
  }
  return undefined;
}

/**
 * The Python interpreters `argv` runs, as named (a path, or a name found on PATH): directly,
 * through env or a shell's string, or as a script's shebang.
 * @param {readonly string[]} argv
 * @param {Where} [where]
 * @returns {string[]}
 */
export function pythonPrograms(argv, where = {}) {
  return [...pythonRuns(argv, where)].map((run) => run.program);
}

/**
 * The Python runs (interpreter and its arguments) a command line starts.
 * @param {readonly string[]} argv
 * @param {Where} where
 */
function* pythonRuns(argv, where) {
  for (const run of commandRuns(argv, where)) if (PYTHON_PROGRAM.test(path.basename(run.program))) yield run;
}

/**
 * @param {string} program
 * @param {string[]} args
 * @param {Where} where
 * @returns {UnhookedPython | undefined}
 */
function unhooked(program, args, where) {
  const flags = pythonFlags(args);
  if (flags.has('S')) return { program, flag: '-S' };
  const flag = flags.has('I') ? '-I' : flags.has('E') ? '-E' : undefined;
  if (flag === undefined) return undefined;
  if (where.covered === undefined) return { program, flag };
  const real = resolve(program, where);
  return real !== undefined && where.covered.includes(real) ? undefined : { program, flag, uncovered: true };
}

/** The one-letter options before the script (`-IS`, `-E -S`, `-X opt`, `-W arg`, up to `-c`/`-m`). */
function pythonFlags(/** @type {string[]} */ args) {
  const flags = new Set();
  for (let i = 0; i < args.length; i++) {
    const a = /** @type {string} */ (args[i]);
    if (a === '--' || a === '-' || !a.startsWith('-')) break;
    if (a.startsWith('--')) {
      if (a === '--check-hash-based-pycs') i++;
      continue;
    }
    for (let j = 1; j < a.length; j++) {
      const c = /** @type {string} */ (a[j]);
      if (c === 'c' || c === 'm') return flags;
      // Python stops at an option that is not one (a shebang's `-E -S`, one word): it never runs.
      if (!/^[A-Za-z?]$/.test(c)) return new Set();
      if (c === 'W' || c === 'X') {
        if (j === a.length - 1) i++;
        break;
      }
      flags.add(c);
    }
  }
  return flags;
}

/** A program's real path: as named with a folder, else the first on PATH. */
function resolve(/** @type {string} */ program, /** @type {Where} */ where) {
  for (const file of candidates(program, where)) {
    try {
      return realpathSync(file);
    } catch {}
  }
  return undefined;
}

/**
 * Tells `report` of every Python process this one starts without the hook (spawn, exec, execFile,
 * fork and the synchronous three). Returns undo().
 * @param {(found: UnhookedPython) => void} report
 */
export function reportUnhookedPython(report) {
  const covered = process.env[PYTHON_COVERED_ENV];
  const where = { covered: covered === undefined ? undefined : covered.split(path.delimiter).filter(Boolean) };
  return editChildEnv((env, argv, cwd) => {
    try {
      const found = unhookedPython(argv, { ...where, PATH: env.PATH, cwd });
      if (found) report(found);
    } catch {}
  });
}
