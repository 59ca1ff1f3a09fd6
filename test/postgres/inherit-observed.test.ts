// Observed world capture (`world: 'observed'`) of inheritance parents: a read of a parent returns
// its children's rows (one under the parent's own key), and an UPDATE or DELETE of the parent
// reaches them. Each row is its own table's in the recording's worlds and changes, and the replay
// in the PGlite sandbox reads what the recorded run read and ends at the recorded end state.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { scratchDatabase, tempDir } from '../record/helpers.js';
import { runInheritAgent, WORLD } from './fixtures/inherit-world.mjs';

const ADMIN = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('./fixtures/inherit-world.mjs', import.meta.url));
const tmp = tempDir();
let source: Awaited<ReturnType<typeof scratchDatabase>> | undefined;

beforeAll(async () => {
  if (ADMIN) source = await scratchDatabase(ADMIN, 'worlds3_inh_', WORLD);
}, 120_000);

afterAll(async () => {
  await source?.drop();
  tmp.remove();
});

const byTable = (tables: Array<{ name: string; rows: unknown[] }> | undefined): Record<string, unknown[]> =>
  Object.fromEntries((tables ?? []).map((t) => [t.name, t.rows]));

describe.runIf(ADMIN)('observed capture of inheritance parents', () => {
  it('keeps each row its own table’s, and replays to the recorded end state', async () => {
    const pool = new pg.Pool({ connectionString: source?.url, max: 2 });
    pool.on('error', () => {});
    const run = await record(
      { out: path.join(tmp.dir, 'rec'), name: 'inherit', command: [process.execPath, AGENT] },
      () => runInheritAgent(pool),
    );
    // The database's own end state, table by table (ONLY: each table's own rows).
    const truth: Record<string, unknown[]> = {};
    for (const t of ['animal', 'dog', 'puppy', 'bird'])
      truth[t] = (await pool.query(`SELECT to_jsonb(t) AS r FROM ONLY zoo.${t} t ORDER BY id, name`)).rows.map(
        (r) => r.r,
      );
    await pool.end();
    const recording = await readRecording(run.dir);
    const post = byTable(recording.post.db?.tables);
    const sorted = (rows: unknown[] | undefined) => (rows ?? []).map((r) => JSON.stringify(sortKeys(r))).sort();
    // Every row the run touched is its own table's, as the database holds it at the end.
    for (const t of ['animal', 'dog', 'puppy', 'bird'])
      expect(sorted(post[t]), t).toEqual(sorted(truth[t]).filter((r) => sorted(post[t]).includes(r)));
    expect(post.animal?.map((r) => (r as { name: string }).name).sort()).toEqual(['GENERIC', 'cat', 'snake']);
    expect(post.dog?.map((r) => (r as { name: string }).name).sort()).toEqual(['REX', 'TWIN']);
    expect(post.puppy).toEqual([{ id: 5, name: 'BIT', legs: 4, breed: 'pug!', weeks: 8 }]);
    expect(post.bird?.map((r) => (r as { name: string }).name)).toEqual(['tweety']);

    const replayed = await replay({
      recording: run.dir,
      mode: 'exact',
      out: path.join(tmp.dir, 'replay'),
      stdio: 'pipe',
    });
    expect(replayed.divergences).toEqual([]);
    expect(replayed.worldDiff).toEqual([]);
    expect(JSON.parse(replayed.output?.stdout ?? '[]')).toEqual(JSON.parse(JSON.stringify(run.result)));
  }, 240_000);
});

/** A row with its keys in order and its numbers as text (the snapshot keeps numeric as text). */
function sortKeys(row: unknown): Record<string, unknown> {
  const r = row as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(r)
      .sort()
      .map((k) => [k, typeof r[k] === 'number' ? String(r[k]) : r[k]]),
  );
}
