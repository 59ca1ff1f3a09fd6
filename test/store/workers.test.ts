// Scale-out, end to end: two `tapedeck worker` processes on this machine, each in its own working
// folder with no shared recordings folder, drain 200 replay jobs from one Postgres server through
// pg-boss, reading the recording from the Postgres store and pushing every replay back to it. One
// worker is killed in the middle of a job: that job is retried by the other and completes, and
// every job completes exactly once.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse, QUEUE_SCHEMA, type Warehouse } from '../../src/store/index.js';
import { pushRecording } from '../../src/store/recordings/index.js';
import { bin, tapedeck } from '../cli/run-cli.js';
import { createTestDatabase, PG_URL } from './helpers.js';

const JOBS = 200;
const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-workers-'));

/** A small agent: one HTTP call to its own server, a random draw, an answer on stdout. */
const AGENT = `import { createServer } from 'node:http';
const server = createServer((req, res) => res.end(JSON.stringify({ n: 42 })));
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const body = await (await fetch('http://127.0.0.1:' + server.address().port + '/n')).json();
console.log('answer', body.n, Math.random() < 2);
server.close();
`;

interface Worker {
  name: string;
  child: ChildProcess;
  log: string[];
  exited: Promise<number | null>;
}

function startWorker(name: string, db: string): Worker {
  // Each worker has the agent's code (its checkout), not the recording.
  const cwd = join(tmp, name);
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(cwd, 'agent.mjs'), AGENT);
  const child = spawn(
    process.execPath,
    [bin, 'worker', '--db', db, '--name', name, '--poll-ms', '200', '--maintenance-seconds', '2'],
    // Its own process group: killing the worker kills the agent it is replaying too.
    { cwd, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  const log: string[] = [];
  let partial = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    log.push(...lines);
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { name, child, log, exited };
}

const jobEvents = (w: Worker, what: string): string[] =>
  w.log.flatMap((l) => {
    const m = new RegExp(`: job (\\S+) replay ${what}`).exec(l);
    return m ? [m[1] as string] : [];
  });

async function until(check: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe.skipIf(!PG_URL)('two workers drain 200 replay jobs from one Postgres server (TAPEDECK_PG_URL)', () => {
  let db: { url: string; drop: () => Promise<void> };
  let store: string;
  let wh: Warehouse;
  const workers: Worker[] = [];
  beforeAll(async () => {
    db = await createTestDatabase('tapedeck_workers');
    store = db.url.replace(/^postgres(ql)?:/, 'pg:');
    wh = await openWarehouse({ url: db.url });
  });
  afterAll(async () => {
    for (const w of workers) {
      try {
        process.kill(-(w.child.pid as number), 'SIGKILL');
      } catch {}
    }
    await wh?.close();
    await db?.drop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('each job runs once; the job of a killed worker is retried by the other and completes', async () => {
    // The recording, made on "this laptop" and pushed to the store; the workers never see its folder.
    const laptop = join(tmp, 'laptop');
    mkdirSync(laptop);
    writeFileSync(join(laptop, 'agent.mjs'), AGENT);
    const recorded = await tapedeck(
      ['record', '--out', join(laptop, 'run'), '--name', 'tiny', '--', 'node', 'agent.mjs'],
      {
        cwd: laptop,
      },
    );
    expect(recorded.code, recorded.stderr).toBe(0);
    const { url } = await pushRecording(join(laptop, 'run'), store);
    rmSync(laptop, { recursive: true, force: true });

    const queued = await tapedeck(
      [
        'worker',
        'enqueue',
        url,
        '--replay',
        'exact',
        '--samples',
        String(JOBS),
        '--out',
        store,
        '--expire-seconds',
        '30',
        '--db',
        db.url,
        '--json',
      ],
      { cwd: tmp },
    );
    expect(queued.code, queued.stderr).toBe(0);
    const ids = JSON.parse(queued.stdout).jobs as string[];
    expect(new Set(ids).size).toBe(JOBS);

    const a = startWorker('A', db.url);
    const b = startWorker('B', db.url);
    workers.push(a, b);
    // Kill A in the middle of a job once it has finished a few.
    await until(
      () => jobEvents(a, 'done').length >= 3 && jobEvents(a, 'started').length > jobEvents(a, 'done').length,
      600_000,
      'worker A to be in a job',
    );
    const started = jobEvents(a, 'started');
    const killed = started[started.length - 1] as string;
    process.kill(-(a.child.pid as number), 'SIGKILL');
    await a.exited;
    expect(jobEvents(a, 'done')).not.toContain(killed);

    const counts = async () => {
      const r = await wh.query(
        `SELECT state, count(*)::int AS n FROM ${QUEUE_SCHEMA}.job WHERE name = 'tapedeck-replay' GROUP BY state`,
      );
      return Object.fromEntries(r.rows.map((row) => [row.state, row.n])) as Record<string, number>;
    };
    await until(async () => (await counts()).completed === JOBS, 1_500_000, `${JOBS} completed jobs`);
    b.child.kill('SIGTERM');
    expect(await b.exited).toBe(0);

    expect(await counts()).toEqual({ completed: JOBS });
    const rows = (
      await wh.query(
        `SELECT id, retry_count, output FROM ${QUEUE_SCHEMA}.job WHERE name = 'tapedeck-replay' ORDER BY id`,
      )
    ).rows as Array<{
      id: string;
      retry_count: number;
      output: {
        worker: string;
        result: { replay: string; traceId: string; divergences: number; exitCode: number | null };
      };
    }>;
    expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
    // The killed job: retried, finished by B.
    const retried = rows.find((r) => r.id === killed);
    expect(retried?.retry_count).toBeGreaterThanOrEqual(1);
    expect(retried?.output.worker).toBe('B');
    // Every job finished once, by one worker, with its own exact replay in the store.
    const done = [...jobEvents(a, 'done'), ...jobEvents(b, 'done')];
    expect(done.sort()).toEqual([...ids].sort());
    expect(jobEvents(a, 'done').length).toBeGreaterThanOrEqual(3);
    expect(
      rows.filter((r) => r.output.result.divergences > 0 || r.output.result.exitCode !== 0).map((r) => r.output.result),
    ).toEqual([]);
    const replays = new Set(rows.map((r) => r.output.result.replay));
    expect(replays.size).toBe(JOBS);
    expect([...replays].every((u) => u.startsWith(`${store}/`))).toBe(true);
    const stored = await wh.query('SELECT count(*)::int AS n FROM tapedeck_store_recording');
    expect(stored.rows[0]?.n).toBeGreaterThanOrEqual(JOBS + 1);
    const traces = await wh.query(
      'SELECT count(DISTINCT trace_id)::int AS n FROM trace_run WHERE replay_of IS NOT NULL',
    );
    expect(traces.rows[0]?.n).toBeGreaterThanOrEqual(JOBS);
  }, 1_800_000);
});
