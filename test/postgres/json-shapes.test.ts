// JSON in other shapes than a json/jsonb column — a domain over jsonb (and one over that domain), a
// domain over json, json[] and jsonb[], an array of a domain and a domain over jsonb[] — kept as the
// text Postgres prints (`values: 'text'`), as plain json/jsonb are: in the snapshot and change
// capture, in observed capture (a read's own text, a keyed read, a write's images), in seeding and
// applied changes on every sandbox path, and in a replay's end state. Each value is compared with
// what the real database prints for it (`col::text`). A recording made before (to_jsonb's form)
// still compares equal, and a reader of facts sees arrays of parsed values.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffDb } from '../../src/diff/db-diff.js';
import { createDbTracker } from '../../src/postgres/index.js';
import { record } from '../../src/record/index.js';
import { type DbChangedPayload, type DbSnapshot, readRecording, rowFacts, worldAt } from '../../src/recording/index.js';
import { scratchDatabase, tempDir } from '../record/helpers.js';
import { RUN, runJsonAgent, WORLD } from './fixtures/json-world.mjs';
import { itReplaysExactly } from './replay-exact.js';
import { sandboxPaths } from './sandbox-paths.js';

const ADMIN = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('./fixtures/json-world.mjs', import.meta.url));
const tmp = tempDir();
const SHAPES = ['d', 'dd', 'j', 'ja', 'jba', 'da', 'ds'];
const TEXT = `SELECT id, ${SHAPES.map((c) => `${c}::text AS ${c}`).join(', ')} FROM app.shapes ORDER BY id`;

/** The rows of app.shapes in a snapshot, their JSON-shaped columns only, by id. */
const held = (s: DbSnapshot | undefined) =>
  (s?.tables.find((t) => t.name === 'shapes')?.rows ?? [])
    .map((r) => ({ id: r.id, ...Object.fromEntries(SHAPES.map((c) => [c, r[c] ?? null])) }))
    .sort((a, b) => Number(a.id) - Number(b.id));

async function textOf(url: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(TEXT)).rows;
  } finally {
    await client.end();
  }
}

afterAll(() => tmp.remove());

describe.runIf(ADMIN)('JSON domains and arrays, snapshot and change capture', () => {
  let source: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
  let pre: DbSnapshot;
  let post: DbSnapshot;
  let changes: DbChangedPayload[];
  let preText: unknown[];
  let postText: unknown[];
  beforeAll(async () => {
    source = await scratchDatabase(ADMIN as string, 'worlds6_json_', WORLD);
    const tracker = await createDbTracker(source.url, { schemas: ['app'] });
    try {
      await tracker.start();
      pre = await tracker.snapshot();
      preText = await textOf(source.url);
      await runJsonAgent(source.url);
      changes = await tracker.drain();
      post = await tracker.snapshot();
      postText = await textOf(source.url);
    } finally {
      await tracker.close();
    }
  }, 60_000);
  afterAll(async () => source?.drop());

  it('holds each value as the text the database prints, before, after and in each change', () => {
    expect(held(pre)).toEqual(preText);
    expect(held(post)).toEqual(postText);
    const columns = pre.tables.find((t) => t.name === 'shapes')?.columns ?? [];
    expect(columns.filter((c) => c.values === 'text').map((c) => c.name)).toEqual(SHAPES);
    const inserted = changes.find((c) => c.op === 'insert')?.after;
    expect(inserted).toMatchObject((postText as Array<{ id: number }>).find((r) => r.id === 5) as object);
  });

  it('a recording made before (to_jsonb form) compares equal, and a reader of facts sees parsed arrays', () => {
    // The same end state as to_jsonb gave it: each value parsed, arrays as JSON arrays of values.
    const table = post.tables.find((t) => t.name === 'shapes');
    if (table === undefined) throw new Error('no table');
    const old: DbSnapshot = {
      ...post,
      tables: [
        {
          ...table,
          columns: table.columns.map(({ values: _v, ...c }) => c),
          rows: table.rows.map((r) => rowFacts(table, r, post.domains)),
        },
      ],
    };
    expect(diffDb(old, post)).toEqual([]);
    expect(diffDb(post, old)).toEqual([]);
    const one = old.tables[0]?.rows.find((r) => r.id === 1);
    expect(one?.ja).toEqual([{ k: 1 }]);
    const four = old.tables[0]?.rows.find((r) => r.id === 4);
    expect(four).toMatchObject({ ja: [1, 2], jba: ['null'], da: [null], ds: ['5'], dd: { x: [1, { y: null }] } });
    expect(old.tables[0]?.rows.find((r) => r.id === 3)?.ds).toEqual([[1], [2]]);
    // A domain over jsonb[] holding an empty array is an empty array, not an object.
    const empty = { ...table, rows: [{ id: 9, ds: '{}', d: '{}' }] };
    expect(rowFacts(empty, empty.rows[0] as never, post.domains)).toMatchObject({ ds: [], d: {} });
    // A changed element is a change of its column.
    const changed = JSON.parse(JSON.stringify(old)) as DbSnapshot;
    (changed.tables[0]?.rows.find((r) => r.id === 4) as Record<string, unknown>).jba = ['"null"'];
    expect(diffDb(changed, post).map((c) => c.changedColumns)).toEqual([['jba']]);
  });

  describe.each(sandboxPaths(['app']))('rebuilt through $name', ({ open, skip }) => {
    it.skipIf(skip)(
      'seeds and applies the recorded changes to the texts the real database printed',
      async () => {
        const db = await open(pre);
        try {
          expect(db.lacks).toEqual([]);
          expect(await db.query(TEXT)).toEqual(preText);
          await db.apply(changes);
          expect(await db.query(TEXT)).toEqual(postText);
          // Applied again, an insert of the row the sandbox holds as recorded is no conflict.
          await db.apply(changes.filter((c) => c.op === 'insert'));
          expect((await db.read()).tables.find((t) => t.name === 'shapes')?.rows).toEqual(
            post.tables.find((t) => t.name === 'shapes')?.rows,
          );
        } finally {
          await db.close();
        }
      },
      60_000,
    );
  });
});

describe.runIf(ADMIN)('JSON domains and arrays, observed capture', () => {
  let source: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
  let dir = '';
  let result: unknown;
  let preText: unknown[];
  let postText: unknown[];
  beforeAll(async () => {
    source = await scratchDatabase(ADMIN as string, 'worlds6_json_obs_', WORLD);
    preText = await textOf(source.url);
    const run = await record({ out: path.join(tmp.dir, 'rec'), name: 'json', command: [process.execPath, AGENT] }, () =>
      runJsonAgent(source?.url as string),
    );
    dir = run.dir;
    result = run.result;
    postText = await textOf(source.url);
  }, 240_000);
  afterAll(async () => source?.drop());

  it("holds every row it touched as the database's text, read by key, from a read's own text and from its writes", async () => {
    const recording = await readRecording(dir);
    expect(recording.manifest.world?.db?.unobserved ?? {}).toEqual({});
    const touched = (rows: unknown[], ids: number[]) => rows.filter((r) => ids.includes((r as { id: number }).id));
    expect(held(recording.pre.db)).toEqual(touched(preText, [1, 2, 3, 4]));
    expect(held(recording.post.db)).toEqual(touched(postText, [1, 3, 4, 5]));
    expect(held(worldAt(recording, Number.MAX_SAFE_INTEGER).db)).toEqual(held(recording.post.db));
    expect(RUN.length).toBe((result as unknown[]).length);
  });

  itReplaysExactly(() => ({ recording: dir, result, outDir: tmp.dir }), ADMIN);
});
