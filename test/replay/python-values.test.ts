// Python processes of an agent's tree have their clock, random and uuid values recorded and handed
// back (sandbox/python/): a Python agent that stamps a request, Postgres rows (psql) and an sqlite
// file with them replays with no divergence and the recorded end state, under the CI PATH's
// /usr/bin/python3, in the OS sandbox and without it; a Node agent's Python tool gets its own
// process's values; the standard library's own draws (asyncio, tempfile, threading) are not
// counted; a Python process with no tapedeck channel, or a hostile config, runs as it would.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { unhookedPython } from '../../sandbox/preload/shared-python.mjs';
import { shellCommands } from '../../sandbox/preload/shared-shell-words.mjs';
import { PYTHON_HOOK_DIR, withPythonHook } from '../../sandbox/python/hook.js';
import { recordCommand } from '../../src/record/index.js';
import { replay } from '../../src/replay/index.js';
import { scratchDatabase, startServer, tempDir } from '../record/helpers.js';

const PY_AGENT = fileURLToPath(new URL('fixtures/py-values-agent.py', import.meta.url));
const THREADS_AGENT = fileURLToPath(new URL('fixtures/py-threads-agent.py', import.meta.url));
const RAW_THREADS_AGENT = fileURLToPath(new URL('fixtures/py-rawthreads-agent.py', import.meta.url));
const FLAGS_AGENT = fileURLToPath(new URL('fixtures/py-flags-agent.py', import.meta.url));
const NODE_AGENT = fileURLToPath(new URL('fixtures/py-tool-agent.mjs', import.meta.url));
const RANDOM_AGENT = fileURLToPath(new URL('fixtures/py-random-agent.py', import.meta.url));
const UNHOOKED_TOOL = fileURLToPath(new URL('fixtures/py-unhooked-tool.mjs', import.meta.url));
const PYTHON = '/usr/bin/python3';
const CI_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const HAS_PYTHON = existsSync(PYTHON);
const BWRAP = detectIsolation().level === 'bwrap';
const PG_URL = process.env.TAPEDECK_PG_URL;
const HAS_PSQL = spawnSync('sh', ['-c', 'command -v psql'], { env: { PATH: CI_PATH } }).status === 0;

type Values = Record<string, unknown>;

/** The nondeterminism events of a recording, as (process, kind, values). */
function valueEvents(dir: string) {
  return readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; payload: { process?: string; kind: string; values: unknown[] } })
    .filter((e) => e.type === 'nondeterminism')
    .map((e) => ({ process: e.payload.process ?? 'agent', kind: e.payload.kind, values: e.payload.values }));
}

/** Every value a process drew, by kind (in order). */
function byProcess(dir: string) {
  const out: Record<string, Record<string, unknown[]>> = {};
  for (const e of valueEvents(dir)) {
    const kinds = (out[e.process] ??= {});
    (kinds[e.kind] ??= []).push(...e.values);
  }
  return out;
}

async function record(
  command: string[],
  out: string,
  options: { isolate: boolean; env?: Values; db?: string; fs?: string; unhooked?: (u: unknown) => void },
) {
  let stdout = '';
  let stderr = '';
  const result = await recordCommand({
    command,
    env: { PATH: CI_PATH, ...(options.env as Record<string, string>) },
    out,
    stdio: 'pipe',
    isolate: options.isolate,
    ...(options.db ? { dbUrl: options.db } : {}),
    ...(options.fs ? { fsRoot: options.fs } : {}),
    onSpawn: (child) => {
      child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    },
  });
  expect(result.exitCode, stderr).toBe(0);
  expect(stderr).toBe('');
  options.unhooked?.(result.unhooked ?? []);
  return JSON.parse(stdout) as Values;
}

async function replayed(recording: string, out: string, isolation: 'bwrap' | 'none') {
  const result = await replay({ recording, mode: 'exact', out, stdio: 'pipe', isolation, timeoutMs: 120_000 });
  expect(result.divergences, result.output?.stderr).toEqual([]);
  expect(result.output?.stderr ?? '').toBe('');
  return { result, seen: JSON.parse(result.output?.stdout ?? '{}') as Values };
}

/** What the agent read: every kind, the values its child drew, and the stdlib's own draws left out. */
function expectEveryKind(seen: Values) {
  expect(Object.keys(seen)).toEqual(
    expect.arrayContaining(['time', 'now', 'random', 'urandom', 'token', 'uuid4', 'uuid1', 'perf_ns', 'after']),
  );
  // No "datetime.date size changed" from psycopg's binary or pandas under the hook.
  expect(seen.layout).toEqual({ date: true, datetime: true });
}

describe.runIf(HAS_PYTHON)("a Python process's values", () => {
  const tmp = tempDir('tapedeck-py-values-');
  afterAll(() => tmp.remove());

  it.runIf(BWRAP && PG_URL && HAS_PSQL)(
    'a Python agent stamping a request, Postgres rows and an sqlite file replays exactly in the OS sandbox',
    { timeout: 240_000 },
    async () => {
      const db = await scratchDatabase(
        PG_URL as string,
        'pyvalues_',
        'CREATE TABLE stamped (id uuid PRIMARY KEY, at timestamp NOT NULL, nonce text NOT NULL, r float8 NOT NULL)',
      );
      let hits = 0;
      const bodies: string[] = [];
      const api = await startServer((req, body, res) => {
        hits++;
        bodies.push(`${req.headers['x-request-id']} ${body}`);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ ok: true, got: JSON.parse(body || '{}').id }));
      });
      try {
        const work = path.join(tmp.dir, 'work');
        mkdirSync(work);
        const u = new URL(db.url);
        const env = {
          API_URL: api.url,
          PGHOST: u.hostname,
          PGPORT: u.port || '5432',
          PGDATABASE: u.pathname.slice(1),
          PGUSER: 'postgres',
          WORK: work,
          CHILD: '1',
        };
        const rec = path.join(tmp.dir, 'rec-bwrap');
        const seen = await record([PYTHON, PY_AGENT], rec, { isolate: true, env, db: db.url, fs: work });
        expectEveryKind(seen);
        expect(hits).toBe(1);
        // The agent's own values and its Python child's (its second: psql was the first), kept apart.
        const recorded = byProcess(rec);
        expect(Object.keys(recorded).sort()).toEqual(['2', 'agent']);
        for (const kind of ['clock', 'random', 'uuid', 'randomBytes', 'hrtime'])
          expect(recorded.agent?.[kind]).toBeDefined();
        const { result, seen: again } = await replayed(rec, path.join(tmp.dir, 'replay-bwrap'), 'bwrap');
        expect(again).toEqual(seen);
        expect(result.worldMatches).toBe(true);
        expect(hits).toBe(1);
        // The replay's own recording: every process handed the very values it drew.
        expect(byProcess(path.join(tmp.dir, 'replay-bwrap'))).toEqual(recorded);
      } finally {
        await api.close();
        await db.drop();
      }
    },
  );

  it('a Python agent replays its values without the OS sandbox (recorded without --isolate)', {
    timeout: 180_000,
  }, async () => {
    const rec = path.join(tmp.dir, 'rec-none');
    const seen = await record([PYTHON, PY_AGENT], rec, { isolate: false, env: { CHILD: '1' } });
    expectEveryKind(seen);
    const { seen: again } = await replayed(rec, path.join(tmp.dir, 'replay-none'), 'none');
    expect(again).toEqual(seen);
    expect(byProcess(path.join(tmp.dir, 'replay-none'))).toEqual(byProcess(rec));
  });

  it.runIf(BWRAP)(
    "a Node agent's Python tool gets its own process's values, with a PYTHONPATH of its own",
    {
      timeout: 180_000,
    },
    async () => {
      const rec = path.join(tmp.dir, 'rec-tool');
      const seen = await record([process.execPath, NODE_AGENT], rec, { isolate: true, env: { PYTHON } });
      const recorded = byProcess(rec);
      // The tool's two runs: the agent's first and second child.
      expect(Object.keys(recorded).sort()).toEqual(['1', '2', 'agent']);
      expect(recorded['1']?.uuid).toContain((seen.first as Values).uuid4);
      expect(recorded['2']?.uuid).toContain((seen.second as Values).uuid4);
      const { seen: again } = await replayed(rec, path.join(tmp.dir, 'replay-tool'), 'bwrap');
      expect(again).toEqual(seen);
    },
  );

  for (const isolate of [false, ...(BWRAP ? [true] : [])])
    it(`a ThreadPoolExecutor's workers, drawing in another order each run, each get their own thread's values (${isolate ? 'OS sandbox' : 'no sandbox'})`, {
      timeout: 180_000,
    }, async () => {
      const name = isolate ? 'bwrap' : 'none';
      const rec = path.join(tmp.dir, `rec-threads-${name}`);
      const seen = await record([PYTHON, THREADS_AGENT, '6'], rec, { isolate });
      // Each thread's values under its own key: the n-th thread the main thread started is `wn`:
      // the pool's 6 (its tasks wait for each other, so it starts all 6 on any machine), then the
      // named thread.
      const recorded = byProcess(rec);
      expect(Object.keys(recorded).sort()).toEqual(['agent', 'w1', 'w2', 'w3', 'w4', 'w5', 'w6', 'w7']);
      expect(recorded.w7?.uuid).toEqual([(seen.named as Values).uuid]);
      const { seen: again } = await replayed(
        rec,
        path.join(tmp.dir, `replay-threads-${name}`),
        isolate ? 'bwrap' : 'none',
      );
      expect(again).toEqual(seen);
    });

  for (const isolate of [false, ...(BWRAP ? [true] : [])])
    it(`threads started below threading (_thread's, the C library's), drawing in another order each run, each get their own values (${isolate ? 'OS sandbox' : 'no sandbox'})`, {
      timeout: 180_000,
    }, async () => {
      const name = isolate ? 'bwrap' : 'none';
      const rec = path.join(tmp.dir, `rec-rawthreads-${name}`);
      const seen = await record([PYTHON, RAW_THREADS_AGENT, '5'], rec, { isolate });
      // _thread's threads are named as threading's (the n-th its starter started: w1 … w5, and
      // w1's own two, w1w1 and w1w2); the one the C library started, which Python did not, is w0.
      const recorded = byProcess(rec);
      expect(Object.keys(recorded).sort()).toEqual(['agent', 'w0', 'w1', 'w1w1', 'w1w2', 'w2', 'w3', 'w4', 'w5']);
      const threads = seen.threads as Record<string, Values>;
      expect(recorded.w1w2?.uuid).toEqual([threads['raw0.threading']?.uuid]);
      expect(recorded.w0?.uuid).toEqual([threads.foreign?.uuid]);
      expect(recorded.agent?.uuid).toEqual([seen.before, seen.after]);
      const { seen: again } = await replayed(
        rec,
        path.join(tmp.dir, `replay-rawthreads-${name}`),
        isolate ? 'bwrap' : 'none',
      );
      expect(again).toEqual(seen);
    });

  it.runIf(BWRAP)(
    'in the OS sandbox, Python processes started with -I or -E (no PYTHONPATH) are recorded and replayed',
    { timeout: 180_000 },
    async () => {
      const rec = path.join(tmp.dir, 'rec-flags');
      // The interpreter's own cached sitecustomize, which the sandbox covers: never rewritten on the disk.
      const cached = spawnSync(PYTHON, ['-I', '-c', 'import sitecustomize as s; print(s.__cached__)'], {
        encoding: 'utf8',
        env: {},
      }).stdout.trim();
      const before = readFileSync(cached);
      const seen = await record([PYTHON, '-I', FLAGS_AGENT, 'agent'], rec, { isolate: true });
      expect(seen.flags).toBe(1);
      const recorded = byProcess(rec);
      // The agent (-I) and its two children (-I, -E): each one's own values.
      expect(Object.keys(recorded).sort()).toEqual(['1', '2', 'agent']);
      expect(recorded.agent?.uuid).toEqual([seen.uuid]);
      expect(recorded['2']?.uuid).toEqual([(seen.children as Values[])[1]?.uuid]);
      const { seen: again } = await replayed(rec, path.join(tmp.dir, 'replay-flags'), 'bwrap');
      expect(again).toEqual(seen);
      expect(readFileSync(cached).equals(before)).toBe(true);
    },
  );

  for (const isolate of [false, ...(BWRAP ? [true] : [])])
    it(`an agent run by its shebang with -I is ${isolate ? 'recorded and replayed in the OS sandbox' : 'named as run without the hook'}`, {
      timeout: 180_000,
    }, async () => {
      const name = isolate ? 'bwrap' : 'none';
      const dir = path.join(tmp.dir, `shebang-${name}`);
      mkdirSync(dir);
      const agent = path.join(dir, 'agent.py');
      writeFileSync(agent, `#!${PYTHON} -I\n${readFileSync(FLAGS_AGENT, 'utf8')}`, { mode: 0o755 });
      const rec = path.join(tmp.dir, `rec-shebang-${name}`);
      let unhooked: unknown;
      const seen = await record([agent], rec, { isolate, unhooked: (u) => (unhooked = u) });
      expect(seen.flags).toBe(1);
      if (!isolate) {
        expect(unhooked).toEqual([{ program: PYTHON, flag: '-I', processes: 1 }]);
        return;
      }
      expect(unhooked).toEqual([]);
      expect(byProcess(rec).agent?.uuid).toEqual([seen.uuid]);
      const { seen: again } = await replayed(rec, path.join(tmp.dir, `replay-shebang-${name}`), 'bwrap');
      expect(again).toEqual(seen);
    });

  it("a recording made before threads had their own values serves them the process's one, in the order drawn", () => {
    const dir = path.join(tmp.dir, 'old-threads');
    mkdirSync(dir);
    const ids = [0, 1, 2, 3].map((n) => `${String(n).repeat(8)}-0000-4000-8000-000000000000`);
    const config = path.join(dir, 'config.json');
    // No `w…` process: every thread of the agent draws from its one sequence (then made-up values).
    writeFileSync(
      config,
      JSON.stringify({ socket: path.join(dir, 'none.sock'), seed: 1, nondeterminism: { uuid: ids } }),
    );
    const run = spawnSync(PYTHON, [THREADS_AGENT, '1'], {
      encoding: 'utf8',
      env: withPythonHook({ PATH: CI_PATH, TAPEDECK_REPLAY_CONFIG: config }),
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const seen = JSON.parse(run.stdout) as {
      before: string;
      threads: Record<string, { uuid: string }>;
      named: { uuid: string };
      after: string;
    };
    expect([seen.before, seen.threads['ThreadPoolExecutor-0_0']?.uuid, seen.named.uuid, seen.after]).toEqual(ids);
  });

  it('with no tapedeck channel, or a hostile config, a Python process runs as it would', () => {
    const dir = path.join(tmp.dir, 'hostile');
    mkdirSync(dir);
    // An agent's own sitecustomize, on its own PYTHONPATH: still run after the hook's.
    const own = path.join(dir, 'own');
    mkdirSync(own);
    writeFileSync(path.join(own, 'sitecustomize.py'), 'import builtins\nbuiltins.OWN_SITE = True\n');
    const config = path.join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        socket: path.join(dir, 'no-such.sock'),
        dumpPrefix: path.join(dir, 'dump'),
        seed: 7,
        nondeterminism: {
          clock: ['__import__("os").system("touch pwned")', null, 'HUGE'],
          uuid: [{}, 'x'],
          random: 'no',
          randomBytes: ['zz'],
        },
      }).replace('"HUGE"', '1e400'),
    );
    const code =
      'import json, time, uuid, random, os, builtins; print(json.dumps([time.time() > 0, str(uuid.uuid4()), random.random() < 1, len(os.urandom(4)), getattr(builtins, "OWN_SITE", False)]))';
    for (const env of [
      { TAPEDECK_RECORD_IPC: path.join(dir, 'no-such.sock') },
      { TAPEDECK_RECORD_IPC: 'tcp:127.0.0.1:1' },
      { TAPEDECK_REPLAY_CONFIG: config },
      { TAPEDECK_REPLAY_CONFIG: path.join(dir, 'missing.json') },
    ]) {
      const run = spawnSync(PYTHON, ['-c', code], {
        cwd: dir,
        encoding: 'utf8',
        env: withPythonHook({ PATH: CI_PATH, PYTHONPATH: own, ...env }),
        timeout: 30_000,
      });
      expect(run.status, run.stderr).toBe(0);
      const [clock, id, random, bytes, ownSite] = JSON.parse(run.stdout) as [boolean, string, boolean, number, boolean];
      expect([clock, random, bytes, ownSite]).toEqual([true, true, 4, true]);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      // A missing config is said in one line, never a traceback.
      expect(run.stderr).not.toContain('Traceback');
    }
    expect(existsSync(path.join(dir, 'pwned'))).toBe(false);
    expect(PYTHON_HOOK_DIR).toBe(path.resolve('sandbox/python'));
  });

  for (const isolate of [false, ...(BWRAP ? [true] : [])])
    it(`an agent's own random.Random() gets its recorded seed, and Python children run without the hook are named (${isolate ? 'OS sandbox' : 'no sandbox'})`, {
      timeout: 180_000,
    }, async () => {
      const name = isolate ? 'bwrap' : 'none';
      const rec = path.join(tmp.dir, `rec-random-${name}`);
      let unhooked: unknown;
      const seen = await record([PYTHON, RANDOM_AGENT, 'children'], rec, {
        isolate,
        unhooked: (u) => (unhooked = u),
      });
      // -S (four: -S, -E -S, a shell's quoted '-S', an os.execv's -IS) anywhere; -I only outside the OS sandbox, which
      // covers the interpreter's own sitecustomize.
      const expected = [
        { program: PYTHON, flag: '-S', processes: 4 },
        ...(isolate ? [] : [{ program: PYTHON, flag: '-I', processes: 1 }]),
      ];
      expect(unhooked).toEqual(expected);
      const manifest = JSON.parse(readFileSync(path.join(rec, 'manifest.json'), 'utf8')) as Values;
      expect(manifest.unhooked).toEqual(expected);
      const { result, seen: again } = await replayed(rec, path.join(tmp.dir, `replay-random-${name}`), name);
      // The unseeded instances (Random(), seed()) and SystemRandom come out as recorded.
      expect(again).toEqual(seen);
      const said = (result.warnings ?? []).filter((w) => w.includes("without tapedeck's Python hook"));
      expect(said).toHaveLength(expected.length);
      expect(said[0]).toContain(`${PYTHON} -S (4 processes) ran without tapedeck's Python hook: -S imports no site`);
      expect(said[0]).toContain('not served from the recording');
    });

  it("a Node agent's Python run without the hook (-IS, a shell's -E and quoted -S, env … -S, a script's shebang -S) is named, and so is the agent's own python -S", {
    timeout: 180_000,
  }, async () => {
    let unhooked: unknown;
    const scripts = path.join(tmp.dir, 'tool-scripts');
    mkdirSync(scripts);
    const script = path.join(scripts, 'tool.py');
    writeFileSync(script, `#!${PYTHON} -S\npass\n`, { mode: 0o755 });
    await record([process.execPath, UNHOOKED_TOOL], path.join(tmp.dir, 'rec-unhooked-tool'), {
      isolate: false,
      env: { PYTHON, SCRIPT: script },
      unhooked: (u) => (unhooked = u),
    });
    expect(unhooked).toEqual([
      { program: PYTHON, flag: '-S', processes: 4 },
      { program: PYTHON, flag: '-E', processes: 1 },
    ]);
    const rec = path.join(tmp.dir, 'rec-unhooked-agent');
    await record([PYTHON, '-S', RANDOM_AGENT], rec, { isolate: false, unhooked: (u) => (unhooked = u) });
    expect(unhooked).toEqual([{ program: PYTHON, flag: '-S', processes: 1 }]);
    const { result } = await replayed(rec, path.join(tmp.dir, 'replay-unhooked-agent'), 'none');
    expect(result.warnings).toContainEqual(
      expect.stringMatching(/-S ran without tapedeck's Python hook: -S imports no site/),
    );
  });

  it('the Node preloads and the Python hook read a command line alike', () => {
    // Scripts run by their shebang, in a folder of their own (named from it, and on a PATH).
    const dir = path.join(tmp.dir, 'shebangs');
    const bin = path.join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    const script = (name: string, first: string, mode = 0o755) => {
      writeFileSync(path.join(dir, name), `${first}\nprint(1)\n`, { mode });
    };
    script('s.py', `#!${PYTHON} -S`);
    script('env-i.py', '#!/usr/bin/env -S python3 -I');
    script('env-s-quoted.py', `#!/usr/bin/env -S A='x y' "${PYTHON}" -S`);
    script('plain.py', `#!${PYTHON}`);
    script('env-plain.py', '#!/usr/bin/env python3');
    script('blanks.py', `#! \t${PYTHON}   -E  \t`);
    script('one-word.py', `#!${PYTHON} -E -S`);
    script('no-exec.py', `#!${PYTHON} -S`, 0o644);
    script('nested', `#!${path.join(dir, 's.py')}`);
    script('binary', '\u007fELF');
    writeFileSync(path.join(bin, 'tool'), `#!${PYTHON} -I\n`, { mode: 0o755 });
    spawnSync('mkfifo', [path.join(dir, 'fifo.py')]);
    spawnSync('chmod', ['755', path.join(dir, 'fifo.py')]);
    const cases = [
      ['python3', '-S', 'a.py'],
      ['python3', '-IS', 'a.py'],
      ['python3', '-E', '-S', 'a.py'],
      ['/usr/bin/env', 'python3', '-S', 'a.py'],
      ['env', '-i', 'A=1', 'python3', '-I', 'x'],
      ['python3', '-c', 'import sys', '-S'],
      ['python3', '-X', 'frozen_modules=off', 'a.py'],
      ['python3', '-Xdev', '-E', 'a.py'],
      ['python3', 'a.py', '-S'],
      ['sh', '-c', 'cd /x && python3 -S a.py'],
      ['bash', '-lc', 'FOO=1 python3 -I a.py'],
      ['env', '-S', 'python3 -S', 'a.py'],
      ['python3.11', '-W', 'ignore', '-S'],
      ['node', '-S'],
      ['python3', '-m', 'x', '-S'],
      ['pypy3', '-sE', 'a.py'],
      ['python', '-u', 'a.py'],
      [PYTHON, '-I', 'a.py'],
      // A shell's string read as the shell reads it: quotes, escapes, substitutions, operators.
      ['sh', '-c', `A='1 2' B="x y" '${PYTHON}' -S a.py`],
      ['sh', '-c', `exec "${PYTHON}" -E a.py`],
      ['sh', '-c', 'echo "$(python3 -I -c pass)"'],
      ['sh', '-c', 'if true; then python3 -S a.py; fi'],
      ['sh', '-c', 'python3 2>/dev/null -S a.py'],
      ['sh', '-c', "echo 'python3 -S a.py'"],
      ['sh', '-c', 'echo python3 -S # python3 -S'],
      ['sh', '-c', 'cat <<EOF\npython3 -S a.py\nEOF'],
      ['sh', '-c', 'python3 "-c" "x" -S'],
      ['sh', '-c', 'sh -c \'env -S "python3 -S" a.py\''],
      // Scripts by their shebang, named from the folder and on PATH, through a shell and env.
      ['./s.py', 'arg'],
      ['./env-i.py'],
      ['./env-s-quoted.py'],
      ['./plain.py'],
      ['./env-plain.py'],
      ['./blanks.py'],
      ['./one-word.py'],
      ['./no-exec.py'],
      ['./nested'],
      ['./binary'],
      ['./fifo.py'],
      ['tool', '-x'],
      ['sh', '-c', 'cd . && ./s.py'],
      ['env', 'A=1', './env-i.py'],
    ];
    const real = spawnSync(PYTHON, ['-c', 'import os, sys; print(os.path.realpath(sys.executable))'], {
      encoding: 'utf8',
    }).stdout.trim();
    const PATH = `${bin}:${CI_PATH}`;
    const where = { covered: [real], PATH, cwd: dir };
    const outside = { PATH, cwd: dir };
    const js = cases.map((c) => [unhookedPython(c, outside) ?? null, unhookedPython(c, where) ?? null]);
    const py = spawnSync(
      PYTHON,
      [
        '-c',
        'import json, sys, _tapedeck_values as v; cases, covered, path, cwd = json.load(sys.stdin); print(json.dumps([[v.unhooked(c, None, path, cwd), v.unhooked(c, covered, path, cwd)] for c in cases]))',
      ],
      {
        encoding: 'utf8',
        input: JSON.stringify([cases, where.covered, where.PATH, where.cwd]),
        env: { PYTHONPATH: PYTHON_HOOK_DIR },
      },
    );
    expect(py.status, py.stderr).toBe(0);
    expect(JSON.parse(py.stdout)).toEqual(js);
    // What matters is said; what does not (a script's own -S, -c code, -X options, node) is not.
    expect(js.map(([outside]) => outside?.flag ?? '')).toEqual([
      '-S',
      '-S',
      '-S',
      '-S',
      '-I',
      '',
      '',
      '-E',
      '',
      '-S',
      '-I',
      '-S',
      '-S',
      '',
      '',
      '-E',
      '',
      '-I',
      '-S',
      '-E',
      '-I',
      '-S',
      '-S',
      '',
      '',
      '',
      '',
      '-S',
      '-S',
      '-I',
      '-S',
      '',
      '',
      '-E',
      '',
      '',
      '-S',
      '',
      '',
      '-I',
      '-S',
      '-I',
    ]);
    // The two shell lexers split alike, hostile strings too (each in one pass).
    const strings = [
      `cd /x && A="1 2" python3 -S 'a b.py' >log`,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell's parameter expansion, as written
      'echo "$(python3 -E "x y")" `b` $((1+2)) ${A:-x y} # c',
      'cat <<-E >f\n\tx\n\tE\n12>x y "12">z a||b;;c (d) { e; }',
      'echo \'open \\ "$(`',
      ...['$(', '`', '"$(', "'", '\\', '<<a\n', '((', '))', '1>', 'a ', '"\\"'].map((u) => u.repeat(20_000)),
    ];
    const lexed = spawnSync(
      PYTHON,
      [
        '-c',
        'import json, sys, _tapedeck_commands as c; print(json.dumps([c._shell_commands(s) for s in json.load(sys.stdin)]))',
      ],
      { encoding: 'utf8', input: JSON.stringify(strings), env: { PYTHONPATH: PYTHON_HOOK_DIR }, maxBuffer: 1 << 28 },
    );
    expect(lexed.status, lexed.stderr).toBe(0);
    expect(JSON.parse(lexed.stdout)).toEqual(strings.map((t) => shellCommands(t)));
    // A script's interpreter is named as its shebang names it.
    expect(unhookedPython(['./s.py'], outside)).toEqual({ program: PYTHON, flag: '-S' });
    expect(unhookedPython(['./env-i.py'], outside)).toEqual({ program: 'python3', flag: '-I' });
    // In the OS sandbox a covered interpreter's -I/-E is hooked: only -S, and uncovered ones, are said.
    expect(unhookedPython([PYTHON, '-I', 'a.py'], where)).toBeUndefined();
    expect(unhookedPython(['pypy3', '-E', 'a.py'], where)).toEqual({ program: 'pypy3', flag: '-E', uncovered: true });
  });
});
