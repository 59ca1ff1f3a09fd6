// Observed world capture (`world: 'observed'`) of the keys and schemas production apps have: tables
// in `app` and `billing` found through a search_path the database sets and one a connection sets,
// one table name in two schemas, quoted mixed-case names, uuid, text and composite primary keys,
// an UPDATE that changes a row's key, a table known by a unique index alone and one with no key.
// The recording's worlds hold each row in its own table as the database does, and a replay in
// the PGlite sandbox and in a server's template sandbox answers as recorded and ends at the
// recorded end state.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotDatabase } from '../../src/postgres/index.js';
import { record } from '../../src/record/index.js';
import { type DbSnapshot, readRecording, worldAt } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { scratchDatabase, tempDir } from '../record/helpers.js';
import { runKeysAgent, WORLD } from './fixtures/keys-world.mjs';
import { itReplaysExactly } from './replay-exact.js';

const ADMIN = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('./fixtures/keys-world.mjs', import.meta.url));
const tmp = tempDir();
let source: Awaited<ReturnType<typeof scratchDatabase>> | undefined;

beforeAll(async () => {
  if (ADMIN) source = await scratchDatabase(ADMIN, 'worlds4_keys_', WORLD);
}, 120_000);

afterAll(async () => {
  await source?.drop();
  tmp.remove();
});

/** Each table's rows as sorted JSON texts (numbers as text, as the snapshot keeps numeric). */
const rowsOf = (snapshot: DbSnapshot | undefined): Record<string, string[]> =>
  Object.fromEntries(
    (snapshot?.tables ?? []).map((t) => [`${t.schema}.${t.name}`, t.rows.map((r) => JSON.stringify(sorted(r))).sort()]),
  );

describe.runIf(ADMIN)('observed capture of keys, schemas and search paths', () => {
  let dir = '';
  let result: unknown;
  let truth: Record<string, string[]> = {};
  beforeAll(async () => {
    const run = await record({ out: path.join(tmp.dir, 'rec'), name: 'keys', command: [process.execPath, AGENT] }, () =>
      runKeysAgent(source?.url as string),
    );
    dir = run.dir;
    result = run.result;
    // The database's own end state, in the snapshot's JSON form.
    const client = new pg.Client({ connectionString: source?.url });
    await client.connect();
    try {
      truth = rowsOf((await snapshotDatabase(client, ['app', 'billing', 'public'])).snapshot);
    } finally {
      await client.end();
    }
  }, 240_000);

  it('holds every row it touched in its own table, before and after, as the database does', async () => {
    const recording = await readRecording(dir);
    // A table with no key at all: its rows' inserts and deletes are followed, an update is counted.
    expect(recording.manifest.world?.db?.unobserved ?? {}).toEqual({
      'updates of tables without a key (no primary key, no unique index of NOT NULL columns)': 1,
    });
    // The database's search_path, which the sandboxes give the agent's connections.
    expect(recording.pre.db?.searchPath).toEqual(['app', 'public']);
    const pre = rowsOf(recording.pre.db);
    const post = rowsOf(recording.post.db);
    // Every row of the end state the run touched, and no other.
    for (const [t, rows] of Object.entries(post)) expect(rows, t).toEqual(truth[t]?.filter((r) => rows.includes(r)));
    expect(post['app.tags']).toEqual(truth['app.tags']);
    expect(pre['app.tags']?.map((r) => JSON.parse(r).code)).toEqual(['a', 'b', 'c']);
    expect(post['billing.invoices']).toEqual(truth['billing.invoices']);
    expect(post['public.invoices']).toEqual(truth['public.invoices']);
    expect(post['app.Orders']?.map((r) => JSON.parse(r).Qty)).toEqual(['11', '3']);
    // Rows read by their key alone (uuid, composite and mixed-case) are read again by it, whole.
    expect(pre['app.Orders']?.map((r) => JSON.parse(r).OrderId + JSON.parse(r).Line).sort()).toEqual([
      '11',
      '12',
      '21',
    ]);
    expect(pre['app.accounts']?.map((r) => JSON.parse(r).name)).toEqual(['ann', 'bob']);
    // Keys swapped by one statement (a deferrable key): each row's before is its own.
    expect(pre['app.slots']).toEqual(['{"label":"one","n":"1"}', '{"label":"two","n":"2"}']);
    expect(post['app.slots']).toEqual(['{"label":"one","n":"2"}', '{"label":"two","n":"1"}']);
    // The world at the last step (pre-world and every change in order) is the post-world.
    expect(rowsOf(worldAt(recording, Number.MAX_SAFE_INTEGER).db)).toEqual(post);
    expect(post['app.kv']).toEqual(truth['app.kv']);
    expect(pre['app.kv']?.map((r) => JSON.parse(r).k)).toEqual(['k0', 'k2']);
    expect(post['app.log']?.map((r) => JSON.parse(r).msg)).toEqual(['new']);
    expect(pre['app.log']?.map((r) => JSON.parse(r).msg)).toEqual(['old']);
  });

  itReplaysExactly(() => ({ recording: dir, result, outDir: tmp.dir }), ADMIN);
});

function sorted(row: unknown): Record<string, unknown> {
  const r = row as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(r)
      .sort()
      .map((k) => [k, typeof r[k] === 'number' ? String(r[k]) : r[k]]),
  );
}

describe.runIf(ADMIN)('the same run recorded with world: snapshot (whole schemas and triggers)', () => {
  let fresh: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
  let dir = '';
  let result: unknown;
  beforeAll(async () => {
    fresh = await scratchDatabase(ADMIN as string, 'worlds4_keys_snap_', WORLD);
    const run = await record(
      {
        out: path.join(tmp.dir, 'snap'),
        name: 'keys-snapshot',
        command: [process.execPath, AGENT],
        world: 'snapshot',
        dbUrl: fresh.url,
        dbSchemas: ['app', 'billing', 'public'],
      },
      () => runKeysAgent(fresh?.url as string),
    );
    dir = run.dir;
    result = run.result;
  }, 240_000);
  afterAll(async () => fresh?.drop());

  it('records the search_path and replays in the PGlite sandbox to the recorded end state', async () => {
    const recording = await readRecording(dir);
    expect(recording.pre.db?.searchPath).toEqual(['app', 'public']);
    expect(rowsOf(recording.post.db)['app.slots']).toEqual([
      '{"label":"one","n":"2"}',
      '{"label":"three","n":"3"}',
      '{"label":"two","n":"1"}',
    ]);
    expect(rowsOf(worldAt(recording, Number.MAX_SAFE_INTEGER).db)).toEqual(rowsOf(recording.post.db));
    const replayed = await replay({
      recording: dir,
      mode: 'exact',
      out: path.join(tmp.dir, 'snap-replay'),
      stdio: 'pipe',
    });
    expect(replayed.output?.stderr ?? '').not.toMatch(/error/i);
    expect(replayed.divergences).toEqual([]);
    expect(replayed.worldDiff).toEqual([]);
    expect(JSON.parse(replayed.output?.stdout ?? '[]')).toEqual(JSON.parse(JSON.stringify(result)));
  }, 240_000);
});
