// @ts-check
// Which Python processes run without tapedeck's hook (sandbox/python/), told from their command
// line, so that the recording and the replay say so instead of differing without a word. The hook
// is started by the sitecustomize first on PYTHONPATH: `-S` imports no site at all, `-I` and `-E`
// ignore PYTHONPATH (in the OS sandbox the interpreter's own sitecustomize is covered, so they are
// hooked there, unless it had none to cover: sandbox/python/hook.ts isolatedSites). No `-X` option
// changes whether site runs. Seen: a Python program run directly, through `env` (its options and
// assignments, `-S` split strings), the simple commands of a shell's `-c` string (shell words:
// shared-shell-words.mjs), and a script run by its shebang (`./agent.py` whose first line is
// `#!/usr/bin/python3 -S` or `#!/usr/bin/env -S python3 -I`), read as the kernel reads it.
// The Python side (_tapedeck_values.py unhooked) reads a child's command line the same way.
import fs from 'node:fs';
import path from 'node:path';
import { editChildEnv } from './shared-process.mjs';
import { shellCommands } from './shared-shell-words.mjs';

// The real disk's, taken before the replay's fs sandbox routes node:fs: a shebang is what the kernel reads.
const { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync } = fs;

/** The real paths of the interpreters whose own sitecustomize the OS sandbox covers (delimiter-separated). */
export const PYTHON_COVERED_ENV = 'TAPEDECK_PYTHON_COVERED';

/** A Python interpreter's program name: python, python3, python3.12, pypy3. */
export const PYTHON_PROGRAM = /^(?:python|pypy)(?:\d+(?:\.\d+)?)?$/;
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
// Words that start a shell's compound or prefixed command before its program.
const RESERVED = new Set(['!', '{', 'if', 'then', 'else', 'elif', 'do', 'while', 'until', 'time']);
/** What the kernel reads of a script's first line (Linux's BINPRM_BUF_SIZE). */
const SHEBANG_BYTES = 256;

/**
 * @typedef {object} UnhookedPython
 * @property {string} program the interpreter as the command (or a script's shebang) named it
 * @property {'-S' | '-I' | '-E'} flag the option that keeps the hook out
 * @property {boolean} [uncovered] -I/-E in the OS sandbox, on an interpreter with no sitecustomize of its own to cover
 */

/**
 * @typedef {object} Where
 * @property {readonly string[] | undefined} [covered] in the OS sandbox, the interpreters (real paths) whose own sitecustomize is covered
 * @property {string | undefined} [PATH] finds a program named without a folder
 * @property {string | undefined} [cwd] where a program named with a relative folder is (default: this process's)
 */

/**
 * The Python process `argv` starts, when it runs without the hook. `covered`: in the OS sandbox,
 * the interpreters (real paths) whose own sitecustomize is covered; undefined outside it. `PATH`
 * finds a program named without a folder, `cwd` one named with a relative folder (a script's shebang).
 * @param {readonly string[]} argv
 * @param {Where} [where]
 * @returns {UnhookedPython | undefined}
 */
export function unhookedPython(argv, where = {}) {
  for (const { program, args } of pythonRuns(argv.map(String), where, 0)) {
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
  return [...pythonRuns(argv.map(String), where, 0)].map((run) => run.program);
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

/**
 * The Python runs (interpreter and its arguments) a command line starts.
 * @param {string[]} argv
 * @param {Where} where
 * @param {number} depth
 * @param {boolean} [inShell] a shell's simple command: its reserved words come before the program
 * @returns {Generator<{ program: string, args: string[] }>}
 */
function* pythonRuns(argv, where, depth, inShell = false) {
  if (depth > 4) return;
  let i = 0;
  while (
    i < argv.length &&
    (ASSIGNMENT.test(/** @type {string} */ (argv[i])) ||
      argv[i] === 'exec' ||
      (inShell && RESERVED.has(/** @type {string} */ (argv[i]))))
  )
    i++;
  const program = argv[i];
  if (program === undefined) return;
  const base = path.basename(program);
  const args = argv.slice(i + 1);
  if (base === 'env') yield* pythonRuns(envCommand(args), where, depth + 1);
  else if (SHELLS.has(base)) {
    const at = args.findIndex((a) => /^-[a-z]*c[a-z]*$/.test(a));
    const script = at === -1 ? undefined : args[at + 1];
    if (script === undefined) return;
    for (const command of shellCommands(script)) yield* pythonRuns(command, where, depth + 1, true);
  } else if (PYTHON_PROGRAM.test(base)) yield { program, args };
  else {
    const shebang = shebangOf(program, where);
    if (shebang !== undefined) yield* pythonRuns([...shebang, program, ...args], where, depth + 1);
  }
}

/** `env [options] [NAME=VALUE...] program args`: the program's command. */
function envCommand(/** @type {string[]} */ args) {
  let i = 0;
  for (; i < args.length; i++) {
    const a = /** @type {string} */ (args[i]);
    if (a === '--') {
      i++;
      break;
    }
    if (a === '-S' || a === '--split-string') return [...words(args[i + 1] ?? ''), ...args.slice(i + 2)];
    if (a.startsWith('-S')) return [...words(a.slice(2)), ...args.slice(i + 1)];
    if (['-u', '-C', '--unset', '--chdir'].includes(a)) i++;
    else if (!a.startsWith('-') && !ASSIGNMENT.test(a)) break;
  }
  return args.slice(i);
}

/** An `env -S` string's words (its quotes and escapes as a shell's). */
function words(/** @type {string} */ text) {
  return shellCommands(text).flat();
}

/**
 * A script's interpreter and its one argument, as the kernel reads its `#!` line: the program's
 * file (with a folder: from `cwd`; without: the first on PATH), a regular executable file only
 * (never a FIFO's open that would block).
 * @param {string} program
 * @param {Where} where
 * @returns {string[] | undefined}
 */
function shebangOf(program, where) {
  for (const file of candidates(program, where)) {
    let fd;
    try {
      const s = statSync(file);
      if (!s.isFile() || (s.mode & 0o111) === 0) continue;
      fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
      if (!fstatSync(fd).isFile()) return undefined;
      const head = Buffer.alloc(SHEBANG_BYTES);
      const read = readSync(fd, head, 0, SHEBANG_BYTES, 0);
      return shebangLine(head.subarray(0, read).toString('latin1'));
    } catch {
      return undefined;
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }
  return undefined;
}

/** `#!interpreter [one argument]`: blanks around both dropped, the argument kept whole (as Linux does). */
export function shebangLine(/** @type {string} */ head) {
  if (!head.startsWith('#!')) return undefined;
  const end = head.indexOf('\n');
  const line = head.slice(2, end === -1 ? head.length : end).replace(/^[ \t]+/, '');
  const blank = line.search(/[ \t]/);
  const interpreter = blank === -1 ? line : line.slice(0, blank);
  if (interpreter === '') return undefined;
  const arg =
    blank === -1
      ? ''
      : line
          .slice(blank)
          .replace(/^[ \t]+/, '')
          .replace(/[ \t]+$/, '');
  return arg === '' ? [interpreter] : [interpreter, arg];
}

/** The files a program name may be: as named with a folder (from `cwd`), else each on PATH. */
function candidates(/** @type {string} */ program, /** @type {Where} */ where) {
  if (program.includes('/')) return [path.resolve(where.cwd ?? process.cwd(), program)];
  return (where.PATH ?? '')
    .split(path.delimiter)
    .filter((d) => path.isAbsolute(d))
    .map((d) => path.join(d, program));
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
