// World capture: pre/post snapshots of an fs root and a Postgres schema, and per-step changes —
// made by the agent (files, its own pg writes) and by another process (an HTTP API writing the
// database) — such that the world rebuilt at step k equals a snapshot taken at step k.

import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWorldDatabase } from '../../examples/world/index.js';
import { createDbTracker, createFsTracker, recordCommand } from '../../src/record/index.js';
import type { DbSnapshot, FsSnapshot } from '../../src/recording/index.js';
import { canonicalJson, fsIdentity, readRecording, sha256Hex, worldAt } from '../../src/recording/index.js';
import { FIXTURES, startServer, type TestServer, tempDir } from './helpers.js';

const SCHEMA = 'rec_world';
let database: Awaited<ReturnType<typeof openWorldDatabase>>;
let pool: pg.Pool;
let api: TestServer;
const tmp = tempDir();
const workspace = path.join(tmp.dir, 'ws');

beforeAll(async () => {
  const url = process.env.TAPEDECK_PG_URL;
  database = await openWorldDatabase(url ? { url, fresh: true } : {});
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  pool.on('error', () => {});
  await pool.query(`CREATE SCHEMA ${SCHEMA}`);
  await pool.query(`CREATE TABLE ${SCHEMA}.items (id serial PRIMARY KEY, name text NOT NULL, price numeric(10,2) NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(), big bigint NOT NULL DEFAULT 9007199254740993)`);
  await pool.query(`CREATE TABLE ${SCHEMA}.tags (item_id int NOT NULL, tag text NOT NULL, PRIMARY KEY (item_id, tag))`);
  await pool.query(`INSERT INTO ${SCHEMA}.items (name, price) VALUES ('seed', 1.00)`);
  // The tool API: another process's writes, as far as the agent is concerned.
  api = await startServer(async (req, body, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const id = url.pathname.split('/')[2];
    let out: unknown;
    if (req.method === 'POST') {
      const { name, price } = JSON.parse(body) as { name: string; price: string };
      out = (await pool.query(`INSERT INTO ${SCHEMA}.items (name, price) VALUES ($1, $2) RETURNING id`, [name, price]))
        .rows[0];
    } else if (req.method === 'PATCH') {
      await pool.query(`UPDATE ${SCHEMA}.items SET price = $2 WHERE id = $1`, [id, JSON.parse(body).price]);
      out = { ok: true };
    } else if (req.method === 'DELETE') {
      await pool.query(`DELETE FROM ${SCHEMA}.tags WHERE item_id = $1`, [id]);
      await pool.query(`DELETE FROM ${SCHEMA}.items WHERE id = $1`, [id]);
      out = { ok: true };
    } else {
      out = (await pool.query(`SELECT id, name FROM ${SCHEMA}.items ORDER BY id`)).rows;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(out));
  });
});

afterAll(async () => {
  await api?.close();
  await pool?.end();
  await database?.close();
  if (!process.env.KEEP) tmp.remove();
});

async function captureObjects(): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE '\\_tapedeck\\_%'
     UNION ALL SELECT tgname FROM pg_trigger WHERE tgname LIKE 'zz\\_tapedeck\\_%'`,
  );
  return rows.map((r) => r.name);
}

describe('world capture', () => {
  it('rebuilds the world at every step exactly as a snapshot taken at that step', async () => {
    rmSync(workspace, { recursive: true, force: true });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(workspace, { recursive: true });
    writeFileSync(path.join(workspace, 'scratch.txt'), 'temporary\n');
    writeFileSync(path.join(workspace, 'keep.txt'), 'unchanged\n');
    const probeFs = createFsTracker(workspace, (bytes) => ({ sha256: sha256Hex(bytes) }));
    const probeDb = await createDbTracker(database.url, { schemas: [SCHEMA] });
    const snapshots = new Map<number, { fs: FsSnapshot; db: DbSnapshot }>();
    const out = path.join(tmp.dir, 'rec');
    let result: Awaited<ReturnType<typeof recordCommand>>;
    try {
      result = await recordCommand({
        command: [process.execPath, path.join(FIXTURES, 'world-agent.mjs')],
        env: { TOOL_URL: api.url, WORKSPACE: workspace, DATABASE_URL: database.url, SCHEMA },
        fsRoot: workspace,
        dbUrl: database.url,
        dbSchemas: [SCHEMA],
        out,
        stdio: 'ignore',
        // Awaited by the recorder while the agent waits at its next step boundary.
        async onEvent(event) {
          if (event.type !== 'step.completed') return;
          snapshots.set(event.stepId, { fs: await probeFs.snapshot(), db: await probeDb.snapshot() });
        },
      });
    } finally {
      await probeDb.close();
    }
    expect(result.exitCode).toBe(0);
    const recording = await readRecording(out);
    expect(recording.manifest.status).toBe('complete');
    const steps = recording.events.filter((e) => e.type === 'step.started');
    expect(steps.map((e) => (e.payload as { stateType: string }).stateType)).toEqual([
      'API_CALL', // POST /items alpha
      'FILE_WRITE', // notes.txt
      'API_CALL', // POST /items beta
      'FILE_WRITE', // appendFileSync notes.txt (one step, though it calls writeFileSync inside)
      'API_CALL', // PATCH
      'DB_QUERY', // the agent's own INSERT, seen between steps
      'API_CALL', // DELETE
      'FILE_WRITE', // out/report.json
      'FILE_WRITE', // rm scratch.txt
      'API_CALL', // GET /items (not a search-like path)
    ]);
    expect(snapshots.size).toBe(steps.length);
    for (const [step, snapshot] of snapshots) {
      const world = worldAt(recording, step);
      // The probe keeps no contents: the files compare by what they are (mode, size, sha256).
      expect(canonicalJson(fsIdentity(world.fs)), `fs at step ${step}`).toBe(canonicalJson(snapshot.fs));
      expect(canonicalJson(world.db), `db at step ${step}`).toBe(canonicalJson(snapshot.db));
    }
    const last = worldAt(recording, steps.length);
    expect(canonicalJson(last)).toBe(canonicalJson({ fs: recording.post.fs, db: recording.post.db }));

    // Changes are attributed to the step that made them, with exact values.
    const changesOf = (step: number) =>
      recording.events.filter((e) => e.stepId === step && e.type.endsWith('.changed'));
    const insert = changesOf(1)[0]!.payload as { op: string; after: Record<string, unknown> };
    expect(insert.op).toBe('insert');
    expect(insert.after).toMatchObject({ name: 'alpha', price: '12.50', big: '9007199254740993' });
    expect(String(insert.after.created_at)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(changesOf(2).map((e) => e.payload)).toMatchObject([{ path: 'notes.txt', op: 'create' }]);
    expect(changesOf(9).map((e) => e.payload)).toMatchObject([{ path: 'scratch.txt', op: 'delete' }]);
    expect(recording.pre.db?.ddl.some((s) => s.includes('PRIMARY KEY'))).toBe(true);
    expect(await captureObjects()).toEqual([]);
  });

  it('removes its change capture from the database when the agent cannot start', async () => {
    await expect(
      recordCommand({
        command: ['/nonexistent/agent-binary'],
        dbUrl: database.url,
        dbSchemas: [SCHEMA],
        out: path.join(tmp.dir, 'failed'),
        stdio: 'ignore',
      }),
    ).rejects.toThrow(/cannot start/);
    expect(await captureObjects()).toEqual([]);
    // Nothing was recorded: no folder is left for it.
    expect((await import('node:fs')).existsSync(path.join(tmp.dir, 'failed'))).toBe(false);
  });
});
