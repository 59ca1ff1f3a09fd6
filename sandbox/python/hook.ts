// The Python side of tapedeck's values (sandbox/python/_tapedeck_values.py): the recorder and the
// replayer put its folder first on the agent's PYTHONPATH, where its sitecustomize.py starts it in
// every Python process of the tree (and then runs the sitecustomize it shadows). A PYTHONPATH the
// agent has stays after it; the preloads keep the folder on it for a process started with a
// PYTHONPATH of its own (withGivenEnv in sandbox/preload/shared-process.mjs, told by PYTHON_HOOK_ENV).
import { delimiter, dirname } from 'node:path';
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
