// Exact replays of an agent whose parallel tool calls share one database through pools of two
// drivers (pg.Pool, postgres.js): concurrent transactions, named prepared statements, SKIP LOCKED,
// LISTEN/NOTIFY, COPY, a SET on one connection. Recorded on a real server (--db, snapshot world),
// replayed in the PGlite sandbox (one backend for every connection) and in a template sandbox.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record, recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { scratchDatabase, tempDir } from '../record/helpers.js';
import { deadSandboxes } from '../support/pg-leftovers.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('fixtures/pool-drivers-agent.mjs', import.meta.url));
const OBSERVED_AGENT = fileURLToPath(new URL('fixtures/pool-observed-agent.mjs', import.meta.url));
const TABLES = `CREATE TABLE acct (id int PRIMARY KEY, bal int NOT NULL);
  INSERT INTO acct SELECT g, 150 FROM generate_series(1, 8) g;
  CREATE TABLE jobs (id serial PRIMARY KEY, state text NOT NULL DEFAULT 'new', runs int NOT NULL DEFAULT 0);
  INSERT INTO jobs (state) SELECT 'new' FROM generate_series(1, 9);
  CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL);
  INSERT INTO notes (body) VALUES ('opening');`;
const SEEN =
  '{"jobs":9,"zones":["Asia/Tokyo",false],"session":[145,155,"1,2",true,true],"heard":"closed books","total":1202,"notes":3}';

describe.runIf(PG_URL)('exact replay of an agent sharing a database through pools of two drivers', () => {
  const tmp = tempDir('tapedeck-pool-drivers-');
  const name = `pool_drivers_${process.pid}`;
  let admin: pg.Client;
  let url: string;
  let recording: string;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const u = new URL(PG_URL as string);
    u.pathname = `/${name}`;
    url = u.toString();
    const setup = new pg.Client({ connectionString: url });
    await setup.connect();
    await setup.query(TABLES);
    await setup.end();
    recording = path.join(tmp.dir, 'recorded');
    const recorded = await recordCommand({
      command: [process.execPath, AGENT],
      dbUrl: url,
      world: 'snapshot',
      env: { DATABASE_URL: url },
      out: recording,
      stdio: 'pipe',
    });
    expect(recorded.exitCode).toBe(0);
  }, 180_000);

  afterAll(async () => {
    await admin?.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin?.end();
    tmp.remove();
  });

  it('records every change the pools made', async () => {
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    const { rows } = await check.query(
      "SELECT (SELECT count(*)::int FROM jobs WHERE state = 'done' AND runs = 1) AS done, (SELECT string_agg(body, '|' ORDER BY id) FROM notes) AS notes",
    );
    await check.end();
    expect(rows[0]).toEqual({ done: 9, notes: 'opening +7|copied one|copied two' });
  });

  for (const sandbox of ['pglite', 'template'] as const) {
    it(`replays it in the ${sandbox} sandbox with no divergence, nothing hanging, and the recorded end state`, async () => {
      const result = await replay({
        recording,
        mode: 'exact',
        out: path.join(tmp.dir, sandbox),
        stdio: 'pipe',
        isolation: 'none',
        timeoutMs: 120_000,
        ...(sandbox === 'template' ? { db: PG_URL as string, dbSandbox: 'template' } : {}),
      });
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(result.status, result.output?.stderr).toBe('complete');
      expect(result.output?.stdout.trim()).toBe(SEEN);
      expect(result.worldDiff).toEqual([]);
      expect(result.worldMatches).toBe(true);
      expect(await deadSandboxes(admin)).toEqual([]);
    }, 180_000);
  }

  it('leaves the recorded database as the recording left it', async () => {
    const check = new pg.Client({ connectionString: url });
    await check.connect();
    const { rows } = await check.query(
      "SELECT (SELECT sum(bal)::int FROM acct) AS total, (SELECT string_agg(body, '|' ORDER BY id) FROM notes) AS notes",
    );
    await check.end();
    expect(rows[0]).toEqual({ total: 1202, notes: 'opening +7|copied one|copied two' });
  });
});

describe.runIf(PG_URL)('exact replay of an in-process run through a pg.Pool, observed world', () => {
  const tmp = tempDir('tapedeck-pool-observed-');
  let db: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
  let admin: pg.Client;
  let dir: string;
  let seen: unknown;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    db = await scratchDatabase(PG_URL as string, 'tdpool_obs_', TABLES);
    const url = db.url;
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    pool.on('error', () => {});
    const { runPoolAgent } = await import(OBSERVED_AGENT);
    const run = await record({ out: path.join(tmp.dir, 'rec'), command: [process.execPath, OBSERVED_AGENT] }, () =>
      runPoolAgent(pool, url),
    );
    await pool.end();
    dir = run.dir;
    seen = run.result;
    // Every write names its table without a schema (found along the search path): each one observed.
    const recording = await readRecording(dir);
    expect(recording.manifest.world?.db?.unobserved ?? {}).not.toHaveProperty('writes to tables not in the catalog');
    expect(recording.events.filter((e) => e.type === 'db.changed')).toHaveLength(4 * 2 + 9);
  }, 180_000);

  afterAll(async () => {
    await db?.drop();
    await admin?.end();
    tmp.remove();
  });

  for (const sandbox of ['pglite', 'template'] as const) {
    it(`replays it in the ${sandbox} sandbox with no divergence and the recorded end state`, async () => {
      const result = await replay({
        recording: dir,
        mode: 'exact',
        out: path.join(tmp.dir, sandbox),
        stdio: 'pipe',
        isolation: 'none',
        timeoutMs: 120_000,
        ...(sandbox === 'template' ? { db: PG_URL as string, dbSandbox: 'template' } : {}),
      });
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(result.status, result.output?.stderr).toBe('complete');
      expect(JSON.parse(result.output?.stdout ?? '{}')).toEqual(seen);
      expect(result.worldDiff).toEqual([]);
      expect(await deadSandboxes(admin)).toEqual([]);
    }, 180_000);
  }
});
