// An agent reaches the sandbox database however it names its own: a variable other than
// DATABASE_URL, or a URL in a file it reads. The replay routes by address (a connection to the
// recorded database's host:port goes to the sandbox, through a relay that also names the sandbox
// database), so the exact replay has no divergence and the real database is untouched. On the
// travel desk and the support desk (their own schemas), on PGlite, and on a real server when
// TAPEDECK_PG_URL is set — where the sandbox lives on the same server as the real database; with
// the in-process guard alone and inside the OS sandbox.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetSupportSchema } from '../../examples/support/schema.js';
import { openWorldDatabase, resetSchema } from '../../examples/world/index.js';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';

const AGENT = fileURLToPath(new URL('./fixtures/db-agent.mjs', import.meta.url));
const server = process.env.TAPEDECK_PG_URL;

interface WorldCase {
  name: string;
  schema: string;
  table: string;
  insert: string;
  reset: (pool: pg.Pool) => Promise<void>;
}
const worlds: WorldCase[] = [
  {
    name: 'travel desk',
    schema: 'travel',
    table: 'travel.agent_notes',
    insert: "INSERT INTO travel.agent_notes VALUES ('N-1', 'BK-0001', 'P-102', 'seat by the window', 'r1')",
    reset: resetSchema,
  },
  {
    name: 'support desk',
    schema: 'support',
    table: 'support.policies',
    insert: "INSERT INTO support.policies VALUES ('POL-9', 'Cracked items', 'Refund in full.', 'refund damage')",
    reset: resetSupportSchema,
  },
];
// isolation none: the in-process guard routes by address; auto: the OS sandbox (bubblewrap, or the
// network-namespace fallback) where the machine has one, which exposes the same relay inside.
const cases = worlds.flatMap((world) =>
  (['none', 'auto'] as const).flatMap((isolation) => [
    { ...world, isolation, db: 'pglite' as const },
    ...(server ? [{ ...world, isolation, db: 'template' as const }] : []),
  ]),
);

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-db-address-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function rows(pool: pg.Pool, table: string): Promise<unknown[]> {
  return (await pool.query(`SELECT * FROM ${table} ORDER BY 1`)).rows;
}

describe.each(cases)(
  'the $name on $db, isolation $isolation',
  ({ name, schema, table, insert, reset, db, isolation }) => {
    it.each(['env', 'file'] as const)(
      'an agent reading its database URL from a %s replays with no divergence',
      { timeout: 240_000 },
      async (how) => {
        const database = await openWorldDatabase(
          db === 'template' ? { url: server, fresh: true, prefix: 'chainaddr' } : {},
        );
        const pool = new pg.Pool({ connectionString: database.url, max: 1 });
        pool.on('error', () => {});
        const dir = path.join(tmp, `${schema}-${db}-${isolation}-${how}`);
        const workspace = path.join(dir, 'workspace');
        try {
          await reset(pool);
          await mkdir(workspace, { recursive: true });
          await writeFile(path.join(workspace, 'db.json'), JSON.stringify({ url: database.url }));
          const find = how === 'env' ? ['--env', 'DESK_DB_URL'] : ['--file', path.join(workspace, 'db.json')];
          const recorded = await recordCommand({
            command: [process.execPath, AGENT, ...find, '--table', table, '--insert', insert],
            env: how === 'env' ? { DESK_DB_URL: database.url } : {},
            fsRoot: workspace,
            dbUrl: database.url,
            dbSchemas: [schema],
            out: path.join(dir, 'recorded'),
            stdio: 'pipe',
          });
          expect(recorded.exitCode).toBe(0);
          // The recorded run wrote to the real database; put it back to compare after the replay.
          await reset(pool);
          const before = await rows(pool, table);

          const result = await replay({
            recording: recorded.dir,
            mode: 'exact',
            // The variable holds the real URL (as the user's shell would); only its address is the sandbox's.
            env: how === 'env' ? { DESK_DB_URL: database.url } : {},
            out: path.join(dir, 'replay'),
            stdio: 'pipe',
            isolation,
            ...(db === 'template' ? { db: server } : {}),
          });
          expect(result.divergences, `${name}: ${result.output?.stderr}`).toEqual([]);
          expect(result.blockedConnections).toEqual([]);
          expect(result.status).toBe('complete');
          expect(result.worldMatches, result.worldDiff?.join('\n')).toBe(true);
          // The row the agent inserted is in the replay's world, at the agent's step, not in the real one.
          const replayed = await readRecording(result.dir);
          const inserted = replayed.events.filter((e) => e.type === 'db.changed' && e.payload.op === 'insert');
          expect(inserted).toHaveLength(1);
          expect(await rows(pool, table)).toEqual(before);
        } finally {
          await pool.end();
          await database.close();
        }
      },
    );
  },
);
