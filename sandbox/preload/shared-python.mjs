// @ts-check
// Which Python processes run without tapedeck's hook (sandbox/python/), told from their command
// line, so that the recording and the replay say so instead of differing without a word. The hook
// is started by the sitecustomize first on PYTHONPATH: `-S` imports no site at all, `-I` and `-E`
// ignore PYTHONPATH (in the OS sandbox the interpreter's own sitecustomize is covered, so they are
// hooked there, unless it had none to cover: sandbox/python/hook.ts isolatedSites). No `-X` option
// changes whether site runs. Seen: a Python program run directly, through `env` (its options and
// assignments, `-S` split strings), and the simple commands of a shell's `-c` string; a script run
// by its shebang (`./agent.py` whose first line is `#!/usr/bin/python3 -S`) is out of reach.
// The Python side (_tapedeck_values.py unhooked) reads a child's command line the same way.
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { editChildEnv } from './shared-process.mjs';

/** The real paths of the interpreters whose own sitecustomize the OS sandbox covers (delimiter-separated). */
export const PYTHON_COVERED_ENV = 'TAPEDECK_PYTHON_COVERED';

/** A Python interpreter's program name: python, python3, python3.12, pypy3. */
const PYTHON_PROGRAM = /^(?:python|pypy)(?:\d+(?:\.\d+)?)?$/;
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/**
 * @typedef {object} UnhookedPython
 * @property {string} program the interpreter as the command named it
 * @property {'-S' | '-I' | '-E'} flag the option that keeps the hook out
 * @property {boolean} [uncovered] -I/-E in the OS sandbox, on an interpreter with no sitecustomize of its own to cover
 */

/**
 * The Python process `argv` starts, when it runs without the hook. `covered`: in the OS sandbox,
 * the interpreters (real paths) whose own sitecustomize is covered; undefined outside it. `PATH`
 * finds a program named without a folder.
 * @param {readonly string[]} argv
 * @param {{ covered?: readonly string[] | undefined, PATH?: string | undefined }} [where]
 * @returns {UnhookedPython | undefined}
 */
export function unhookedPython(argv, where = {}) {
  return fromArgv(argv.map(String), where, 0);
}

/**
 * @param {string[]} argv
 * @param {{ covered?: readonly string[] | undefined, PATH?: string | undefined }} where
 * @param {number} depth
 * @returns {UnhookedPython | undefined}
 */
function fromArgv(argv, where, depth) {
  if (depth > 4) return undefined;
  let i = 0;
  while (i < argv.length && (ASSIGNMENT.test(/** @type {string} */ (argv[i])) || argv[i] === 'exec')) i++;
  const program = argv[i];
  if (program === undefined) return undefined;
  const base = path.basename(program);
  const args = argv.slice(i + 1);
  if (base === 'env') return fromEnv(args, where, depth);
  if (SHELLS.has(base)) {
    const at = args.findIndex((a) => /^-[a-z]*c[a-z]*$/.test(a));
    const script = at === -1 ? undefined : args[at + 1];
    if (script === undefined) return undefined;
    for (const command of script.split(/[;&|\n()`]+/)) {
      const found = fromArgv(words(command), where, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  if (!PYTHON_PROGRAM.test(base)) return undefined;
  const flags = pythonFlags(args);
  if (flags.has('S')) return { program, flag: '-S' };
  const flag = flags.has('I') ? '-I' : flags.has('E') ? '-E' : undefined;
  if (flag === undefined) return undefined;
  if (where.covered === undefined) return { program, flag };
  const real = resolve(program, where.PATH);
  return real !== undefined && where.covered.includes(real) ? undefined : { program, flag, uncovered: true };
}

/** `env [options] [NAME=VALUE...] program args`: the program's command. */
function fromEnv(/** @type {string[]} */ args, /** @type {any} */ where, /** @type {number} */ depth) {
  let i = 0;
  for (; i < args.length; i++) {
    const a = /** @type {string} */ (args[i]);
    if (a === '--') {
      i++;
      break;
    }
    if (a === '-S' || a === '--split-string')
      return fromArgv([...words(args[i + 1] ?? ''), ...args.slice(i + 2)], where, depth + 1);
    if (a.startsWith('-S')) return fromArgv([...words(a.slice(2)), ...args.slice(i + 1)], where, depth + 1);
    if (['-u', '-C', '--unset', '--chdir'].includes(a)) i++;
    else if (!a.startsWith('-') && !ASSIGNMENT.test(a)) break;
  }
  return fromArgv(args.slice(i), where, depth + 1);
}

/** A simple command's words (quotes around a word dropped). */
function words(/** @type {string} */ command) {
  return command
    .trim()
    .split(/\s+/)
    .filter((w) => w !== '')
    .map((w) => w.replace(/^(['"])(.*)\1$/, '$2'));
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
function resolve(/** @type {string} */ program, /** @type {string | undefined} */ PATH) {
  const candidates = program.includes('/')
    ? [program]
    : (PATH ?? '')
        .split(path.delimiter)
        .filter((d) => path.isAbsolute(d))
        .map((d) => path.join(d, program));
  for (const file of candidates) {
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
  return editChildEnv((env, argv) => {
    try {
      const found = unhookedPython(argv, { ...where, PATH: env.PATH });
      if (found) report(found);
    } catch {}
  });
}
