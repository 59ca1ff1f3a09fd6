// @ts-check
// The programs a command line starts, told from the command line alone, never run: the program
// itself, through `env` (its options and assignments, `-S` split strings), the simple commands of a
// shell's `-c` string (shell words: shared-shell-words.mjs), and a script run by its shebang
// (`./agent.py` whose first line is `#!/usr/bin/python3 -S`), read as the kernel reads it. Python's
// hook (shared-python.mjs) asks which of them are Python; the recorder asks which of them are
// programs whose calls no capture layer sees (unwatchedProgram, below).
import fs from 'node:fs';
import path from 'node:path';
import { editChildEnv } from './shared-process.mjs';
import { shellCommands } from './shared-shell-words.mjs';

// The real disk's, taken before the replay's fs sandbox routes node:fs: a shebang is what the kernel reads.
const { closeSync, constants, fstatSync, openSync, readSync, statSync } = fs;

/** A Python interpreter's program name: python, python3, python3.12, pypy3. */
export const PYTHON_PROGRAM = /^(?:python|pypy)(?:\d+(?:\.\d+)?)?$/;
/** Node's program name (node, nodejs, node20): its processes get the preload through NODE_OPTIONS. */
const NODE_PROGRAM = /^(?:node|nodejs)(?:\d+)?$/;
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;
// Words that start a shell's compound or prefixed command before its program.
const RESERVED = new Set(['!', '{', 'if', 'then', 'else', 'elif', 'do', 'while', 'until', 'time']);
/** What the kernel reads of a script's first line (Linux's BINPRM_BUF_SIZE). */
const SHEBANG_BYTES = 256;
/** How deep env, shells and shebangs are followed. */
const MAX_DEPTH = 4;

/**
 * Programs that talk to a network service as their job: HTTP clients, database and cache shells,
 * cloud and cluster CLIs, remote shells, and the JavaScript runtimes that are not Node. Any other
 * program counts only when an argument names a URL (`perl fetch.pl https://…`, `git clone https://…`).
 */
const NETWORK_PROGRAMS = new Set([
  'curl',
  'wget',
  'http',
  'https',
  'xh',
  'httpie',
  'grpcurl',
  'websocat',
  'psql',
  'pg_dump',
  'pg_dumpall',
  'pg_restore',
  'mysql',
  'mysqldump',
  'mariadb',
  'redis-cli',
  'mongosh',
  'mongo',
  'sqlcmd',
  'aws',
  'gcloud',
  'gsutil',
  'bq',
  'az',
  'gh',
  'kubectl',
  'helm',
  'ssh',
  'scp',
  'sftp',
  'rsync',
  'nc',
  'ncat',
  'netcat',
  'telnet',
  'ftp',
  'deno',
  'bun',
]);
/** An argument that names a URL: a scheme, then `://`. */
const URL_ARGUMENT = /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s/]/i;

/**
 * @typedef {object} Where
 * @property {readonly string[] | undefined} [covered] in the OS sandbox, the interpreters (real paths) whose own sitecustomize is covered
 * @property {string | undefined} [PATH] finds a program named without a folder
 * @property {string | undefined} [cwd] where a program named with a relative folder is (default: this process's)
 */

/**
 * The runs (a program and its arguments) a command line starts: its program, or what env, a
 * shell's `-c` string or a script's shebang run in its place. A shell given no `-c` string (a
 * script file, stdin) is a run of its own: what it runs is not on its command line.
 * @param {readonly string[]} argv
 * @param {Where} [where]
 * @returns {Generator<{ program: string, args: string[] }>}
 */
export function* commandRuns(argv, where = {}) {
  yield* runsOf(argv.map(String), where, 0, false);
}

/**
 * @param {string[]} argv
 * @param {Where} where
 * @param {number} depth
 * @param {boolean} inShell a shell's simple command: its reserved words come before the program
 * @returns {Generator<{ program: string, args: string[] }>}
 */
function* runsOf(argv, where, depth, inShell) {
  if (depth > MAX_DEPTH) return;
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
  if (base === 'env') {
    yield* runsOf(envCommand(args), where, depth + 1, false);
    return;
  }
  if (SHELLS.has(base)) {
    const at = args.findIndex((a) => /^-[a-z]*c[a-z]*$/.test(a));
    const script = at === -1 ? undefined : args[at + 1];
    if (script === undefined) yield { program, args };
    else for (const command of shellCommands(script)) yield* runsOf(command, where, depth + 1, true);
    return;
  }
  // An interpreter is the run; any other program may be a script its shebang names one for.
  const shebang = PYTHON_PROGRAM.test(base) || NODE_PROGRAM.test(base) ? undefined : shebangOf(program, where);
  if (shebang !== undefined) yield* runsOf([...shebang, program, ...args], where, depth + 1, false);
  else yield { program, args };
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
export function candidates(/** @type {string} */ program, /** @type {Where} */ where) {
  if (program.includes('/')) return [path.resolve(where.cwd ?? process.cwd(), program)];
  return (where.PATH ?? '')
    .split(path.delimiter)
    .filter((d) => path.isAbsolute(d))
    .map((d) => path.join(d, program));
}

/**
 * The first program `argv` starts whose calls no capture layer sees and that reaches a network
 * service (NETWORK_PROGRAMS, or an argument naming a URL): neither Node (the preload) nor Python
 * (the hook names each of its connections). Named as the command names it, without its folder.
 * @param {readonly string[]} argv
 * @param {Where} [where]
 * @returns {string | undefined}
 */
export function unwatchedProgram(argv, where = {}) {
  for (const { program, args } of commandRuns(argv, where)) {
    const base = path.basename(program);
    if (NODE_PROGRAM.test(base) || PYTHON_PROGRAM.test(base)) continue;
    if (NETWORK_PROGRAMS.has(base) || args.some((a) => URL_ARGUMENT.test(a))) return base.slice(0, 200);
  }
  return undefined;
}

/**
 * Tells `report` of every program this process starts (spawn, exec, execFile, fork and the
 * synchronous three) that reaches a network service unseen (unwatchedProgram). Returns undo().
 * @param {(program: string) => void} report
 */
export function reportUnwatchedPrograms(report) {
  return editChildEnv((env, argv, cwd) => {
    try {
      const found = unwatchedProgram(argv, { PATH: env.PATH, cwd });
      if (found !== undefined) report(found);
    } catch {}
  });
}
