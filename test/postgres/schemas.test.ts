// Worlds with other schemas: several non-public schemas, arrays, jsonb, composite and missing
// primary keys, identity and serial columns, stored generated columns, foreign keys with ON DELETE
// CASCADE. The sandbox is built from the snapshot's description (never from recorded SQL): each
// path (PGlite in-process, PGlite over its socket, a server's template sandbox) holds the recorded
// rows, computes generated columns again for the agent's own writes, takes recorded changes that
// carry generated values, and cascades deletes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotDatabase } from '../../src/postgres/index.js';
import type { DbChangedPayload, DbSnapshot, Recording, Row } from '../../src/recording/index.js';
import { unbuiltDatabaseWarning } from '../../src/replay/setup.js';
import { type SeededDatabase, sandboxPaths } from './sandbox-paths.js';

const tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-schemas-'));
process.env.TAPEDECK_STATE_DIR ??= path.join(tmp, 'state');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SCHEMAS = ['audit', 'shop'];
const SETUP = `
  CREATE SCHEMA shop; CREATE SCHEMA audit;
  CREATE TABLE shop.orders (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, customer text NOT NULL,
    tags text[] NOT NULL DEFAULT '{}', meta jsonb);
  CREATE TABLE shop.order_line (
    order_id int REFERENCES shop.orders (id) ON DELETE CASCADE, line_no int, sku text, qty int,
    price numeric(10,2) DEFAULT 5,
    total numeric GENERATED ALWAYS AS (qty * price) STORED,
    label text GENERATED ALWAYS AS (upper(sku) || ' x' || qty::text) STORED,
    weight numeric GENERATED ALWAYS AS (round(coalesce(price, 0) / 3, 2) - -1) STORED,
    band text GENERATED ALWAYS AS (CASE WHEN qty > 2 THEN 'bulk' ELSE 'single' END) STORED,
    PRIMARY KEY (order_id, line_no));
  CREATE TABLE audit.event (id bigserial PRIMARY KEY, kind text, data jsonb);
  CREATE TABLE audit.log (msg text, at int);
  CREATE TYPE shop.status AS ENUM ('open', 'shipped');
  CREATE TABLE shop.shipment (id int PRIMARY KEY, state shop.status NOT NULL, weight int CHECK (weight > 0),
    history shop.status[], CONSTRAINT shipment_label CHECK (to_char(weight, '999') <> ''));
  CREATE VIEW shop.open_lines AS SELECT order_id, sku FROM shop.order_line WHERE qty > 0;
  CREATE FUNCTION audit.log_line() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN INSERT INTO audit.log VALUES (NEW.sku, NEW.qty); RETURN NEW; END $$;
  CREATE TRIGGER order_line_audit AFTER INSERT ON shop.order_line FOR EACH ROW EXECUTE FUNCTION audit.log_line();
  INSERT INTO shop.orders (customer, tags, meta) VALUES ('ann', '{vip,eu}', '{"tier": 2}'), ('bob', '{}', NULL);
  INSERT INTO shop.order_line (order_id, line_no, sku, qty) VALUES (1, 1, 'a1', 2), (1, 2, 'b2', 3), (2, 1, 'c3', 1);
  INSERT INTO audit.event (kind, data) VALUES ('seed', '{"n": 1}');
  INSERT INTO audit.log VALUES ('hello', 1), ('hello', 1);
  INSERT INTO shop.shipment VALUES (1, 'open', 3, '{open,shipped}');`;

/** The recorded run: a tool API's writes, which a replay applies as recorded changes. */
const MUTATE = `
  INSERT INTO shop.order_line (order_id, line_no, sku, qty, price) VALUES (2, 2, 'd4', 4, 2.50);
  UPDATE shop.order_line SET qty = 5 WHERE order_id = 1 AND line_no = 1;
  INSERT INTO audit.log VALUES ('bye', 2);`;

const table = (snapshot: DbSnapshot, schema: string, name: string) =>
  snapshot.tables.find((t) => t.schema === schema && t.name === name);
const row = (snapshot: DbSnapshot, key: Row) =>
  table(snapshot, 'shop', 'order_line')?.rows.find((r) => r.order_id === key.order_id && r.line_no === key.line_no);

let pre: DbSnapshot;
let post: DbSnapshot;
/** What the source database computes for a row the agent inserts itself. */
let computed: Row;

beforeAll(async () => {
  const source = await PGlite.create();
  try {
    await source.exec(SETUP);
    pre = (await snapshotDatabase(source, SCHEMAS)).snapshot;
    await source.exec(MUTATE);
    post = (await snapshotDatabase(source, SCHEMAS)).snapshot;
    const { rows } = await source.query<{ r: Row }>(
      `INSERT INTO shop.order_line (order_id, line_no, sku, qty, price) VALUES (1, 9, 'z9', 7, 1.25)
       RETURNING to_jsonb(order_line.*) - 'band' AS r`,
    );
    computed = (rows[0] as { r: Row }).r;
  } finally {
    await source.close();
  }
}, 60_000);

describe('the description of a schema with generated columns', () => {
  it('keeps each stored generated column with its expression as data, or null outside the grammar', () => {
    const columns = Object.fromEntries(
      (table(pre, 'shop', 'order_line')?.columns ?? []).map((c) => [c.name, c.generated]),
    );
    expect(columns.total).toEqual({
      op: '*',
      args: [{ cast: 'numeric', arg: { column: 'qty' } }, { column: 'price' }],
    });
    expect(columns.label).toMatchObject({ op: '||' });
    expect(columns.weight).toMatchObject({ op: '-' });
    expect(columns.band).toBeNull();
    expect(columns.sku).toBeUndefined();
    expect(pre.enums).toEqual([{ schema: 'shop', name: 'status', labels: ['open', 'shipped'] }]);
    const shipment = table(pre, 'shop', 'shipment')?.columns ?? [];
    expect(shipment.filter((c) => c.enum).map((c) => [c.name, c.type, c.enum])).toEqual([
      ['state', 'shop.status', { schema: 'shop', name: 'status' }],
      ['history', 'shop.status[]', { schema: 'shop', name: 'status' }],
    ]);
    // The rows hold every column, generated ones too.
    expect(row(pre, { order_id: 1, line_no: 2 })).toMatchObject({ total: '15.00', label: 'B2 x3', band: 'bulk' });
  });
});

describe('what a sandbox does not rebuild', () => {
  it('is named in the description, and a replay says so before the agent runs', () => {
    expect(pre.unbuilt).toEqual([
      { kind: 'check', schema: 'shop', name: 'shipment_label', table: 'shipment' },
      { kind: 'function', schema: 'audit', name: 'log_line' },
      { kind: 'trigger', schema: 'shop', name: 'order_line_audit', table: 'order_line' },
      { kind: 'view', schema: 'shop', name: 'open_lines' },
    ]);
    const warning = unbuiltDatabaseWarning({ pre: { db: pre } } as unknown as Recording);
    expect(warning).toContain('lacks check shop.shipment_label on shop.shipment, function audit.log_line');
    // A check within the expression grammar is built, not named.
    expect(table(pre, 'shop', 'shipment')?.checks).toEqual([
      { name: 'shipment_weight_check', expression: { op: '>', args: [{ column: 'weight' }, { value: 0 }] } },
    ]);
    expect(warning).toContain('trigger shop.order_line_audit on shop.order_line, view shop.open_lines');
    expect(warning).toMatch(/rows its triggers wrote .* missing from the end state/);
    expect(
      unbuiltDatabaseWarning({ pre: { db: { ...pre, unbuilt: undefined } } } as unknown as Recording),
    ).toBeUndefined();
  });
});

const PATHS = sandboxPaths(SCHEMAS);

describe.each(PATHS)('a sandbox of that schema through $name', ({ open, skip }) => {
  let db: SeededDatabase | undefined;
  beforeAll(async () => {
    if (!skip) db = await open(pre);
  }, 60_000);
  afterAll(async () => db?.close());

  it.skipIf(skip)('holds every recorded row, generated values and rows without a key included', async () => {
    const read = await (db as NonNullable<typeof db>).read();
    expect(read.tables.map((t) => [t.schema, t.name, t.rows])).toEqual(
      pre.tables.map((t) => [t.schema, t.name, t.rows]),
    );
  });

  it.skipIf(skip)('applies recorded changes that carry generated values, to the recorded end state', async () => {
    const sandbox = db as NonNullable<typeof db>;
    const changes: DbChangedPayload[] = [
      {
        schema: 'shop',
        table: 'order_line',
        op: 'insert',
        key: { order_id: 2, line_no: 2 },
        after: row(post, { order_id: 2, line_no: 2 }) as Row,
      },
      {
        schema: 'shop',
        table: 'order_line',
        op: 'update',
        key: { order_id: 1, line_no: 1 },
        after: row(post, { order_id: 1, line_no: 1 }) as Row,
      },
      // The row the application's trigger wrote on the insert: captured, and applied, like any other.
      { schema: 'audit', table: 'log', op: 'insert', key: { msg: 'd4', at: 4 }, after: { msg: 'd4', at: 4 } },
      { schema: 'audit', table: 'log', op: 'insert', key: { msg: 'bye', at: 2 }, after: { msg: 'bye', at: 2 } },
    ];
    await sandbox.apply(changes);
    const read = await sandbox.read();
    expect(read.tables.map((t) => t.rows)).toEqual(post.tables.map((t) => t.rows));
  });

  it.skipIf(skip)('computes generated columns for the agent’s own rows and cascades deletes', async () => {
    const sandbox = db as NonNullable<typeof db>;
    const [inserted] = await sandbox.query(
      `INSERT INTO shop.order_line (order_id, line_no, sku, qty, price) VALUES (1, 9, 'z9', 7, 1.25)
       RETURNING order_id, line_no, sku, qty, price::text AS price, total::text AS total, label, weight::text AS weight, band`,
    );
    expect(inserted).toEqual({
      ...computed,
      price: '1.25',
      total: String(computed.total),
      weight: String(computed.weight),
      // Outside the expression grammar: a plain column, left empty rather than missing.
      band: null,
    });
    // The enum is a type of its own, its labels in their order.
    await sandbox.query(`INSERT INTO shop.shipment VALUES (2, 'shipped'::shop.status, 1), (3, 'open', 2)`);
    expect(await sandbox.query('SELECT id FROM shop.shipment ORDER BY state DESC, id')).toEqual([
      { id: 2 },
      { id: 1 },
      { id: 3 },
    ]);
    await expect(sandbox.query(`INSERT INTO shop.shipment VALUES (4, 'lost', 1)`)).rejects.toThrow(/enum/);
    await sandbox.query('DELETE FROM shop.orders WHERE id = 1');
    expect(await sandbox.query('SELECT count(*)::int AS n FROM shop.order_line WHERE order_id = 1')).toEqual([
      { n: 0 },
    ]);
  });
});
