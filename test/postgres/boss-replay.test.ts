// A real pg-boss session recorded with the observed world and replayed exactly: the functions
// pg-boss's schema holds come from the user's own SQL (--schema-sql: pg-boss's create_queue and
// delete_queue, as a migration holds them), the rows its boot reads outside the run (pgboss.version,
// the queue) from a development snapshot (--seed-snapshot); the default that is data (keep_until:
// now() + interval '14 days') from the recording's description.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { saveNamedSnapshot } from '../../src/postgres/named-snapshots.js';
import { record } from '../../src/record/index.js';
import { replay } from '../../src/replay/index.js';
import { scratchDatabase, tempDir } from '../record/helpers.js';
import { runBossSession, startBoss, stopBoss } from './fixtures/boss-world.mjs';

const ADMIN = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('./fixtures/boss-world.mjs', import.meta.url));
const tmp = tempDir();
afterAll(() => tmp.remove());

/** pg-boss's own functions, out of its schema script (what a project's migration of it holds). */
function bossFunctions(): string {
  const plans = createRequire(import.meta.url)('pg-boss/src/plans.js') as {
    create(schema: string, version: number): string;
  };
  const script = plans.create('pgboss', 24);
  const functions = script.match(/CREATE FUNCTION pgboss\.\w+\([\s\S]*?\$\$\s*LANGUAGE plpgsql;?/g) ?? [];
  return functions.map((f) => (f.endsWith(';') ? f : `${f};`)).join('\n');
}

describe.runIf(ADMIN)('pg-boss in an observed-world replay', () => {
  it('replays a session that enqueues a job exactly, given the schema’s code and boot rows', async () => {
    const db = await scratchDatabase(ADMIN as string, 'boss_replay_', 'SELECT 1');
    try {
      const boss = await startBoss(db.url);
      const snapshots = path.join(tmp.dir, 'snapshots');
      await saveNamedSnapshot('boss', db.url, { schemas: ['pgboss'], dir: snapshots });
      const run = await record(
        { out: path.join(tmp.dir, 'rec'), name: 'boss', input: { to: 'ann' }, command: [process.execPath, AGENT] },
        () => runBossSession(boss, { to: 'ann' }),
      );
      await stopBoss(boss);
      expect(run.result).toMatchObject({ data: { to: 'ann' }, state: 'created', retryLimit: 3 });
      const sql = path.join(tmp.dir, 'pgboss-functions.sql');
      writeFileSync(sql, bossFunctions());
      for (const sandbox of ['pglite', 'template'] as const) {
        const replayed = await replay({
          recording: run.dir,
          mode: 'exact',
          out: path.join(tmp.dir, `replay-${sandbox}`),
          stdio: 'pipe',
          schemaSql: [sql],
          seedSnapshot: 'boss',
          snapshotsDir: snapshots,
          ...(sandbox === 'template' ? { db: ADMIN } : {}),
        });
        expect(replayed.output?.stderr ?? '', sandbox).not.toMatch(/error/i);
        expect(
          (replayed.warnings ?? []).filter((w) => /lacks/.test(w)),
          sandbox,
        ).toEqual([]);
        expect(replayed.divergences, sandbox).toEqual([]);
        expect(replayed.worldDiff, sandbox).toEqual([]);
        expect(JSON.parse(replayed.output?.stdout ?? 'null'), sandbox).toEqual(run.result);
      }
    } finally {
      await db.drop();
    }
  }, 240_000);
});
