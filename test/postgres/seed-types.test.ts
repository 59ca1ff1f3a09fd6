// Seeding a sandbox from a snapshot, and applying recorded row changes to it, keep every value the
// snapshot holds, whatever its type, on every path: PGlite in-process (bisect --sql), PGlite behind
// pglite-socket (the default replay sandbox) and a real server (template sandbox, TAPEDECK_PG_URL).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotDatabase } from '../../src/postgres/index.js';
import type { DbChangedPayload, DbSnapshot, Row } from '../../src/recording/index.js';
import { type SeededDatabase, sandboxPaths } from './sandbox-paths.js';

const tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-seed-types-'));
process.env.TAPEDECK_STATE_DIR ??= path.join(tmp, 'state');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SETUP = String.raw`
  CREATE SCHEMA app;
  CREATE TABLE app.kinds (
    id int PRIMARY KEY, b bytea, j jsonb, js json, a int[], t text[], n numeric(12,4), big bigint,
    ts timestamptz, plain timestamp, u uuid, iv interval, d date, f float8, ok boolean, txt text);
  CREATE TABLE app.blobs (k bytea PRIMARY KEY, v text);
  INSERT INTO app.kinds VALUES
    (1, '\x00ff0a', '{"k": [1, "x", null], "s": "q''uote", "n": 1.50}', '"just a string"', '{1,2,3}',
     '{"a b","c,d",NULL,"{}"}', 1234.5000, 9007199254740993, '2026-01-02 03:04:05.123456+02',
     '2026-01-02 03:04:05', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '1 day 02:03:04.5', '2026-02-03',
     0.1, true, 'tab	and ünïcode ✓'),
    (2, '', '[]', '{"a": 1}', '{}', '{}', -0.0001, -1, '1999-12-31T23:59:59Z', '1999-12-31 23:59:59',
     '00000000-0000-0000-0000-000000000000', '-3 mons', '0001-01-01', 'Infinity', false, ''),
    (3, NULL, 'null', NULL, '{{1,2},{3,4}}', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
  INSERT INTO app.blobs VALUES ('\x01', 'one'), ('\x02', 'two'), ('\xdeadbeef', 'dead');`;

/** The statements the recorded run made; the changes below are what change capture records of them. */
const MUTATE = String.raw`
  INSERT INTO app.kinds VALUES (4, '\xcafe', '{"new": true}', '[1]', '{7}', '{"x"}', 3.1416, 42,
    '2026-06-01 12:00:00+00', '2026-06-01 12:00:00', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', '5 minutes',
    '2026-06-01', -2.5, true, 'four');
  UPDATE app.kinds SET b = '\x0102', j = '{"k": "changed"}', a = '{9,8}', n = 0, ts = '2026-03-04 05:06:07+00' WHERE id = 2;
  DELETE FROM app.kinds WHERE id = 1;
  UPDATE app.blobs SET v = 'ONE' WHERE k = '\x01';
  DELETE FROM app.blobs WHERE k = '\xdeadbeef';`;

const rowsOf = (snapshot: DbSnapshot, table: string): Row[] =>
  snapshot.tables.find((t) => t.name === table)?.rows ?? [];

function changesBetween(post: DbSnapshot): DbChangedPayload[] {
  const kind = (id: number) => rowsOf(post, 'kinds').find((r) => r.id === id) as Row;
  const blob = (k: string) => rowsOf(post, 'blobs').find((r) => r.k === k) as Row;
  return [
    { schema: 'app', table: 'kinds', op: 'insert', key: { id: 4 }, after: kind(4) },
    { schema: 'app', table: 'kinds', op: 'update', key: { id: 2 }, after: kind(2) },
    { schema: 'app', table: 'kinds', op: 'delete', key: { id: 1 } },
    { schema: 'app', table: 'blobs', op: 'update', key: { k: '\\x01' }, after: blob('\\x01') },
    { schema: 'app', table: 'blobs', op: 'delete', key: { k: '\\xdeadbeef' } },
  ];
}

let pre: DbSnapshot;
let post: DbSnapshot;

beforeAll(async () => {
  const source = await PGlite.create();
  try {
    await source.exec(SETUP);
    pre = (await snapshotDatabase(source, ['app'])).snapshot;
    await source.exec(MUTATE);
    post = (await snapshotDatabase(source, ['app'])).snapshot;
  } finally {
    await source.close();
  }
  // The snapshot form the paths must keep: bytea as \x hex, arrays as JSON arrays, json as JSON.
  expect(rowsOf(pre, 'kinds')[0]).toMatchObject({ b: '\\x00ff0a', a: [1, 2, 3], n: '1234.5000' });
}, 60_000);

const PATHS = sandboxPaths(['app']);

describe.each(PATHS)('seeding through $name', ({ open, skip }) => {
  let db: SeededDatabase | undefined;
  beforeAll(async () => {
    if (!skip) db = await open(pre);
  }, 60_000);
  afterAll(async () => db?.close());

  it.skipIf(skip)('reads back every row of every type as the snapshot recorded it', async () => {
    const read = await (db as NonNullable<typeof db>).read();
    expect(read.tables.map((t) => t.rows)).toEqual(pre.tables.map((t) => t.rows));
  });

  it.skipIf(skip)(
    'applies recorded inserts, updates and deletes, bytea keys too, to the recorded end state',
    async () => {
      const sandbox = db as NonNullable<typeof db>;
      await sandbox.apply(changesBetween(post));
      const read = await sandbox.read();
      expect(read.tables.map((t) => t.rows)).toEqual(post.tables.map((t) => t.rows));
    },
  );
});
