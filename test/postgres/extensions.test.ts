// Worlds tapedeck had not seen: a server database with contrib extensions (citext, hstore, ltree,
// pg_trgm, uuid-ossp, pgcrypto, cube, earthdistance, btree_gist), domains, ranges, partitioned and
// inherited tables, an unlogged table, quoted/keyword/unicode names, an exclusion constraint, a
// materialized view, a sequence two tables share, numeric NaN/Infinity, timestamptz ±infinity, bytea,
// money, interval, tsvector and a large row. On every sandbox path (PGlite in-process, PGlite over
// its socket, a server's template database) the sandbox built from the snapshot's description has
// the recorded types, answers the agent's reads as the recorded database did, and ends, after the
// recorded run's changes, at the recorded end state. A description naming an extension a sandbox
// cannot create (not on the allow-list, hostile, or not installed here) builds what it can and says
// what it lacks.
import { type Extensions, PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDbSandbox } from '../../sandbox/index.js';
import { openWorldDb, type PredicateInput, sqlPredicate } from '../../src/bisect/index.js';
import { pgliteExtensions, snapshotDatabase } from '../../src/postgres/index.js';
import type { DbSnapshot } from '../../src/recording/index.js';
import { scratchDatabase } from '../record/helpers.js';
import { changesBetween } from '../support/db-changes.js';
import { EXTENSIONS, READS, RUN, WORLD } from './fixtures/extension-world.mjs';
import { type SeededDatabase, sandboxPaths } from './sandbox-paths.js';

const ADMIN = process.env.TAPEDECK_PG_URL;

const rowsOf = async (client: pg.Client, sql: string) => (await client.query(sql)).rows;

let source: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
let pre: DbSnapshot;
let post: DbSnapshot;
const answers: unknown[][] = [];

beforeAll(async () => {
  if (!ADMIN) return;
  source = await scratchDatabase(ADMIN, 'tdworlds_', WORLD);
  const client = new pg.Client({ connectionString: source.url });
  await client.connect();
  try {
    pre = (await snapshotDatabase(client, ['app'])).snapshot;
    for (const sql of READS) answers.push(await rowsOf(client, sql));
    await client.query(RUN);
    post = (await snapshotDatabase(client, ['app'])).snapshot;
  } finally {
    await client.end();
  }
}, 120_000);

afterAll(async () => source?.drop());

const PATHS = sandboxPaths(['app']);

describe.runIf(ADMIN).each(PATHS)('a world of extensions and schema features through $name', ({ open, skip }) => {
  let db: SeededDatabase | undefined;
  beforeAll(async () => {
    if (!skip) db = await open(pre);
  }, 120_000);
  afterAll(async () => db?.close());

  it.skipIf(skip)('is built with the recorded types and holds every row as recorded, lacking nothing', async () => {
    const sandbox = db as SeededDatabase;
    expect(sandbox.lacks).toEqual([]);
    const read = await sandbox.read();
    const shape = (s: DbSnapshot) => s.tables.map((t) => [t.name, t.columns.map((c) => [c.name, c.type])]);
    expect(shape(read)).toEqual(shape(pre));
    expect(read.tables.map((t) => [t.name, t.rows])).toEqual(pre.tables.map((t) => [t.name, t.rows]));
    expect(read.extensions?.map((e) => e.name)).toEqual(expect.arrayContaining(EXTENSIONS));
  });

  it.skipIf(skip)("answers the agent's reads as the recorded database did", async () => {
    const sandbox = db as SeededDatabase;
    const got: unknown[][] = [];
    for (const sql of READS) got.push(await sandbox.query(sql));
    expect(JSON.parse(JSON.stringify(got))).toEqual(JSON.parse(JSON.stringify(answers)));
  });

  it.skipIf(skip)("ends at the recorded end state after the recorded run's changes", async () => {
    const sandbox = db as SeededDatabase;
    await sandbox.apply(changesBetween(pre, post));
    const read = await sandbox.read();
    expect(read.tables.map((t) => [t.name, t.rows])).toEqual(post.tables.map((t) => [t.name, t.rows]));
  });

  it.skipIf(skip)(
    "fills the extensions' column defaults it describes, and only those, on the agent's inserts",
    async () => {
      const sandbox = db as SeededDatabase;
      const [row] = await sandbox.query(
        `INSERT INTO app.users (email) VALUES ('new@example.com') RETURNING ext_id IS NOT NULL AS ext, id IS NOT NULL AS id, secret`,
      );
      // uuid_generate_v4() (uuid-ossp) and gen_random_uuid() are rebuilt; digest(…) (pgcrypto) is an
      // expression outside the allow-list: named in `unbuilt`, the column gets NULL.
      expect(row).toEqual({ ext: true, id: true, secret: null });
      expect(pre.unbuilt).toContainEqual({ kind: 'default', schema: 'app', name: 'secret', table: 'users' });
    },
  );
});

describe.runIf(ADMIN)("bisect's SQL predicate on a world of extensions (PGlite in-process)", () => {
  it("answers the agent's reads as the recorded database did", async () => {
    const world = await openWorldDb(pre);
    try {
      const got: unknown[][] = [];
      for (const sql of READS) got.push((await world.queryAt(pre, sql)).rows);
      expect(JSON.parse(JSON.stringify(got))).toEqual(JSON.parse(JSON.stringify(answers)));
    } finally {
      await world.close();
    }
  }, 120_000);

  it('a predicate on a citext column decides by its case-insensitive equality', async () => {
    const predicate = sqlPredicate(`SELECT 1 FROM app.users WHERE email = 'ANN@EXAMPLE.COM'`);
    try {
      const input = { world: { db: pre } } as unknown as PredicateInput;
      expect((await predicate.evaluate(input)).verdict).toBe('bad');
    } finally {
      await predicate.close?.();
    }
  }, 120_000);
});

describe('a description naming extensions a sandbox cannot create', () => {
  it.runIf(ADMIN)(
    'holds the columns of a missing extension as text and leaves out the indexes text cannot have',
    async () => {
      // The world without ltree: its column becomes text, and its gist index (no default operator
      // class for text) is left out and named; every row still reads back as recorded.
      const described: DbSnapshot = { ...pre, extensions: pre.extensions?.filter((e) => e.name !== 'ltree') };
      const db = await openDbSandbox(described, { kind: 'pglite' });
      try {
        expect(db.lacks).toEqual([
          "extension ltree (not among the recorded database's extensions): column app.users.path holds its values as text, index app.users_path is left out",
        ]);
        const read = await db.snapshot(['app']);
        expect(read.tables.map((t) => [t.name, t.rows])).toEqual(pre.tables.map((t) => [t.name, t.rows]));
      } finally {
        await db.close();
      }
    },
    120_000,
  );

  it('builds the rest, holds the columns as text and names what it lacks (vector on a server, unknown and hostile names)', async () => {
    // A vector column recorded from a database that had pgvector (PGlite with its module).
    const origin = await PGlite.create({
      extensions: (await pgliteExtensions({ extensions: [{ name: 'vector', schema: 'public' }] })) as Extensions,
    });
    let snapshot: DbSnapshot;
    try {
      await origin.exec(`CREATE EXTENSION vector; CREATE SCHEMA app;
        CREATE TABLE app.items (id int PRIMARY KEY, embedding vector(3), note text);
        INSERT INTO app.items VALUES (1, '[1,2,3]', 'a'), (2, NULL, 'b');`);
      snapshot = (await snapshotDatabase(origin, ['app'])).snapshot;
    } finally {
      await origin.close();
    }
    expect(snapshot.tables[0]?.columns[1]).toMatchObject({
      type: 'vector(3)',
      udt: { name: 'vector', extension: 'vector' },
    });
    const hostile = 'citext" WITH SCHEMA public; DROP SCHEMA app CASCADE; --';
    const described: DbSnapshot = {
      ...snapshot,
      extensions: [
        ...(snapshot.extensions ?? []),
        { name: 'postgis', schema: 'public' },
        { name: hostile, schema: 'public' },
      ],
    };
    const servers = ADMIN ? [{ kind: 'template' as const, url: ADMIN }] : [];
    for (const options of [{ kind: 'pglite' as const }, ...servers]) {
      const db = await openDbSandbox(described, options);
      try {
        const lacks = db.lacks.join('\n');
        expect(lacks).toContain('extension postgis (not one a sandbox creates');
        expect(lacks).toContain(`extension ${hostile} (not one a sandbox creates`);
        const types = await db.query(
          `SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute WHERE attrelid = 'app.items'::regclass AND attname = 'embedding'`,
        );
        const extensions = await db.query(`SELECT extname AS name FROM pg_extension ORDER BY 1`);
        expect(extensions.map((e) => e.name)).not.toContain(hostile);
        if (options.kind === 'pglite') {
          // PGlite loads @electric-sql/pglite-pgvector's module: the column keeps its type.
          expect(types).toEqual([{ t: 'vector(3)' }]);
          expect(lacks).not.toContain('extension vector');
        } else {
          // This server has no pgvector: the column holds the values' text, and the sandbox says so.
          expect(types).toEqual([{ t: 'text' }]);
          expect(lacks).toContain(
            'extension vector (it cannot be created here): column app.items.embedding holds its values as text',
          );
        }
        const read = await db.snapshot(['app']);
        expect(read.tables.map((t) => t.rows)).toEqual(snapshot.tables.map((t) => t.rows));
      } finally {
        await db.close();
      }
    }
  }, 120_000);
});
