// A queue consumer recorded per job: pg-boss's work() handler runs each job in its own record()
// (real pg-boss, its schema in a scratch database; its polling and completion outside any run), two
// workers at once so jobs overlap, a job that throws among them. Each job's recording holds its own
// API calls and its own rows (a log row through a pg Pool, a follow-up job through boss.send), no
// other job's and none of pg-boss's own bookkeeping.

import pg from 'pg';
import PgBoss from 'pg-boss';
import { afterAll, describe, expect, it } from 'vitest';
import { record } from '../../src/record/index.js';
import { type HttpExchangePayload, readRecording } from '../../src/recording/index.js';
import { scratchDatabase, startServer, tempDir } from '../record/helpers.js';

const ADMIN = process.env.TAPEDECK_PG_URL;
const tmp = tempDir();
afterAll(() => tmp.remove());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (up to 5 s) until only tapedeck's own idle connections are left on the database: pg-boss's close after it stops. */
async function closedConnections(url: string): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN });
  await admin.connect();
  try {
    for (let i = 0; i < 50; i++) {
      const { rows } = await admin.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name <> 'tapedeck-observe'`,
        [new URL(url).pathname.slice(1)],
      );
      if (rows[0]?.n === 0) return;
      await sleep(100);
    }
  } finally {
    await admin.end();
  }
}

describe.runIf(ADMIN)('a pg-boss consumer, one recording per job', () => {
  it('each job’s recording holds its own calls and rows', async () => {
    const api = await startServer(async (req, _body, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      await sleep(Number(url.searchParams.get('delay') ?? 0));
      res.end(JSON.stringify({ who: url.searchParams.get('who') }));
    });
    const db = await scratchDatabase(
      ADMIN as string,
      'boss_consumer_',
      'CREATE TABLE log (job text PRIMARY KEY, n int NOT NULL)',
    );
    const boss = new PgBoss({ connectionString: db.url, supervise: false, schedule: false, max: 3 });
    boss.on('error', () => {});
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    const runs = new Map<number, { dir: string; threw: boolean }>();
    try {
      await boss.start();
      await boss.createQueue('mail');
      await boss.createQueue('followup');
      const JOBS = 8;
      for (let n = 0; n < JOBS; n++) await boss.send('mail', { n }, { retryLimit: 0 });
      let done!: () => void;
      const all = new Promise<void>((resolve) => (done = resolve));
      const handle = async ([job]: Array<{ data: { n: number } }>) => {
        const n = job?.data.n as number;
        const out = `${tmp.dir}/job-${n}`;
        try {
          await record({ out, name: `job ${n}` }, async () => {
            await fetch(`${api.url}/a?who=${n}-a&delay=${(n % 3) * 40}`).then((r) => r.json());
            await pool.query('INSERT INTO log (job, n) VALUES ($1, $2)', [`job-${n}`, n]);
            if (n % 4 === 3) throw new Error(`job ${n} failed`);
            await boss.send('followup', { of: n });
            await fetch(`${api.url}/b?who=${n}-b`).then((r) => r.json());
          });
          runs.set(n, { dir: out, threw: false });
        } catch (error) {
          runs.set(n, { dir: out, threw: true });
          throw error;
        } finally {
          if (runs.size === JOBS) done();
        }
      };
      await boss.work('mail', { pollingIntervalSeconds: 0.5 }, handle);
      await boss.work('mail', { pollingIntervalSeconds: 0.5 }, handle);
      await all;
      for (const [n, run] of runs) {
        const recording = await readRecording(run.dir);
        const calls = recording.events
          .filter((e) => e.type === 'http.exchange')
          .map((e) => new URL((e.payload as HttpExchangePayload).request.url).searchParams.get('who'));
        const rows = recording.events.flatMap((e) =>
          e.type === 'db.changed'
            ? [
                `${e.payload.table} ${e.payload.op} ${JSON.stringify(e.payload.after?.job ?? e.payload.after?.data ?? null)}`,
              ]
            : [],
        );
        expect(run.threw, `job ${n}`).toBe(n % 4 === 3);
        expect(calls, `job ${n}`).toEqual(run.threw ? [`${n}-a`] : [`${n}-a`, `${n}-b`]);
        expect(
          rows.map((r) => r.replace(/"\{\\"of\\": (\d+)\}"/, 'of $1')),
          `job ${n}`,
        ).toEqual(
          run.threw
            ? [`log insert "job-${n}"`]
            : [`log insert "job-${n}"`, expect.stringMatching(new RegExp(`^job insert .*${n}`))],
        );
      }
    } finally {
      // pg-boss closes its pool after 'stopped': the database is dropped once it has.
      const stopped = new Promise((resolve) => boss.once('stopped', resolve));
      await boss.stop({ graceful: false, wait: true });
      await stopped;
      await pool.end();
      await api.close();
      await closedConnections(db.url);
      await db.drop();
    }
  }, 120_000);
});
