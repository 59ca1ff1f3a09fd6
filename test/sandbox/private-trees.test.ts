// The OS sandbox makes /tmp, /var/tmp, /run and /dev/shm private, and binds back (read-only) what
// the agent's command and env point at there: the whole tree each path belongs to, not only its
// folder. A replay finds what a program finds beside or above its own path: a venv's pyvenv.cfg
// and site-packages beside its bin/python (named by path, or found on PATH), and the node_modules
// of a monorepo's root above the package the agent runs in. Before, only the program's folder
// came in: a venv's python ran as the base interpreter without the venv's packages
// (ModuleNotFoundError), and a package's imports from its root's node_modules failed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { pathsIn, privateTree } from '../../sandbox/os/launcher.js';
import { recordCommand } from '../../src/record/index.js';
import { replay } from '../../src/replay/index.js';
import { tempDir } from '../record/helpers.js';

const PYTHON = '/usr/bin/python3';
const CI_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const BWRAP = detectIsolation().level === 'bwrap';
/** A venv without pip: made offline in well under a second. */
const HAS_VENV =
  existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import venv, ensurepip'], { stdio: 'ignore' }).status === 0;

async function recordAndReplay(command: string[], cwd: string, env: Record<string, string>, dir: string) {
  let stdout = '';
  let stderr = '';
  const rec = path.join(dir, 'rec');
  const recorded = await recordCommand({
    command,
    cwd,
    env,
    out: rec,
    stdio: 'pipe',
    onSpawn: (child) => {
      child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    },
  });
  expect(recorded.exitCode, stderr).toBe(0);
  // The replay's own env says where programs are found (PATH is never taken from a recording).
  const result = await replay({
    recording: rec,
    mode: 'exact',
    out: path.join(dir, 'replay'),
    stdio: 'pipe',
    isolation: 'bwrap',
    env,
    timeoutMs: 120_000,
  });
  expect(result.isolation?.level).toBe('bwrap');
  expect(result.output?.stderr ?? '').toBe('');
  expect(result.divergences).toEqual([]);
  return { live: stdout, replayed: result.output?.stdout ?? '' };
}

describe('private trees', () => {
  it('a path under a private folder brings its whole tree: the first folder below the private one', () => {
    expect(privateTree('/tmp/proj/packages/agent')).toBe('/tmp/proj');
    expect(privateTree('/tmp/venv/bin/python')).toBe('/tmp/venv');
    expect(privateTree('/tmp/agent.mjs')).toBe('/tmp/agent.mjs');
    expect(privateTree('/var/tmp/x/y')).toBe('/var/tmp/x');
    expect(privateTree('/tmp')).toBe('/tmp');
    expect(privateTree('/tmpx/y')).toBeUndefined();
    expect(privateTree('/home/u/proj')).toBeUndefined();
  });

  it('pathsIn: the arguments, the program found on PATH, and the folders of PATH, PYTHONPATH, NODE_PATH, VIRTUAL_ENV', () => {
    const tmp = tempDir('tapedeck-private-trees-');
    try {
      const bin = path.join(tmp.dir, 'venv', 'bin');
      const lib = path.join(tmp.dir, 'lib');
      mkdirSync(bin, { recursive: true });
      mkdirSync(lib);
      writeFileSync(path.join(bin, 'tool'), '');
      writeFileSync(path.join(tmp.dir, 'agent.py'), '');
      const env = { PATH: `${bin}:${CI_PATH}`, PYTHONPATH: `${lib}:relative`, VIRTUAL_ENV: path.dirname(bin) };
      const found = pathsIn(['tool', 'agent.py', '--flag', 'missing.txt'], tmp.dir, env);
      expect(found).toEqual(
        expect.arrayContaining([path.join(bin, 'tool'), path.join(tmp.dir, 'agent.py'), bin, lib, path.dirname(bin)]),
      );
      expect(found).not.toContain(path.join(tmp.dir, 'missing.txt'));
      // A private folder itself never: the agent's /tmp would be the real one, read-only.
      const roots = pathsIn(['node', '/tmp', '--out', '/var/tmp'], tmp.dir, { PATH: `/tmp:${CI_PATH}` });
      expect(roots.filter((p) => p === '/tmp' || p === '/var/tmp')).toEqual([]);
    } finally {
      tmp.remove();
    }
  });

  describe.runIf(BWRAP)('in the OS sandbox', () => {
    const tmp = tempDir('tapedeck-private-trees-');
    // The venv in a tree of its own, apart from the agent's (its cwd's tree comes in anyway).
    const venvTree = tempDir('tapedeck-private-venv-');
    afterAll(() => {
      tmp.remove();
      venvTree.remove();
    });

    it.runIf(HAS_VENV)(
      "a venv's python, named by path or found on PATH, runs with the venv's packages",
      { timeout: 240_000 },
      async () => {
        const venv = path.join(venvTree.dir, 'venv');
        expect(spawnSync(PYTHON, ['-m', 'venv', '--without-pip', venv]).status).toBe(0);
        const lib = path.join(venv, 'lib');
        const sitePackages = path.join(lib, readdirSync(lib)[0] as string, 'site-packages');
        writeFileSync(path.join(sitePackages, 'venv_marker.py'), 'WHERE = "the venv"\n');
        const work = path.join(tmp.dir, 'work');
        mkdirSync(work);
        writeFileSync(
          path.join(work, 'agent.py'),
          'import sys, venv_marker\nprint(venv_marker.WHERE, sys.prefix != sys.base_prefix)\n',
        );
        for (const [name, command, env] of [
          ['by path', [path.join(venv, 'bin', 'python'), 'agent.py'], { PATH: CI_PATH }],
          ['on PATH', ['python', 'agent.py'], { PATH: `${path.join(venv, 'bin')}:${CI_PATH}`, VIRTUAL_ENV: venv }],
        ] as const) {
          const run = await recordAndReplay([...command], work, env, path.join(tmp.dir, name.replace(' ', '-')));
          expect(run.live).toBe('the venv True\n');
          expect(run.replayed, name).toBe(run.live);
        }
      },
    );

    it("a package of a monorepo imports from its root's node_modules", { timeout: 240_000 }, async () => {
      const root = path.join(tmp.dir, 'mono');
      const dep = path.join(root, 'node_modules', 'mono-dep');
      const pkg = path.join(root, 'packages', 'agent');
      mkdirSync(dep, { recursive: true });
      mkdirSync(pkg, { recursive: true });
      writeFileSync(
        path.join(dep, 'package.json'),
        JSON.stringify({ name: 'mono-dep', type: 'module', exports: './index.js' }),
      );
      writeFileSync(path.join(dep, 'index.js'), "export const where = 'the root';\n");
      writeFileSync(path.join(pkg, 'agent.mjs'), "import { where } from 'mono-dep';\nconsole.log(where);\n");
      const run = await recordAndReplay(
        [process.execPath, 'agent.mjs'],
        pkg,
        { PATH: CI_PATH },
        path.join(tmp.dir, 'mono-run'),
      );
      expect(run.live).toBe('the root\n');
      expect(run.replayed).toBe(run.live);
    });
  });
});
