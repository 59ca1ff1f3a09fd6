// The worlds of an observed run (`world: 'observed'`): the catalog's description of the schemas it
// touched, with the first image of every row it touched as the pre-world and those rows with its
// own changes applied as the post-world. Gathered here, in the request thread (it reads the
// database); assembled into snapshots by observed-snapshots.ts where the recording is written.
import type pg from 'pg';
import { describeObjects, describeSequences, describeTables, renderDdl } from '../../postgres/index.js';
import { canonicalJson, type Row } from '../../recording/index.js';
import { type Catalog, type CatalogTable, keyOf } from './observed-catalog.js';
import { type KeyedReads, onOneClient } from './observed-reads.js';
import type { DbIdentity, ObservedRun } from './observed-run.js';
import type { ObservedWorldFacts, SchemaDescription } from './observed-snapshots.js';

/** A database runs talked to, as snapshots need it: who it is, and tapedeck's own connection to it. */
export interface ObservedDatabase {
  identity: DbIdentity;
  pool: pg.Pool;
  /** Keyed reads on `pool`, coalesced across runs. */
  reads: KeyedReads;
}

export interface ObservedWorld {
  /** What the snapshots are assembled from (observedSnapshots), where the recording is written. */
  facts: ObservedWorldFacts;
  url: string;
  schemas: string[];
}

/**
 * What the run's worlds are made of: the catalog's description of the schemas it touched; the
 * first image of every row it touched; its changes, and the sequence values its inserts drew. The
 * rows its written rows reference are read by key first, so the sandbox's foreign keys hold for
 * its writes. The snapshots themselves are assembled from these where the recording is written.
 */
export async function buildWorld(
  run: ObservedRun,
  db: ObservedDatabase,
  catalog: Catalog,
): Promise<ObservedWorld | undefined> {
  // A run whose every write it could not follow still says so (its worlds then hold no rows).
  if (run.touchedTables().length === 0 && run.unobserved.size === 0) return undefined;
  await readReferenced(run, db, catalog);
  const touched = run.touchedTables();
  const images = touched.map(({ table, images }): [number, Array<[string, Row]>] => {
    const rows: Array<[string, Row]> = [];
    for (const [id, o] of images) if (o.row !== null) rows.push([id, o.row]);
    return [table.oid, rows];
  });
  const tables = new Map(touched.map((t) => [`${t.table.schema}\u0000${t.table.name}`, t.table]));
  const drawn = new Map<string, { min: number; max: number; increment: number }>();
  for (const change of run.changes) {
    if (change.op !== 'insert' || !change.after) continue;
    for (const s of tables.get(`${change.schema}\u0000${change.table}`)?.sequences ?? []) {
      const value = Number(change.after[s.column]);
      if (!Number.isFinite(value)) continue;
      const seqKey = `${s.schema}\u0000${s.name}`;
      const d = drawn.get(seqKey);
      drawn.set(seqKey, {
        min: Math.min(d?.min ?? value, value),
        max: Math.max(d?.max ?? value, value),
        increment: s.increment,
      });
    }
  }
  const schemas = [...new Set(touched.map((t) => t.table.schema))].sort();
  const description = await describedSchemas(db, schemas);
  return {
    facts: { description, schemas, images, changes: [...run.changes], drawn: [...drawn] },
    url: db.identity.url,
    schemas,
  };
}

/** Rows that rows the run wrote reference through foreign keys, read by key (one level: enough for its inserts to pass). */
async function readReferenced(run: ObservedRun, db: ObservedDatabase, catalog: Catalog): Promise<void> {
  const wanted = new Map<number, { columns: string[]; keys: Map<string, unknown[]> }>();
  for (const change of run.changes) {
    if (change.after === undefined) continue;
    const table = [...catalog.tables.values()].find((t) => t.schema === change.schema && t.name === change.table);
    for (const fk of table?.foreignKeys ?? []) {
      const values = fk.columns.map((c) => change.after?.[c]);
      if (values.some((v) => v === null || v === undefined)) continue;
      const target = catalog.tables.get(fk.refOid);
      if (target === undefined || !target.readable) continue;
      // A row the run already has an image of (it read or wrote it) or inserted itself is not read again.
      if (fk.refColumns.join('\u0000') === target.primaryKey.join('\u0000')) {
        const key: Row = {};
        for (const [i, c] of fk.refColumns.entries()) key[c] = values[i] as Row[string];
        if (run.hasImage(target, key)) continue;
      }
      const entry = wanted.get(target.oid) ?? { columns: fk.refColumns, keys: new Map() };
      if (entry.columns.join('\u0000') !== fk.refColumns.join('\u0000')) continue;
      entry.keys.set(JSON.stringify(values), values);
      wanted.set(target.oid, entry);
    }
  }
  const seq = run.nextSeq();
  for (const [oid, { columns, keys }] of wanted) {
    const table = catalog.tables.get(oid) as CatalogTable;
    const params = columns.map((_, i) => [...keys.values()].map((v) => v[i]));
    for (const r of await db.reads.read(catalog, table, columns, params)) {
      // A row the run itself inserted is not part of the world before it.
      const key = keyOf(table, r);
      const insertedByRun = run.changes.some(
        (c) =>
          c.op === 'insert' &&
          c.schema === table.schema &&
          c.table === table.name &&
          canonicalJson(c.key) === canonicalJson(key),
      );
      if (!insertedByRun)
        run.observe(table, r, key, { seq: Number.MAX_SAFE_INTEGER, source: 'read', readAt: Number.MAX_SAFE_INTEGER });
    }
  }
  void seq;
}

// The catalog's full description of a set of schemas changes rarely: read once a minute at most,
// and past the minute the last one serves while a fresh one is read (runs never wait for it).
const descriptions = new Map<string, { at: number; value: Promise<SchemaDescription>; refreshing?: boolean }>();

async function describedSchemas(db: ObservedDatabase, schemas: string[]): Promise<SchemaDescription> {
  const key = `${db.identity.key}\u0000${schemas.join('\u0000')}`;
  // Tens of catalog statements on one connection: they wait for the pool once, not behind every
  // run's keyed reads at each statement.
  const describe = () =>
    onOneClient(db.pool, async (client) => {
      const tables = (await describeTables(client, schemas)).map((t) => ({ ...t, rows: [] }));
      const sequences = await describeSequences(client, schemas, { fromView: true });
      const objects = await describeObjects(client, schemas, tables);
      return {
        tables,
        sequences,
        objects,
        ddl: renderDdl({ schemas, tables: tables.map(({ oid: _o, ...t }) => t), sequences, ...objects }),
      };
    });
  const cached = descriptions.get(key);
  if (cached !== undefined) {
    if (Date.now() - cached.at >= 60_000 && cached.refreshing !== true) {
      cached.refreshing = true;
      describe().then(
        (fresh) => descriptions.set(key, { at: Date.now(), value: Promise.resolve(fresh) }),
        () => {
          cached.refreshing = false;
        },
      );
    }
    return cached.value;
  }
  const value = describe();
  descriptions.set(key, { at: Date.now(), value });
  value.catch(() => descriptions.delete(key));
  return value;
}
