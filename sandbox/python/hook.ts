// The Python side of tapedeck's values (sandbox/python/_tapedeck_values.py): the recorder and the
// replayer put its folder first on the agent's PYTHONPATH, where its sitecustomize.py starts it in
// every Python process of the tree (and then runs the sitecustomize it shadows). A PYTHONPATH the
// agent has stays after it; the preloads keep the folder on it for a process started with a
// PYTHONPATH of its own (withGivenEnv in sandbox/preload/shared-process.mjs, told by PYTHON_HOOK_ENV).
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import path, { delimiter, dirname } from 'node:path';
import * as z from 'zod';
import { packagePath } from '../../src/package.js';
import { stateHome } from '../../src/recording/state-home.js';
import { pythonPrograms } from '../preload/shared-python.mjs';

/** The folder holding the hook's sitecustomize.py (named by the file: the package ships its .py files). */
export const PYTHON_HOOK_DIR = dirname(packagePath('sandbox/python/sitecustomize.py'));
/** Names the hook's folder for the preloads (kept through TAPEDECK_KEEP_ENV, as PYTHONPATH is). */
export const PYTHON_HOOK_ENV = 'TAPEDECK_PYTHON_HOOK';

/** `env` with the hook's folder first on PYTHONPATH (once), and named in TAPEDECK_PYTHON_HOOK. */
export function withPythonHook<T extends Record<string, string | undefined>>(env: T): T {
  const given = (env.PYTHONPATH ?? '').split(delimiter).filter((p) => p !== '' && p !== PYTHON_HOOK_DIR);
  return { ...env, [PYTHON_HOOK_ENV]: PYTHON_HOOK_DIR, PYTHONPATH: [PYTHON_HOOK_DIR, ...given].join(delimiter) };
}

/**
 * The Python interpreters an agent may start, by real path: those its command runs (its own
 * program, through env or a shell, or as its script's shebang names it: from `cwd`), and each
 * `python3` and `python` on the given PATHs.
 */
export function pythonsOf(
  command: readonly string[],
  paths: ReadonlyArray<string | undefined>,
  cwd: string = process.cwd(),
): string[] {
  const found = new Set<string>();
  const add = (file: string) => {
    try {
      if (existsSync(file)) found.add(realpathSync(file));
    } catch {}
  };
  const named = paths.flatMap((PATH) => pythonPrograms(command, { PATH, cwd }));
  for (const program of named) if (program.includes('/')) add(path.resolve(cwd, program));
  const names = new Set(['python3', 'python', ...named.filter((p) => !p.includes('/'))]);
  for (const dirs of paths)
    for (const dir of (dirs ?? '').split(delimiter))
      if (path.isAbsolute(dir)) for (const name of names) add(path.join(dir, name));
  return [...found];
}

/**
 * What the OS sandbox shows over each interpreter's own sitecustomize (a distribution's, found with
 * -I): a file that starts the hook from TAPEDECK_PYTHON_HOOK, then runs the one it covers, and over
 * its cached bytecode the file's, compiled unchecked (so no process writes a new cache: a replay's
 * root is read-only, a recording's the real disk). So a process started with -I or -E (which ignore
 * PYTHONPATH) has its values recorded and replayed too. -S imports no site at all, and an
 * interpreter with no sitecustomize and cache of its own has nothing to cover (the read-only root
 * takes no new file): `uncovered` names those, `covered` the others (the preloads, told in
 * TAPEDECK_PYTHON_COVERED, say which Python children run without the hook: shared-python.mjs). `tmp` is a private folder for the compiled files.
 */
export async function isolatedSites(
  pythons: readonly string[],
  tmp: string,
): Promise<{ over: Array<{ target: string; content: string | Buffer }>; covered: string[]; uncovered: string[] }> {
  const over: Array<{ target: string; content: string | Buffer }> = [];
  const uncovered: string[] = [];
  await Promise.all(
    pythons.map(async (python, i) => {
      const cover = await coverOf(python, path.join(tmp, `python-site-${i}.py`));
      if (cover === undefined) uncovered.push(python);
      else over.push(...cover);
    }),
  );
  return { over, covered: pythons.filter((p) => !uncovered.includes(p)), uncovered };
}

type Cover = Array<{ target: string; content: string | Buffer }>;

/** What the kept answer for one interpreter holds (`python-sites/<key>.json` in the state folder). */
const KeptSchema = z.union([
  z.object({ none: z.literal(true) }).strict(),
  z
    .object({
      file: z.string(),
      cached: z.string(),
      target: z.string(),
      sites: z.string(),
      pyc: z.string().regex(/^[0-9a-f]{64}$/),
    })
    .strict(),
]);

/** The files that make a cover's answer, as they are now: a changed one is probed again. */
const fileId = (file: string): string => {
  try {
    const s = statSync(file);
    return [file, s.dev, s.ino, s.size, s.mtimeMs, s.ctimeMs].join(':');
  } catch {
    return `${file}:missing`;
  }
};

/** Answers of this process, by interpreter key (a bisect replays many times). */
const coversMade = new Map<string, Promise<Cover | undefined>>();

/**
 * The cover of one interpreter's own sitecustomize, or undefined when it has none to cover. Each
 * answer is kept in the state folder by the interpreter's identity (and the cover's text), so the
 * two Python runs it takes (~0.1 s each, more through a version manager's shim) are paid once per
 * interpreter, not at every sandboxed record and replay; a kept answer whose files changed since
 * is probed again.
 */
function coverOf(python: string, source: string): Promise<Cover | undefined> {
  const key = createHash('sha256')
    .update(JSON.stringify([fileId(python), coveringSite('', '')]))
    .digest('hex');
  let made = coversMade.get(key);
  if (made === undefined) {
    made = keptCover(key) ?? probeCover(python, source, key);
    coversMade.set(key, made);
  }
  return made;
}

const keptDir = () => path.join(stateHome(), 'python-sites');

function keptCover(key: string): Promise<Cover | undefined> | undefined {
  try {
    const kept = KeptSchema.parse(JSON.parse(readFileSync(path.join(keptDir(), `${key}.json`), 'utf8')));
    if ('none' in kept) return Promise.resolve(undefined);
    if (fileId(kept.file) + fileId(kept.cached) !== kept.sites) return undefined;
    const pyc = readFileSync(path.join(keptDir(), `${kept.pyc}.pyc`));
    if (createHash('sha256').update(pyc).digest('hex') !== kept.pyc) return undefined;
    const content = coveringSite(kept.target, readFileSync(kept.target, 'utf8'));
    return Promise.resolve([
      { target: kept.target, content },
      { target: kept.cached, content: pyc },
    ]);
  } catch {
    return undefined;
  }
}

/** Keeps an answer (written whole to a private temp, renamed over); a state folder that cannot be written keeps nothing. */
function keep(name: string, content: string | Buffer): void {
  const file = path.join(keptDir(), name);
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    mkdirSync(keptDir(), { recursive: true, mode: 0o700 });
    writeFileSync(temp, content, { flag: 'wx', mode: 0o600 });
    renameSync(temp, file);
  } catch {
    try {
      unlinkSync(temp);
    } catch {}
  }
}

async function probeCover(python: string, source: string, key: string): Promise<Cover | undefined> {
  const run = (args: string[]) =>
    new Promise<string>((resolve) => {
      execFile(python, ['-I', ...args], { env: {}, timeout: 10_000 }, (error, stdout) =>
        resolve(error ? '' : stdout.trim()),
      );
    });
  const probe =
    'import json, sys; m = sys.modules.get("sitecustomize"); print(json.dumps([getattr(m, "__file__", None), getattr(m, "__cached__", None)]))';
  const compile =
    'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], dfile=sys.argv[3], doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH); print("ok")';
  const ran = await run(['-c', probe]);
  if (ran === '') return undefined; // not run (a timeout, a broken shim): probed again next time
  try {
    const [file, cached] = JSON.parse(ran) as unknown[];
    if (typeof file !== 'string' || typeof cached !== 'string' || !path.isAbsolute(file) || !path.isAbsolute(cached))
      throw new Error('none');
    if (!existsSync(cached) || lstatSync(cached).isSymbolicLink()) throw new Error('no cache to cover');
    const target = realpathSync(file);
    const content = coveringSite(target, readFileSync(target, 'utf8'));
    writeFileSync(source, content);
    if ((await run(['-c', compile, source, `${source}c`, file])) !== 'ok') return undefined;
    const pyc = readFileSync(`${source}c`);
    const sha = createHash('sha256').update(pyc).digest('hex');
    keep(`${sha}.pyc`, pyc);
    keep(`${key}.json`, JSON.stringify({ file, cached, target, sites: fileId(file) + fileId(cached), pyc: sha }));
    return [
      { target, content },
      { target: cached, content: pyc },
    ];
  } catch {
    keep(`${key}.json`, JSON.stringify({ none: true }));
    return undefined;
  }
}

/** The file shown over an interpreter's sitecustomize `target` (its text `original`) in the OS sandbox. */
function coveringSite(target: string, original: string): string {
  return `# tapedeck (sandbox/python/hook.ts isolatedSites): shown over ${target} in the OS sandbox, so
# that a process started with -I or -E, which ignore PYTHONPATH, starts the hook too; then the
# file it covers runs as it would have.
def _tapedeck_isolated():
    import os, sys

    hook = os.environ.get(${JSON.stringify(PYTHON_HOOK_ENV)})
    if not hook or "_tapedeck_values" in sys.modules:
        return
    if not (os.environ.get("TAPEDECK_RECORD_IPC") or os.environ.get("TAPEDECK_REPLAY_CONFIG")):
        return
    sys.path.insert(0, hook)
    try:
        import _tapedeck_values

        _tapedeck_values.install()
    except Exception as error:
        sys.stderr.write("tapedeck: this Python process's values are not recorded or replayed: %s\\n" % error)
    finally:
        if hook in sys.path:
            sys.path.remove(hook)


_tapedeck_isolated()
del _tapedeck_isolated
exec(compile(${JSON.stringify(original)}, ${JSON.stringify(target)}, "exec"))
`;
}
