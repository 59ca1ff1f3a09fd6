// bench/workers: replay jobs per second through the pg-boss queue on a Postgres server
// (TAPEDECK_PG_URL), with 1 and with 2 `tapedeck worker` processes (each in its own folder, reading
// the recording from the Postgres store), as a ratio to the same replays run one after another in
// one process with the same job handler and no queue. Each job: an exact replay of a small agent
// (one HTTP call, one random draw), ingested into the warehouse and pushed to the store. Worker
// start-up (the CLI from source, the queue's schema check) is inside the workers' time.
// BENCH_WORKER_JOBS sets the number of jobs per run (default 24).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { recordCommand } from '../src/record/index.js';
import { openQueue, openWarehouse } from '../src/store/index.js';
import { jobHandlers } from '../src/store/jobs.js';
import { pushRecording } from '../src/store/recordings/index.js';

const root = join(import.meta.dirname, '..');
const bin = join(root, 'bin/tapedeck.mjs');
const JOBS = Number(process.env.BENCH_WORKER_JOBS ?? 24);

const AGENT = `import { createServer } from 'node:http';
const server = createServer((req, res) => res.end(JSON.stringify({ n: 42 })));
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const body = await (await fetch('http://127.0.0.1:' + server.address().port + '/n')).json();
console.log('answer', body.n, Math.random() < 2);
server.close();
`;

async function withDatabase<T>(base: string, fn: (url: string) => Promise<T>): Promise<T> {
  const name = `tapedeck_bench_workers_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  try {
    return await fn(url.toString());
  } finally {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.end();
  }
}

function startWorker(name: string, db: string, cwd: string): { child: ChildProcess; exited: Promise<number | null> } {
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(cwd, 'agent.mjs'), AGENT);
  const child = spawn(process.execPath, [bin, 'worker', '--db', db, '--name', name, '--once', '--poll-ms', '100'], {
    cwd,
    stdio: ['ignore', 'ignore', 'ignore'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { child, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

export async function run(): Promise<void> {
  const base = process.env.TAPEDECK_PG_URL;
  if (!base) {
    process.stdout.write('skipped: set TAPEDECK_PG_URL to a Postgres server (the queue and the store live there)\n');
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-bench-workers-'));
  try {
    await withDatabase(base, async (db) => {
      const store = db.replace(/^postgres(ql)?:/, 'pg:');
      const laptop = join(tmp, 'laptop');
      mkdirSync(laptop);
      writeFileSync(join(laptop, 'agent.mjs'), AGENT);
      const recorded = await recordCommand({
        command: [process.execPath, 'agent.mjs'],
        cwd: laptop,
        out: join(laptop, 'run'),
        stdio: 'ignore',
      });
      if (recorded.exitCode !== 0) throw new Error('recording the bench agent failed');
      const { url } = await pushRecording(join(laptop, 'run'), store);
      const job = { recording: url, mode: 'exact', out: store };

      const warehouse = await openWarehouse({ url: db });
      const queue = await openQueue(warehouse);
      try {
        // Baseline: the same replays, one after another in this process, no queue.
        const seqDir = join(tmp, 'sequential');
        mkdirSync(seqDir);
        writeFileSync(join(seqDir, 'agent.mjs'), AGENT);
        const handlers = jobHandlers({ warehouse, workDir: join(seqDir, '.tapedeck') });
        const cwd = process.cwd();
        process.chdir(seqDir);
        const t0 = performance.now();
        try {
          for (let i = 0; i < JOBS; i++) {
            await handlers.replay({ id: `seq-${i}`, kind: 'replay', payload: job, retryCount: 0, singletonKey: null });
          }
        } finally {
          process.chdir(cwd);
        }
        const sequentialMs = performance.now() - t0;

        const throughWorkers = async (n: number): Promise<number> => {
          for (let i = 0; i < JOBS; i++) await queue.enqueue('replay', job, { expireInSeconds: 600 });
          const start = performance.now();
          const workers = Array.from({ length: n }, (_, i) =>
            startWorker(`w${n}-${i}`, db, join(tmp, `workers-${n}`, String(i))),
          );
          const codes = await Promise.all(workers.map((w) => w.exited));
          const ms = performance.now() - start;
          if (codes.some((c) => c !== 0)) throw new Error(`a worker exited with ${codes.join(', ')}`);
          const counts = await queue.counts(['replay']);
          if (counts.created + counts.retry + counts.active + counts.failed > 0)
            throw new Error(`jobs left after ${n} worker(s): ${JSON.stringify(counts)}`);
          return ms;
        };
        const oneMs = await throughWorkers(1);
        const twoMs = await throughWorkers(2);

        const rate = (ms: number) => (JOBS / ms) * 1000;
        const seq = rate(sequentialMs);
        process.stdout.write(
          [
            `${JOBS} exact replay jobs each (replay + ingest + push to the pg store), ${cpus().length} CPUs, load average ${loadavg()[0]?.toFixed(1)}:`,
            `  sequential, one process, no queue   ${seq.toFixed(2)} jobs/s (${(sequentialMs / JOBS).toFixed(0)} ms a job)`,
            `  1 worker process (pg-boss)          ${rate(oneMs).toFixed(2)} jobs/s = ${(rate(oneMs) / seq).toFixed(2)}x sequential`,
            `  2 worker processes (pg-boss)        ${rate(twoMs).toFixed(2)} jobs/s = ${(rate(twoMs) / seq).toFixed(2)}x sequential, ${(oneMs / twoMs).toFixed(2)}x 1 worker`,
            '',
          ].join('\n'),
        );
      } finally {
        await queue.close();
        await warehouse.close();
      }
    });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
