// A world whose tables hold rows to rules beyond keys: declarative partitions (range, list, hash,
// default, a sub-partitioned one, an index a partition has of its own), named CHECK constraints (comparisons, IN lists, LIKE, IS NOT
// NULL, NOT, on a partitioned table, inherited by an INHERITS child), an EXCLUDE constraint, and
// pgvector's hnsw / ivfflat indexes. On every sandbox path the sandbox is built with the same
// rules (its own snapshot describes them as the recorded one did), refuses the rows the recorded
// database refuses, routes rows to the partitions it did, and ends at the recorded end state.
import { type Extensions, PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDbSandbox } from '../../sandbox/index.js';
import { pgliteExtensions, snapshotDatabase } from '../../src/postgres/index.js';
import type { DbSnapshot } from '../../src/recording/index.js';
import { scratchDatabase } from '../record/helpers.js';
import { changesBetween } from '../support/db-changes.js';
import { type SeededDatabase, sandboxPaths } from './sandbox-paths.js';

const ADMIN = process.env.TAPEDECK_PG_URL;

const WORLD = `
  CREATE EXTENSION IF NOT EXISTS btree_gist;
  CREATE SCHEMA rules;
  CREATE TABLE rules.events (id int NOT NULL, at date NOT NULL, kind text NOT NULL, qty int,
    PRIMARY KEY (id, at, kind), CONSTRAINT events_qty CHECK (qty IS NULL OR qty BETWEEN 1 AND 100)) PARTITION BY RANGE (at);
  CREATE TABLE rules.events_old PARTITION OF rules.events FOR VALUES FROM (MINVALUE) TO ('2025-01-01');
  CREATE TABLE rules.events_2025 PARTITION OF rules.events FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')
    PARTITION BY LIST (kind);
  CREATE TABLE rules.events_2025_ab PARTITION OF rules.events_2025 FOR VALUES IN ('a', 'b');
  CREATE TABLE rules.events_2025_rest PARTITION OF rules.events_2025 DEFAULT;
  CREATE TABLE rules.shards (id bigint PRIMARY KEY, v text) PARTITION BY HASH (id);
  CREATE TABLE rules.shards_0 PARTITION OF rules.shards FOR VALUES WITH (MODULUS 2, REMAINDER 0);
  CREATE TABLE rules.shards_1 PARTITION OF rules.shards FOR VALUES WITH (MODULUS 2, REMAINDER 1);
  CREATE TABLE rules.orders (id int PRIMARY KEY, status text NOT NULL, email text, total numeric(10,2),
    "Note" varchar(20),
    CONSTRAINT orders_status CHECK (status IN ('new', 'paid', 'shipped')),
    CONSTRAINT orders_email CHECK (email LIKE '%@%' AND email IS NOT NULL),
    CONSTRAINT orders_total CHECK (NOT (total < 0)),
    CONSTRAINT "Note length" CHECK (char_length("Note") <= 5 AND "Note" NOT IN ('bad')));
  CREATE TABLE rules.base (id int PRIMARY KEY, n int CONSTRAINT base_n CHECK (n > 0));
  CREATE TABLE rules.child (extra text) INHERITS (rules.base);
  CREATE TABLE rules.bookings (id int PRIMARY KEY, room int NOT NULL, during tsrange NOT NULL,
    CONSTRAINT no_overlap EXCLUDE USING gist (room WITH =, during WITH &&));
  CREATE INDEX events_by_qty ON rules.events (qty);
  CREATE UNIQUE INDEX events_old_kind_own ON rules.events_old (kind, id);
  INSERT INTO rules.events VALUES (1, '2024-03-01', 'x', 5), (2, '2025-02-01', 'a', NULL), (3, '2025-03-01', 'z', 7),
    (6, '2020-01-01', 'k', 2);
  INSERT INTO rules.shards SELECT g, 'v' || g FROM generate_series(1, 6) g;
  INSERT INTO rules.orders VALUES (1, 'new', 'a@x', 10, 'ok'), (2, 'paid', 'b@x', 0, NULL);
  INSERT INTO rules.base VALUES (1, 1);
  INSERT INTO rules.child VALUES (2, 2, 'e');
  INSERT INTO rules.bookings VALUES (1, 1, '[2026-01-01 10:00,2026-01-01 11:00)');`;

/** The recorded run's writes: to partitions through their parent, to every table. */
const RUN = `
  INSERT INTO rules.events VALUES (4, '2025-06-01', 'b', 9), (5, '2023-01-01', 'q', NULL);
  UPDATE rules.events SET kind = 'y', qty = 6 WHERE id = 3;
  DELETE FROM rules.events WHERE id = 1;
  INSERT INTO rules.shards VALUES (7, 'v7');
  UPDATE rules.shards SET v = 'V2' WHERE id = 2;
  UPDATE rules.orders SET status = 'shipped' WHERE id = 1;
  INSERT INTO rules.child VALUES (3, 4, 'f');
  INSERT INTO rules.bookings VALUES (2, 1, '[2026-01-01 11:00,2026-01-01 12:00)');`;

/** Writes the recorded database refuses, each for one of its rules. */
const REFUSED = [
  `INSERT INTO rules.events VALUES (9, '2025-05-01', 'a', 0)`,
  `INSERT INTO rules.orders VALUES (9, 'lost', 'c@x', 1, NULL)`,
  `INSERT INTO rules.orders VALUES (9, 'new', 'nobody', 1, NULL)`,
  `INSERT INTO rules.orders VALUES (9, 'new', 'c@x', -1, NULL)`,
  `INSERT INTO rules.orders VALUES (9, 'new', 'c@x', 1, 'toolong')`,
  `INSERT INTO rules.orders VALUES (9, 'new', 'c@x', 1, 'bad')`,
  `INSERT INTO rules.child VALUES (9, 0, 'x')`,
  `INSERT INTO rules.bookings VALUES (9, 1, '[2026-01-01 10:30,2026-01-01 10:45)')`,
  `INSERT INTO rules.events VALUES (6, '2021-01-01', 'k', 3)`,
];

/** Where rows land: the partition of each. */
const ROUTED = `SELECT tableoid::regclass::text AS part, id FROM rules.events ORDER BY id`;

let source: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
let pre: DbSnapshot;
let post: DbSnapshot;
let refusals: string[] = [];
let routed: unknown[] = [];

/** Runs each statement in its own savepoint: the constraint each is refused by, or 'accepted'. */
async function refusalsOf(query: (sql: string) => Promise<unknown>): Promise<string[]> {
  const out: string[] = [];
  for (const sql of REFUSED) {
    await query('BEGIN');
    try {
      await query(sql);
      out.push('accepted');
    } catch (error) {
      out.push(/constraint "([^"]+)"/.exec((error as Error).message)?.[1] ?? (error as Error).message);
    } finally {
      await query('ROLLBACK');
    }
  }
  return out;
}

beforeAll(async () => {
  if (!ADMIN) return;
  source = await scratchDatabase(ADMIN, 'worlds2_', WORLD);
  const client = new pg.Client({ connectionString: source.url });
  await client.connect();
  try {
    pre = (await snapshotDatabase(client, ['rules'])).snapshot;
    await client.query(RUN);
    post = (await snapshotDatabase(client, ['rules'])).snapshot;
    refusals = await refusalsOf((sql) => client.query(sql));
    routed = (await client.query(ROUTED)).rows;
  } finally {
    await client.end();
  }
}, 120_000);

afterAll(async () => source?.drop());

describe.runIf(ADMIN)('a world of partitions, checks and exclusions recorded from a server', () => {
  it('describes them as data, and names nothing of them as unbuilt', () => {
    expect(refusals).toEqual([
      'events_qty',
      'orders_status',
      'orders_email',
      'orders_total',
      'Note length',
      'Note length',
      'base_n',
      'no_overlap',
      'events_old_kind_own',
    ]);
    const events = pre.tables.find((t) => t.name === 'events');
    expect(events?.partitionBy).toEqual({ strategy: 'range', columns: ['at'] });
    expect(events?.partitions?.map((p) => [p.name, p.of.name, p.bound.kind, p.partitionBy?.strategy])).toEqual([
      ['events_2025', 'events', 'range', 'list'],
      ['events_old', 'events', 'range', undefined],
      ['events_2025_ab', 'events_2025', 'list', undefined],
      ['events_2025_rest', 'events_2025', 'default', undefined],
    ]);
    expect(pre.tables.find((t) => t.name === 'orders')?.checks?.map((c) => c.name)).toEqual([
      'Note length',
      'orders_email',
      'orders_status',
      'orders_total',
    ]);
    expect(pre.unbuilt ?? []).toEqual([]);
    // A partition's own index is its own; the copies of its parent's index are not described twice.
    expect(events?.indexes?.map((i) => i.name)).toEqual(['events_by_qty']);
    expect(events?.partitions?.flatMap((p) => (p.indexes ?? []).map((i) => [p.name, i.name, i.unique]))).toEqual([
      ['events_old', 'events_old_kind_own', true],
    ]);
  });
});

describe.runIf(ADMIN).each(sandboxPaths(['rules']))('that world through $name', ({ open, skip }) => {
  let db: SeededDatabase | undefined;
  beforeAll(async () => {
    if (!skip) db = await open(pre);
  }, 120_000);
  afterAll(async () => db?.close());

  it.skipIf(skip)('is built with the same rules, lacking nothing, holding every row', async () => {
    const sandbox = db as SeededDatabase;
    expect(sandbox.lacks).toEqual([]);
    const read = await sandbox.read();
    const rules = (s: DbSnapshot) =>
      s.tables.map((t) => [t.name, t.partitionBy, t.partitions, t.checks, t.exclusions, t.rows]);
    expect(rules(read)).toEqual(rules(pre));
  });

  it.skipIf(skip)('refuses the rows the recorded database refuses', async () => {
    const sandbox = db as SeededDatabase;
    expect(await refusalsOf((sql) => sandbox.query(sql))).toEqual(refusals);
  });

  it.skipIf(skip)(
    "routes the recorded run's rows to the same partitions and ends at the recorded end state",
    async () => {
      const sandbox = db as SeededDatabase;
      await sandbox.apply(changesBetween(pre, post));
      const read = await sandbox.read();
      expect(read.tables.map((t) => [t.name, t.rows])).toEqual(post.tables.map((t) => [t.name, t.rows]));
      expect(await sandbox.query(ROUTED)).toEqual(routed);
    },
  );
});

describe("pgvector's approximate indexes", () => {
  it('are rebuilt with their method, operator class and parameters (PGlite with pgvector)', async () => {
    const extensions = { extensions: [{ name: 'vector', schema: 'public' }] };
    const origin = await PGlite.create({ extensions: (await pgliteExtensions(extensions)) as Extensions });
    let snapshot: DbSnapshot;
    try {
      await origin.exec(`CREATE EXTENSION vector; CREATE SCHEMA app;
        CREATE TABLE app.items (id int PRIMARY KEY, embedding vector(3));
        CREATE INDEX items_hnsw ON app.items USING hnsw (embedding vector_cosine_ops) WITH (m = 8, ef_construction = 32);
        CREATE INDEX items_ivf ON app.items USING ivfflat (embedding vector_l2_ops) WITH (lists = 2);
        INSERT INTO app.items VALUES (1, '[1,2,3]'), (2, '[3,2,1]');`);
      snapshot = (await snapshotDatabase(origin, ['app'])).snapshot;
    } finally {
      await origin.close();
    }
    const indexes = snapshot.tables[0]?.indexes;
    expect(indexes?.map((i) => [i.name, i.method, i.opclasses?.[0]?.name, i.options])).toEqual([
      ['items_hnsw', 'hnsw', 'vector_cosine_ops', { m: 8, ef_construction: 32 }],
      ['items_ivf', 'ivfflat', undefined, { lists: 2 }],
    ]);
    const db = await openDbSandbox(snapshot, { kind: 'pglite' });
    try {
      expect(db.lacks).toEqual([]);
      const built = await db.query(
        `SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = 'app' AND indexname <> 'items_pkey' ORDER BY 1`,
      );
      expect(built.map((r) => r.def)).toEqual([
        expect.stringMatching(/USING hnsw \(embedding vector_cosine_ops\) WITH \(m='8', ef_construction='32'\)$/),
        // vector_l2_ops is ivfflat's default operator class: Postgres names none.
        expect.stringMatching(/USING ivfflat \(embedding\) WITH \(lists='2'\)$/),
      ]);
    } finally {
      await db.close();
    }
  }, 120_000);
});

describe('a rule a sandbox cannot build', () => {
  it('is one line of its lacks, and the rest is built', async () => {
    const snapshot: DbSnapshot = {
      schemas: ['app'],
      ddl: [],
      sequences: [],
      tables: [
        {
          schema: 'app',
          name: 't',
          columns: [{ name: 'label', type: 'text', nullable: true }],
          primaryKey: [],
          // text > integer: no such operator, so the check fails to build.
          checks: [{ name: 'odd', expression: { op: '>', args: [{ column: 'label' }, { value: 1 }] } }],
          rows: [{ label: 'a' }],
        },
      ],
    };
    const db = await openDbSandbox(snapshot, { kind: 'pglite' });
    try {
      expect(db.lacks).toEqual([expect.stringMatching(/^check odd of app\.t \(not built: operator does not exist/)]);
      expect(await db.query('SELECT label FROM app.t')).toEqual([{ label: 'a' }]);
    } finally {
      await db.close();
    }
  }, 60_000);
});
