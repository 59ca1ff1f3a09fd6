// Exact replays of an agent that writes to a real Postgres server (TAPEDECK_PG_URL): its tables in
// schema `public` (owned by pg_database_owner on PostgreSQL 15+), a created_at the server fills in
// from its clock, and a bytea column, in the PGlite sandbox and in a template sandbox on the server.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { replay } from '../../src/replay/index.js';
import { tempDir } from '../record/helpers.js';
import { deadSandboxes } from '../support/pg-leftovers.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('fixtures/public-notes-agent.mjs', import.meta.url));

describe.runIf(PG_URL)('exact replay of an agent writing to tables in public on a server', () => {
  const tmp = tempDir('tapedeck-server-db-');
  const name = `untrusted_public_${process.pid}`;
  let admin: pg.Client;
  let recording: string;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const u = new URL(PG_URL as string);
    u.pathname = `/${name}`;
    const url = u.toString();
    const setup = new pg.Client({ connectionString: url });
    await setup.connect();
    await setup.query(`CREATE TABLE public.notes (id serial PRIMARY KEY, body text NOT NULL,
                         created_at timestamptz NOT NULL DEFAULT now());
                       CREATE TABLE public.blobs (id int PRIMARY KEY, data bytea);
                       INSERT INTO public.notes (body, created_at) VALUES ('sunny', '2026-01-02T03:04:05.123456Z');
                       INSERT INTO public.blobs VALUES (1, '\\x00ff10');`);
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
  }, 120_000);

  afterAll(async () => {
    await admin?.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin?.end();
    tmp.remove();
  });

  for (const sandbox of ['pglite', 'template'] as const) {
    it(`replays it in the ${sandbox} sandbox with no divergence and the recorded end state`, async () => {
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
      expect(result.output?.stdout.trim()).toBe('note 2');
      // The note's created_at is the sandbox's now(), not the recorded run's: shown, not a difference.
      expect(result.worldDiff).toEqual([]);
      expect(result.worldMatches).toBe(true);
      expect(result.worldServerClock).toEqual([
        expect.stringMatching(
          /^db public\.notes: row \{"id":2\} differs in created_at \(recorded .*"body":"rain at noon".*replay /,
        ),
      ]);
      expect(await deadSandboxes(admin)).toEqual([]);
    }, 180_000);
  }
});
