// @ts-check
// Which process of the agent's tree this is, named alike when recorded and when replayed, so that
// each process of a replay is handed the values its own recorded process drew (clock, random,
// uuid), whatever order the processes drew them in. Both preloads name the processes they start.
//
// A name is the path from the agent's own process (unnamed): `2.1` is the first process started
// by the agent's second. Every process a named one starts is told its name in TAPEDECK_PROCESS
// (Node or not: a shell passes it on to the Node processes it runs). Processes that get the same
// name (two a shell ran, or two agents' commands started at once) tell themselves apart by the
// order in which they claim it, with a file made only if it does not exist: `2#2` is the second
// to claim `2`. A worker thread is its process's name, `w` and its thread id (`2w1`).
import childProcess, { ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import workerThreads, { isMainThread, threadId } from 'node:worker_threads';

export const PROCESS_ENV = 'TAPEDECK_PROCESS';
/** What a name may look like (recordings are checked against the same pattern). */
export const PROCESS_NAME = /^[0-9w.#]{1,200}$/;
const MAX_CLAIMS = 1000;

/**
 * This process's (or worker thread's) name; undefined for the agent's own process.
 * @param {string | undefined} claimPrefix where names are claimed (`${claimPrefix}<name>.<n>`); without it, none is
 * @returns {string | undefined}
 */
export function processName(claimPrefix) {
  const given = process.env[PROCESS_ENV];
  const inherited = given !== undefined && PROCESS_NAME.test(given) ? given : undefined;
  // A worker's env is a copy of its process's: the thread id tells it apart (no claim).
  if (!isMainThread) return `${inherited ?? ''}w${threadId}`;
  if (!claimPrefix) return inherited;
  for (let n = 1; n <= MAX_CLAIMS; n++) {
    try {
      closeSync(openSync(`${claimPrefix}${inherited ?? 'agent'}.${n}`, 'wx'));
      return n === 1 ? inherited : `${inherited ?? ''}#${n}`;
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EEXIST') return inherited;
    }
  }
  return inherited;
}

/**
 * Tells every process this one starts its name (the n-th started by `own`): spawn, exec, fork
 * and the synchronous three, whatever env they were given.
 * @param {string | undefined} own
 * @param {() => boolean} [runStarted] the agent's own process of a run replayed inside its command
 *   (recorded in-process): until its run starts, what it starts is the command's, `0.n`, and the
 *   run's first process is `1` whatever came before, as when recorded
 * @returns {() => number} how many processes it started before its run (`0.n`)
 */
export function nameChildren(own, runStarted) {
  let started = 0;
  let before = 0;
  editChildEnv((env) => {
    if (runStarted !== undefined && !runStarted()) env[PROCESS_ENV] = `0.${++before}`;
    else env[PROCESS_ENV] = `${own === undefined ? '' : `${own}.`}${++started}`;
  });
  return () => before;
}

/**
 * Edits the environment of every process this one starts (spawn, exec, execFile, fork and the
 * synchronous three, whatever env they were given, Node or not) before it starts; `argv` is its
 * command line (a shell's, `sh -c …`, for a command string), `cwd` the folder it starts in.
 * Returns undo(): the functions are put back where they are still ours, and stop editing where
 * another layer wrapped them since.
 * @param {(env: Record<string, string | undefined>, argv: string[], cwd: string) => void} edit
 * @returns {() => void}
 */
export function editChildEnv(edit) {
  let active = true;
  const proto = /** @type {any} */ (ChildProcess.prototype);
  const realSpawn = proto.spawn;
  const editedSpawn = function editedSpawn(/** @type {any} */ options) {
    if (active && options && Array.isArray(options.envPairs)) {
      /** @type {Record<string, string | undefined>} */
      const env = Object.create(null);
      for (const pair of options.envPairs) {
        const at = String(pair).indexOf('=');
        env[String(pair).slice(0, at)] = String(pair).slice(at + 1);
      }
      edit(env, Array.isArray(options.args) ? options.args.map(String) : [String(options.file)], cwdOf(options.cwd));
      options.envPairs = Object.entries(env)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${k}=${v}`);
    }
    return realSpawn.call(this, options);
  };
  proto.spawn = editedSpawn;
  const cp = /** @type {Record<string, any>} */ (childProcess);
  /** @type {Array<[string, Function, Function]>} */
  const syncs = [];
  for (const name of ['spawnSync', 'execSync', 'execFileSync']) {
    const real = cp[name];
    if (typeof real !== 'function') continue;
    const edited = function (/** @type {unknown[]} */ ...args) {
      if (active) {
        // The options: the first argument after the file or command that is an object and not the args array.
        const at = args.findIndex((a, i) => i > 0 && a !== null && typeof a === 'object' && !Array.isArray(a));
        const options = /** @type {{ env?: NodeJS.ProcessEnv, shell?: unknown, cwd?: unknown } | undefined} */ (
          at === -1 ? undefined : args[at]
        );
        const env = { ...(options?.env ?? process.env) };
        edit(env, commandLine(name, args, options), cwdOf(options?.cwd));
        // None given: after the args array if there is one (spawnSync(file, args)), else second.
        args[at !== -1 ? at : Array.isArray(args[1]) ? 2 : 1] = { ...options, env };
      }
      return real.apply(this, args);
    };
    Object.defineProperties(edited, Object.getOwnPropertyDescriptors(real));
    cp[name] = edited;
    syncs.push([name, real, edited]);
  }
  syncBuiltinESMExports();
  return function undo() {
    active = false;
    if (proto.spawn === editedSpawn) proto.spawn = realSpawn;
    for (const [name, real, edited] of syncs) if (cp[name] === edited) cp[name] = real;
    syncBuiltinESMExports();
  };
}

/** The folder a child starts in: its `cwd` option (a path or a file URL), else this process's. */
function cwdOf(/** @type {unknown} */ cwd) {
  try {
    if (typeof cwd === 'string' && cwd !== '') return path.resolve(cwd);
    if (cwd instanceof URL) return fileURLToPath(cwd);
  } catch {}
  return process.cwd();
}

/**
 * The command line a synchronous call starts: execSync's command and a `shell` option's through the shell.
 * @param {string} name
 * @param {unknown[]} args
 * @param {{ shell?: unknown } | undefined} options
 * @returns {string[]}
 */
function commandLine(name, args, options) {
  const file = String(args[0]);
  const rest = Array.isArray(args[1]) ? args[1].map(String) : [];
  if (name === 'execSync' || (options?.shell !== undefined && options.shell !== false))
    return ['/bin/sh', '-c', [file, ...rest].join(' ')];
  return [file, ...rest];
}

/** Names the variables tapedeck gave the agent (comma-separated): see keepGivenEnv. */
export const KEEP_ENV = 'TAPEDECK_KEEP_ENV';
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/**
 * Every process this one starts keeps what tapedeck gave the agent, whatever env it was given: the
 * variables named in TAPEDECK_KEEP_ENV, with this process's values, where its env lacks them, and
 * `preload` (a file URL) imported through NODE_OPTIONS. Programs are often started with an env of
 * their own (an MCP client's stdio transport passes PATH, HOME and four more; execa with
 * `extendEnv: false`; `env -i`): without them a Node server over stdio ran unrecorded, and a curl
 * in the OS sandbox had no proxy to go through. Non-Node programs get them too (a shell passes them
 * on to the Node processes it runs). Values the program was given stand.
 * @param {string} preload
 * @returns {() => void} undo
 */
export function keepGivenEnv(preload) {
  return editChildEnv((env) => withGivenEnv(env, preload));
}

/**
 * Puts back in `env` (a child's or a worker's) what tapedeck gave this process: see keepGivenEnv.
 * @param {Record<string, string | undefined>} env
 * @param {string} preload a file URL
 */
export function withGivenEnv(env, preload) {
  const names = [
    KEEP_ENV,
    ...String(process.env[KEEP_ENV] ?? '')
      .split(',')
      .filter((name) => ENV_NAME.test(name) && name !== 'NODE_OPTIONS' && name !== PROCESS_ENV),
  ];
  for (const name of names)
    if (env[name] === undefined && process.env[name] !== undefined) env[name] = process.env[name];
  // A PYTHONPATH of the program's own keeps tapedeck's Python hook first (sandbox/python/hook.ts).
  const hook = process.env.TAPEDECK_PYTHON_HOOK;
  if (hook && env.PYTHONPATH !== undefined && !env.PYTHONPATH.split(path.delimiter).includes(hook))
    env.PYTHONPATH = env.PYTHONPATH === '' ? hook : `${hook}${path.delimiter}${env.PYTHONPATH}`;
  const options = env.NODE_OPTIONS ?? '';
  const file = preload.startsWith('file:') ? fileURLToPath(preload) : preload;
  if (!options.includes(file) && !options.includes(preload)) env.NODE_OPTIONS = `${options} --import=${preload}`.trim();
  return env;
}

/** What the ids of this thread's calls start with: its pid, and a worker thread's id after it. */
export function threadOrigin() {
  return isMainThread ? String(process.pid) : `${process.pid}w${threadId}`;
}

/**
 * Loads `preload` (a file URL) in every worker thread before the worker's own code: Node runs
 * `--import` preloads in the main thread only. `withEnv` adds the preload's variables to an env
 * given to a worker as an object (without one, a worker gets a copy of this process's).
 * `started(worker)` is told of each.
 * @param {string} preload
 * @param {(env: Record<string, string | undefined>) => Record<string, string | undefined>} withEnv
 * @param {(worker: import('node:worker_threads').Worker) => void} [started]
 */
export function loadInWorkers(preload, withEnv, started = () => {}) {
  const RealWorker = workerThreads.Worker;
  class PreloadedWorker extends RealWorker {
    /**
     * @param {string | URL} filename
     * @param {import('node:worker_threads').WorkerOptions} [options]
     */
    constructor(filename, options = {}) {
      const load = `import(${JSON.stringify(preload)})`;
      let code;
      if (options.eval) code = `${load}.then(() => { ${String(filename)}\n });`;
      else {
        const url = filename instanceof URL ? filename.href : new URL(`file://${path.resolve(String(filename))}`).href;
        code = `${load}.then(() => import(${JSON.stringify(url)}));`;
      }
      const env =
        options.env && typeof options.env === 'object'
          ? withEnv(/** @type {Record<string, string | undefined>} */ (options.env))
          : options.env;
      super(code, { ...options, eval: true, ...(env ? { env } : {}) });
      started(this);
    }
  }
  workerThreads.Worker = PreloadedWorker;
  syncBuiltinESMExports();
}

/**
 * Calls `flush` before this worker thread posts a message (to its parent or on any port or
 * channel) and returns what undoes it. What the thread recorded before the message must be
 * written by then: its parent may answer it with terminate() or process.exit(), which end the
 * thread without running its exit handlers or its next turn. Does nothing in the main thread.
 * @param {() => void} flush
 * @returns {() => void}
 */
export function flushBeforePosting(flush) {
  if (isMainThread) return () => {};
  /** @type {Array<() => void>} */
  const undo = [];
  for (const Port of [workerThreads.MessagePort, workerThreads.BroadcastChannel]) {
    const proto = Port?.prototype;
    const real = proto?.postMessage;
    if (typeof real !== 'function') continue;
    /** @this {unknown} @param {unknown[]} args */
    const postMessage = function (...args) {
      try {
        flush();
      } catch {}
      return Reflect.apply(real, this, args);
    };
    Object.defineProperties(postMessage, Object.getOwnPropertyDescriptors(real));
    proto.postMessage = postMessage;
    undo.push(() => {
      if (proto.postMessage === postMessage) proto.postMessage = real;
    });
  }
  return () => {
    for (const step of undo) step();
  };
}

/**
 * What a process's `hello` says of its environment (sandbox/protocol.ts HelloSchema): its variables
 * of 8 characters or more, but tapedeck's own and NODE_OPTIONS. The recorder and the replayer learn
 * the secret-named ones (src/recording/redact-known.ts): a variable the agent set for this process
 * alone is then redacted wherever the process quotes it.
 * @returns {Record<string, string>}
 */
export function processEnvForRedaction() {
  /** @type {Record<string, string>} */
  const out = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (typeof value !== 'string' || value.length < 8 || value.length > 16_384) continue;
    if (name.startsWith('TAPEDECK_') || name === 'NODE_OPTIONS') continue;
    out[name] = value;
  }
  return out;
}
