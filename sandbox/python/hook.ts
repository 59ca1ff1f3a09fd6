// The Python side of tapedeck's values (sandbox/python/_tapedeck_values.py): the recorder and the
// replayer put its folder first on the agent's PYTHONPATH, where its sitecustomize.py starts it in
// every Python process of the tree (and then runs the sitecustomize it shadows). A PYTHONPATH the
// agent has stays after it; the preloads keep the folder on it for a process started with a
// PYTHONPATH of its own (withGivenEnv in sandbox/preload/shared-process.mjs, told by PYTHON_HOOK_ENV).
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path, { delimiter, dirname } from 'node:path';
import { packagePath } from '../../src/package.js';

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
 * The Python interpreters an agent may start, by real path: the command's own program when it is
 * one, and each `python3` and `python` on the given PATHs.
 */
export function pythonsOf(command: readonly string[], paths: ReadonlyArray<string | undefined>): string[] {
  const found = new Set<string>();
  const add = (file: string) => {
    try {
      if (existsSync(file)) found.add(realpathSync(file));
    } catch {}
  };
  const program = command[0];
  if (program !== undefined && PYTHON_PROGRAM.test(path.basename(program)) && program.includes('/')) add(program);
  for (const dirs of paths)
    for (const dir of (dirs ?? '').split(delimiter))
      if (path.isAbsolute(dir))
        for (const name of [
          'python3',
          'python',
          ...(program && PYTHON_PROGRAM.test(program) && !program.includes('/') ? [program] : []),
        ])
          add(path.join(dir, name));
  return [...found];
}

/** A Python interpreter's program name: python, python3, python3.12, pypy3. */
const PYTHON_PROGRAM = /^(?:python|pypy)(?:\d+(?:\.\d+)?)?$/;

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
  const run = (python: string, args: string[]) =>
    new Promise<string>((resolve) => {
      execFile(python, ['-I', ...args], { env: {}, timeout: 10_000 }, (error, stdout) =>
        resolve(error ? '' : stdout.trim()),
      );
    });
  const probe =
    'import json, sys; m = sys.modules.get("sitecustomize"); print(json.dumps([getattr(m, "__file__", None), getattr(m, "__cached__", None)]))';
  const compile =
    'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], dfile=sys.argv[3], doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH); print("ok")';
  await Promise.all(
    pythons.map(async (python, i) => {
      try {
        const [file, cached] = JSON.parse((await run(python, ['-c', probe])) || '[]') as unknown[];
        if (
          typeof file !== 'string' ||
          typeof cached !== 'string' ||
          !path.isAbsolute(file) ||
          !path.isAbsolute(cached)
        )
          throw new Error('none');
        if (!existsSync(cached) || lstatSync(cached).isSymbolicLink()) throw new Error('no cache to cover');
        const target = realpathSync(file);
        const content = coveringSite(target, readFileSync(target, 'utf8'));
        const source = path.join(tmp, `python-site-${i}.py`);
        writeFileSync(source, content);
        if ((await run(python, ['-c', compile, source, `${source}c`, file])) !== 'ok') throw new Error('not compiled');
        over.push({ target, content }, { target: cached, content: readFileSync(`${source}c`) });
      } catch {
        uncovered.push(python);
      }
    }),
  );
  return { over, covered: pythons.filter((p) => !uncovered.includes(p)), uncovered };
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
