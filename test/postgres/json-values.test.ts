// json and jsonb values kept as the database holds them, from the recorded database to every
// sandbox: a json's own text (key order, duplicate keys, whitespace), jsonb's numbers beyond a
// double, JSON null apart from SQL NULL, a jsonb string "5" apart from the number 5. Each value is
// compared with what the real database prints for it (`col::text`), after the recorder's snapshot
// and change capture, seeding, and applying the recorded changes.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWorldDb } from '../../src/bisect/user/world-db.js';
import { diffDb } from '../../src/diff/db-diff.js';
import { createDbTracker } from '../../src/postgres/index.js';
import { type DbChangedPayload, type DbSnapshot, parseDbSnapshot, worldAt } from '../../src/recording/index.js';
import { sandboxPaths } from './sandbox-paths.js';

const url = process.env.TAPEDECK_PG_URL;
const tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-json-values-'));
process.env.TAPEDECK_STATE_DIR ??= path.join(tmp, 'state');

const SETUP = `
  CREATE SCHEMA app;
  CREATE TABLE app.docs (id int PRIMARY KEY, j json, jb jsonb, tag text);
  INSERT INTO app.docs VALUES
    (1, '  {"b": 1,  "a": 2, "a": 3}  ', '{"n": 12345678901234567890, "p": 0.1000000000000000055511}', 'one'),
    (2, 'null', 'null', 'json null'),
    (3, NULL, NULL, 'sql null'),
    (4, '5', '"5"', 'string five'),
    (5, '"5"', '5', 'number five'),
    (6, '[1,2 , {"x":[]}]', '[1.0, 1e2, -0.000000000000000000000000000001]', 'arrays');`;

/** The recorded run's writes: what change capture logs and the sandbox applies again. */
const MUTATE = `
  INSERT INTO app.docs VALUES (7, '{"z":1,   "a":[1 ,2]}', '{"big": 98765432109876543210.000000000000000000001}', 'new');
  UPDATE app.docs SET jb = '"null"', j = NULL WHERE id = 2;
  UPDATE app.docs SET jb = 'null', j = 'null' WHERE id = 3;
  UPDATE app.docs SET j = '{"k":"v" , "k":"w"}' WHERE id = 1;
  DELETE FROM app.docs WHERE id = 5;`;

/** db.json as the reader takes it: its text, validated (src/recording/read-snapshots.ts). */
const readBack = (snapshot: unknown): DbSnapshot => {
  const text = JSON.stringify(snapshot);
  return parseDbSnapshot(tmp, 'db.json', { text, value: JSON.parse(text) }, []);
};

const TEXT = 'SELECT id, j::text AS j, jb::text AS jb FROM app.docs ORDER BY id';

let dbUrl = '';
let admin: pg.Client | undefined;
const dbName = `tapedeck_json_${randomBytes(4).toString('hex')}`;
let pre: DbSnapshot;
let post: DbSnapshot;
let changes: DbChangedPayload[];
let preText: unknown[];
let postText: unknown[];

beforeAll(async () => {
  if (!url) return;
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const u = new URL(url);
  u.pathname = `/${dbName}`;
  dbUrl = u.toString();
  const app = new pg.Client({ connectionString: dbUrl });
  await app.connect();
  try {
    await app.query(SETUP);
    const tracker = await createDbTracker(dbUrl, { schemas: ['app'] });
    try {
      await tracker.start();
      pre = await tracker.snapshot();
      preText = (await app.query(TEXT)).rows;
      await app.query(MUTATE);
      changes = await tracker.drain();
      post = await tracker.snapshot();
      postText = (await app.query(TEXT)).rows;
    } finally {
      await tracker.close();
    }
  } finally {
    await app.end();
  }
}, 60_000);

afterAll(async () => {
  if (admin) {
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {});
    await admin.end();
  }
  rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(!url)('json and jsonb values recorded from a server', () => {
  it('the snapshot and the captured changes hold each value as the text the database prints', () => {
    const held = (s: DbSnapshot) => s.tables[0]?.rows.map((r) => ({ id: r.id, j: r.j ?? null, jb: r.jb ?? null }));
    expect(held(pre)).toEqual(preText);
    expect(held(post)).toEqual(postText);
    expect(pre.tables[0]?.columns.filter((c) => c.values === 'text').map((c) => c.name)).toEqual(['j', 'jb']);
    // The recorded file reads back (the row format validates), and the changes replay to the post state.
    expect(readBack(pre)).toEqual(pre);
    const inserted = changes.find((c) => c.op === 'insert');
    expect(inserted?.after).toMatchObject({
      j: '{"z":1,   "a":[1 ,2]}',
      jb: '{"big": 98765432109876543210.000000000000000000001}',
    });
    expect(changes.find((c) => c.op === 'update' && c.key.id === 2)?.after).toMatchObject({ j: null, jb: '"null"' });
  });

  describe.each(sandboxPaths(['app']))('rebuilt through $name', ({ open, skip }) => {
    it.skipIf(skip)(
      'seeds and applies the recorded changes to the texts the real database printed',
      async () => {
        const db = await open(pre);
        try {
          expect(await db.query(TEXT)).toEqual(preText);
          await db.apply(changes);
          expect(await db.query(TEXT)).toEqual(postText);
          // The sandbox's end state reads as the recorded one, value for value.
          expect((await db.read()).tables[0]?.rows).toEqual(post.tables[0]?.rows);
        } finally {
          await db.close();
        }
      },
      60_000,
    );
  });
});

describe.skipIf(!url)('readers of json values held as text', () => {
  it('the diff of two equal worlds is empty, of a changed value names its column, old form or new', () => {
    expect(diffDb(post, post)).toEqual([]);
    const changed = diffDb(pre, post).find((c) => c.key.id === 3);
    expect(changed?.changedColumns.sort()).toEqual(['j', 'jb']);
    // A recording made before held json/jsonb parsed (to_jsonb's form, no `values`): against a
    // replay's end state in text form, equal values are no change.
    const old: DbSnapshot = {
      ...post,
      tables: post.tables.map((t) => ({
        ...t,
        columns: t.columns.map(({ values: _v, ...c }) => c),
        rows: t.rows.map((r) => ({
          ...r,
          j: typeof r.j === 'string' ? JSON.parse(r.j) : null,
          jb: typeof r.jb === 'string' ? JSON.parse(r.jb) : null,
        })),
      })),
    };
    expect(readBack(old)).toBeDefined();
    expect(diffDb(old, post).filter((c) => c.key.id !== 2 && c.key.id !== 3)).toEqual([]);
  });

  it('refuses a text-held value that is not text', () => {
    const bad = JSON.parse(JSON.stringify(pre)) as DbSnapshot;
    (bad.tables[0]?.rows[0] as Record<string, unknown>).jb = { n: 1 };
    expect(() => readBack(bad)).toThrow(/rows.*jb|jb.*text/);
  });

  it("a world at a step keeps the recorded search_path, and bisect's SQL predicate finds its tables by it", async () => {
    const world = worldAt(
      { pre: { ...{ fs: { files: {} } }, db: { ...pre, searchPath: ['app', 'public'] } }, events: [] },
      0,
    );
    expect(world.db?.searchPath).toEqual(['app', 'public']);
    const wdb = await openWorldDb(world.db);
    try {
      const { rows } = await wdb.queryAt(world.db, 'SELECT jb::text AS jb FROM docs WHERE id = 1');
      expect(rows).toEqual([{ jb: (preText[0] as { jb: string }).jb }]);
    } finally {
      await wdb.close();
    }
  }, 60_000);
});
