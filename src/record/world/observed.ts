// Observed world capture (`world: 'observed'`): what a run itself read and wrote through its own
// pg clients, and nothing else — safe on a production database. No DDL, no trigger, no temporary
// object, no full-table read. A write (INSERT/UPDATE/DELETE) gets a RETURNING clause that hands
// back the row after it and, looked up by key in the statement's own snapshot, the row before
// it (the agent sees its result without them); a read's rows are read again by primary key on
// tapedeck's own connection. Changes count once their transaction commits. At the end, the run's
// pre-world is the first image of every row it touched (plus the rows its writes reference), its
// post-world that plus its own changes: a sandbox seeded from the pre-world and the catalog's
// schema description replays it.
//
// One patch of pg.Client.prototype.query serves every concurrent run: a statement belongs to the
// run whose async context issued it; outside any run it passes through untouched.
import { AsyncResource } from 'node:async_hooks';
import { createRequire } from 'node:module';
import path from 'node:path';
import type pg from 'pg';
import { describeSequences, describeTables, redactDbUrl, renderDdl } from '../../postgres/index.js';
import {
  canonicalJson,
  type DbChangedPayload,
  type DbSequence,
  type DbSnapshot,
  type DbTable,
  type Row,
  sortRows,
} from '../../recording/index.js';
import { type Catalog, type CatalogTable, keyOf, readCatalog } from './observed-catalog.js';
import { planStatement, type StatementPlan, withReturning } from './sql-plan.js';

const AFTER = '__tapedeck_after';
const BEFORE = '__tapedeck_before';

/** Limits of one run's observation (memory stays bounded whatever the run does). */
export interface ObservedLimits {
  /** Rows kept as images; past it, more rows are not observed and the recording says so. */
  maxRows?: number;
}

interface Observation {
  /** The statement (in run order) that observed the row. */
  seq: number;
  /** The row, or null when it did not exist (first touched by an insert). */
  row: Row | null;
  /** A write's before-image (exact as of its statement), or a keyed read made after the statement. */
  source: 'before' | 'read';
  /** For a read: the run's statement count when the keyed read came back. */
  readAt: number;
}

interface TouchedTable {
  table: CatalogTable;
  images: Map<string, Observation>;
}

interface DbIdentity {
  key: string;
  url: string;
  params: pg.ClientConfig;
}

/** One run's observations. Created by record(); fed by the pg patch; finished into snapshots. */
export class ObservedRun {
  private seq = 0;
  private rows = 0;
  private readonly touched = new Map<number, TouchedTable>();
  private readonly committed: DbChangedPayload[] = [];
  private readonly pending = new Set<Promise<void>>();
  /** Statements the run made that observed capture cannot follow, by kind (shown in the manifest). */
  readonly unobserved = new Map<string, number>();
  database: DbIdentity | undefined;

  constructor(
    /** Hands committed changes to the recording session (as a `database changes` step). */
    private readonly emit: (changes: DbChangedPayload[]) => void,
    private readonly limits: ObservedLimits = {},
  ) {}

  nextSeq(): number {
    return ++this.seq;
  }

  get statementCount(): number {
    return this.seq;
  }

  note(kind: string): void {
    this.unobserved.set(kind, (this.unobserved.get(kind) ?? 0) + 1);
  }

  /** Records the first image of a row (later images of the same row are ignored unless earlier). */
  observe(table: CatalogTable, row: Row | null, key: Row, observation: Omit<Observation, 'row'>): void {
    let touched = this.touched.get(table.oid);
    if (touched === undefined) {
      touched = { table, images: new Map() };
      this.touched.set(table.oid, touched);
    }
    const id = canonicalJson(key);
    const current = touched.images.get(id);
    if (current !== undefined && !prefer({ ...observation, row }, current)) return;
    if (current === undefined) {
      if (this.rows >= (this.limits.maxRows ?? 50_000)) {
        this.note('rows past the limit');
        return;
      }
      this.rows++;
    }
    touched.images.set(id, { ...observation, row });
  }

  /** Changes of one committed transaction (or one statement outside a transaction), in order. */
  commit(changes: Array<{ table: CatalogTable; change: DbChangedPayload }>): void {
    if (changes.length === 0) return;
    for (const { table } of changes)
      if (!this.touched.has(table.oid)) this.touched.set(table.oid, { table, images: new Map() });
    const list = changes.map((c) => c.change);
    this.committed.push(...list);
    this.emit(list);
  }

  track(work: Promise<void>): void {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work));
  }

  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  touchedTables(): TouchedTable[] {
    return [...this.touched.values()];
  }

  get changes(): readonly DbChangedPayload[] {
    return this.committed;
  }
}

/**
 * Which of two observations of one row is its pre-run image: a write's before-image is exact as
 * of its statement; a keyed read is no earlier than when it came back, which may be after the
 * run's own write of the row — then the write's before-image is the earlier truth.
 */
function prefer(candidate: Observation, current: Observation): boolean {
  const valueAt = (o: Observation) => (o.source === 'before' ? o.seq : o.readAt);
  return valueAt(candidate) < valueAt(current);
}

// ------------------------------------------------------------------ the pg patch

type QueryFn = (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) => unknown;
type ConnectFn = (this: pg.Pool, callback?: unknown) => unknown;
interface PgModule {
  Client: { prototype: { query: QueryFn } };
  Pool: (new (config: pg.PoolConfig) => pg.Pool) & { prototype: { connect: ConnectFn } };
}

interface Database {
  identity: DbIdentity;
  pool: pg.Pool;
  catalog: Catalog | undefined;
  /** When the catalog was read (a statement naming a table it lacks reads it again, at most once a second). */
  loadedAt: number;
  loading: Promise<Catalog> | undefined;
}

// Databases the process's runs talked to: tapedeck's connection (a small pool that closes when
// idle) and the catalog, kept across runs.
const databases = new Map<string, Database>();

interface TxChange {
  run: ObservedRun;
  table: CatalogTable;
  change: DbChangedPayload;
}

const kOwn = Symbol('tapedeck.own-client');
const kTx = Symbol('tapedeck.tx');
const kGate = Symbol('tapedeck.gate');

type Tagged = pg.Client & { [kOwn]?: true; [kTx]?: TxChange[]; [kGate]?: Promise<unknown>; _txStatus?: string | null };

export interface PgObserver {
  /** The run's snapshots and manifest part, once its keyed reads have finished (undefined: no database traffic). */
  finish(run: ObservedRun): Promise<ObservedWorld | undefined>;
  /** Puts pg's query back. */
  dispose(): void;
}

export interface ObservedWorld {
  pre: DbSnapshot;
  post: DbSnapshot;
  url: string;
  schemas: string[];
}

/**
 * Patches pg's Client.prototype.query in tapedeck's own pg and in the one `cwd` resolves (when
 * another copy). `runOf()` names the run of the current async context; `outside(fn)` runs fn
 * outside every run (tapedeck's own queries and timers must not count as the agent's).
 */
export async function installPgObserver(options: {
  cwd: string;
  runOf: () => ObservedRun | undefined;
  outside: <T>(fn: () => T) => T;
}): Promise<PgObserver> {
  const modules = await pgModules(options.cwd);
  const undo: Array<() => void> = [];
  const plans = new Map<string, StatementPlan>();
  const planOf = (text: string): StatementPlan => {
    let plan = plans.get(text);
    if (plan === undefined) {
      plan = planStatement(text);
      if (plans.size > 2000) plans.clear();
      plans.set(text, plan);
    }
    return plan;
  };
  const OwnPool = modules[0]?.Pool;
  if (OwnPool === undefined) return { finish: async () => undefined, dispose: () => {} };

  const databaseOf = (client: Tagged): Database => {
    const p = (client as unknown as { connectionParameters: pg.ClientConfig & { host: string } }).connectionParameters;
    const key = `${p.user}@${p.host}:${p.port}/${p.database}`;
    let db = databases.get(key);
    if (db === undefined) {
      const params: pg.ClientConfig = {
        user: p.user,
        host: p.host,
        port: p.port,
        database: p.database,
        ...(p.password === undefined ? {} : { password: p.password }),
        ...(p.ssl === undefined ? {} : { ssl: p.ssl }),
      };
      const pool = options.outside(
        () =>
          new OwnPool({
            ...params,
            max: 2,
            idleTimeoutMillis: 5_000,
            allowExitOnIdle: true,
            application_name: 'tapedeck-observe',
          }),
      );
      pool.on('connect', (c) => {
        (c as Tagged)[kOwn] = true;
      });
      pool.on('error', () => {});
      const host = String(p.host ?? 'localhost');
      db = {
        identity: {
          key,
          url: redactDbUrl(
            `postgres://${encodeURIComponent(String(p.user ?? ''))}@${host.startsWith('/') ? 'localhost' : host}:${p.port ?? 5432}/${encodeURIComponent(String(p.database ?? ''))}`,
          ),
          params,
        },
        pool,
        catalog: undefined,
        loadedAt: 0,
        loading: undefined,
      };
      databases.set(key, db);
    }
    return db;
  };

  const loadCatalog = (db: Database): Promise<Catalog> => {
    db.loading ??= options
      .outside(() => readCatalog(db.pool as unknown as Parameters<typeof readCatalog>[0]))
      .then((catalog) => {
        db.catalog = catalog;
        db.loadedAt = performance.now();
        db.loading = undefined;
        return catalog;
      })
      .catch((error: unknown) => {
        db.loading = undefined;
        throw error;
      });
    return db.loading;
  };

  for (const mod of modules) {
    const proto = mod.Client.prototype;
    const real = proto.query;
    const patched: QueryFn = function query(this: Tagged, config, values, callback) {
      const run = (this as Tagged)[kOwn] ? undefined : options.runOf();
      if (run === undefined || config === null || config === undefined)
        return real.call(this, config, values, callback);
      if (typeof (config as { submit?: unknown }).submit === 'function') {
        run.note('query objects (cursors, streams)');
        return real.call(this, config, values, callback);
      }
      const text = typeof config === 'string' ? config : (config as { text?: unknown }).text;
      if (typeof text !== 'string') return real.call(this, config, values, callback);
      let cb = callback;
      let vals = values;
      if (typeof vals === 'function') {
        cb = vals;
        vals = undefined;
      }
      const plan = planOf(text);
      const db = databaseOf(this);
      run.database ??= db.identity;
      const go = (catalog: Catalog | undefined) => execute(this, run, db, catalog, real, config, text, vals, plan);
      let promise: Promise<unknown>;
      // A write to a table the catalog does not know (made since it was read) reads it again.
      const stale =
        db.catalog !== undefined &&
        plan.table !== undefined &&
        db.catalog.resolve(plan.table) === undefined &&
        performance.now() - db.loadedAt > 1000;
      // The first statements on a database wait for its catalog; later ones on the same client
      // keep their order behind them.
      if (db.catalog === undefined || stale || this[kGate] !== undefined) {
        const gate = (this[kGate] ?? Promise.resolve())
          .then(() => (db.catalog === undefined || stale ? loadCatalog(db).catch(() => db.catalog) : db.catalog))
          .then((catalog) => go(catalog));
        const settled = gate
          .catch(() => undefined)
          .then(() => {
            if (this[kGate] === settled) delete this[kGate];
          });
        this[kGate] = settled;
        promise = gate;
      } else promise = go(db.catalog);
      if (typeof cb === 'function') {
        promise.then(
          (result) => (cb as (e: unknown, r: unknown) => void)(null, result),
          (error) => (cb as (e: unknown) => void)(error),
        );
        return undefined;
      }
      return promise;
    };
    proto.query = patched;
    undo.push(() => {
      if (proto.query === patched) proto.query = real;
    });
    // pool.query(): the pool hands the client over through a callback, which a busy pool calls
    // from another session's release(): bound here, the statement stays with the run that asked.
    const poolProto = mod.Pool.prototype;
    const ownConnect = Object.hasOwn(poolProto, 'connect');
    const realConnect = poolProto.connect;
    const connect: ConnectFn = function connect(this: pg.Pool, callback) {
      const bound =
        typeof callback === 'function' && options.runOf() !== undefined
          ? AsyncResource.bind(callback as (...args: unknown[]) => unknown)
          : callback;
      return realConnect.call(this, bound);
    };
    poolProto.connect = connect;
    undo.push(() => {
      if (poolProto.connect !== connect) return;
      if (ownConnect) poolProto.connect = realConnect;
      else delete (poolProto as { connect?: ConnectFn }).connect;
    });
  }

  /** Runs one statement of a run: rewritten to capture its changes where it is a write. */
  async function execute(
    client: Tagged,
    run: ObservedRun,
    db: Database,
    catalog: Catalog | undefined,
    real: QueryFn,
    config: unknown,
    text: string,
    values: unknown,
    plan: StatementPlan,
  ): Promise<unknown> {
    const seq = run.nextSeq();
    let table: CatalogTable | undefined;
    let sql = text;
    let added = 0;
    if (plan.kind === 'insert' || plan.kind === 'update' || plan.kind === 'delete') {
      table = plan.table ? catalog?.resolve(plan.table) : undefined;
      if (table !== undefined && catalog !== undefined && table.readable && plan.ref !== undefined) {
        const items: string[] = [];
        if (plan.kind !== 'delete') items.push(`${catalog.rowJson(table, plan.ref)} AS ${AFTER}`);
        const before =
          plan.kind === 'delete'
            ? catalog.rowJson(table, plan.ref)
            : plan.kind === 'update' || plan.upsert
              ? catalog.beforeJson(table, plan.ref)
              : undefined;
        if (before !== undefined) items.push(`${before} AS ${BEFORE}`);
        sql = withReturning(text, plan, items.join(', '));
        added = items.length;
      } else {
        run.note(table === undefined ? 'writes to tables not in the catalog' : 'writes to tables it may not read');
        table = undefined;
      }
    } else if (plan.kind === 'unobserved-write')
      run.note('writes it cannot follow (WITH, MERGE, COPY, several statements)');
    else if (plan.kind === 'savepoint') run.note('savepoints');
    // A named (prepared) statement is rewritten under its own name: pg refuses one name for two texts.
    const named = typeof config === 'object' ? (config as { name?: unknown }).name : undefined;
    const finalConfig =
      sql === text
        ? config
        : typeof config === 'string'
          ? sql
          : { ...(config as object), text: sql, ...(typeof named === 'string' ? { name: `${named}__tapedeck` } : {}) };
    const arrayMode = typeof config === 'object' && (config as { rowMode?: string }).rowMode === 'array';
    let result: pg.QueryResult;
    try {
      result = (await real.call(client, finalConfig, values)) as pg.QueryResult;
    } catch (error) {
      settleTransaction(client, run, plan);
      throw error;
    }
    if (added > 0 && table !== undefined) takeChanges(client, run, table, plan, result, added, arrayMode, seq);
    else if (plan.kind === 'read' && catalog !== undefined && Array.isArray(result.rows) && result.rows.length > 0) {
      readAgain(run, db, catalog, result, arrayMode, seq);
    }
    settleTransaction(client, run, plan, result);
    return result;
  }

  /** Moves the captured images out of the result the agent gets, and queues the changes. */
  function takeChanges(
    client: Tagged,
    run: ObservedRun,
    table: CatalogTable,
    plan: StatementPlan,
    result: pg.QueryResult,
    added: number,
    arrayMode: boolean,
    seq: number,
  ): void {
    const fields = result.fields ?? [];
    const width = fields.length;
    const afterAt = fields.findIndex((f) => f.name === AFTER);
    const beforeAt = fields.findIndex((f) => f.name === BEFORE);
    const tx = (client[kTx] ??= []);
    for (let i = 0; i < result.rows.length; i++) {
      const row = result.rows[i] as Record<string, unknown> | unknown[];
      const get = (name: string, at: number) =>
        (arrayMode ? (row as unknown[])[at] : (row as Record<string, unknown>)[name]) as Row | null | undefined;
      const after = afterAt >= 0 ? (get(AFTER, afterAt) ?? undefined) : undefined;
      const before = beforeAt >= 0 ? (get(BEFORE, beforeAt) ?? undefined) : undefined;
      const image = before ?? after;
      if (image === undefined) continue;
      const key = keyOf(table, image);
      const op: DbChangedPayload['op'] =
        plan.kind === 'delete' ? 'delete' : plan.kind === 'update' || before !== undefined ? 'update' : 'insert';
      run.observe(table, op === 'insert' ? null : (before ?? null), key, { seq, source: 'before', readAt: seq });
      tx.push({
        run,
        table,
        change: {
          schema: table.schema,
          table: table.name,
          op,
          key,
          ...(before === undefined ? {} : { before }),
          ...(after === undefined ? {} : { after }),
        },
      });
      // What the agent gets: its own RETURNING columns only.
      if (arrayMode) (row as unknown[]).splice(width - added, added);
      else {
        delete (row as Record<string, unknown>)[AFTER];
        delete (row as Record<string, unknown>)[BEFORE];
      }
    }
    result.fields = fields.slice(0, width - added);
    if (plan.returningAt === undefined || plan.returningAt < 0) {
      result.rows = [];
      result.fields = [];
    }
  }

  /** After each statement: outside a transaction, what it buffered committed (or rolled back). */
  function settleTransaction(client: Tagged, run: ObservedRun, plan: StatementPlan, result?: pg.QueryResult): void {
    const status = client._txStatus;
    const tx = client[kTx];
    if (status !== 'I' || tx === undefined || tx.length === 0) return;
    delete client[kTx];
    const rolledBack = plan.kind === 'rollback' || result?.command === 'ROLLBACK' || result === undefined;
    if (rolledBack) return;
    const byRun = new Map<ObservedRun, TxChange[]>();
    for (const c of tx) byRun.set(c.run, [...(byRun.get(c.run) ?? []), c]);
    for (const [owner, changes] of byRun) owner.commit(changes);
    void run;
  }

  /** The rows a read returned, read again in full by primary key on tapedeck's connection. */
  function readAgain(
    run: ObservedRun,
    db: Database,
    catalog: Catalog,
    result: pg.QueryResult,
    arrayMode: boolean,
    seq: number,
  ): void {
    const byTable = new Map<number, Array<{ name: string; at: number; column: string }>>();
    for (const [at, field] of (result.fields ?? []).entries()) {
      if (!field.tableID) continue;
      const table = catalog.tables.get(field.tableID);
      const column = table?.columns.find((c) => c.attnum === field.columnID);
      if (table === undefined || column === undefined) continue;
      const list = byTable.get(table.oid) ?? [];
      list.push({ name: field.name, at, column: column.name });
      byTable.set(table.oid, list);
    }
    let attributed = false;
    for (const [oid, fields] of byTable) {
      const table = catalog.tables.get(oid) as CatalogTable;
      const pk = table.primaryKey.map((c) => fields.find((f) => f.column === c));
      if (table.primaryKey.length === 0 || pk.some((f) => f === undefined) || !table.readable) continue;
      attributed = true;
      const keys = table.primaryKey.map((): unknown[] => []);
      const seen = new Set<string>();
      for (const row of result.rows as Array<Record<string, unknown> | unknown[]>) {
        const values = pk.map((f) =>
          arrayMode
            ? (row as unknown[])[(f as { at: number }).at]
            : (row as Record<string, unknown>)[(f as { name: string }).name],
        );
        if (values.some((v) => v === null || v === undefined)) continue;
        const id = JSON.stringify(values.map((v) => (v instanceof Date ? v.toISOString() : String(v))));
        if (seen.has(id)) continue;
        seen.add(id);
        for (const [i, v] of values.entries()) keys[i]?.push(v);
      }
      if (keys[0]?.length === 0) continue;
      run.track(
        options
          .outside(async () => {
            const read = await db.pool.query(catalog.keyedRead(table, table.primaryKey), keys);
            // As of when it came back: a write of the run issued before then may be in it.
            const readAt = run.statementCount;
            for (const { r } of read.rows as Array<{ r: Row }>) {
              run.observe(table, r, keyOf(table, r), { seq, source: 'read', readAt });
            }
          })
          .catch(() => run.note('rows it could not read again')),
      );
    }
    if (!attributed) run.note('reads without a primary key in their result (aggregates, partial columns)');
  }

  return {
    async finish(run) {
      await run.settled();
      const identity = run.database;
      if (identity === undefined) return undefined;
      const db = databases.get(identity.key);
      if (db === undefined || db.catalog === undefined) return undefined;
      return options.outside(() => buildWorld(run, db, db.catalog as Catalog));
    },
    dispose() {
      for (const u of undo) u();
    },
  };
}

/** tapedeck's own pg, and the user's when it is another copy. */
async function pgModules(cwd: string): Promise<PgModule[]> {
  const own = ((await import('pg')) as unknown as { default: PgModule }).default;
  const out: PgModule[] = [own];
  try {
    const resolved = createRequire(path.join(cwd, 'noop.js'))('pg') as PgModule;
    if (resolved.Client.prototype !== own.Client.prototype) out.push(resolved);
  } catch {
    // The agent has no pg of its own: tapedeck's is the one it uses, if any.
  }
  return out;
}

// ------------------------------------------------------------------ snapshots

/**
 * The run's worlds: the catalog's description of the schemas it touched; as rows, the first
 * image of every row it touched (pre) and those with its changes applied (post); the rows its
 * written rows reference are read by key, so the sandbox's foreign keys hold for its writes.
 */
async function buildWorld(run: ObservedRun, db: Database, catalog: Catalog): Promise<ObservedWorld | undefined> {
  const touched = run.touchedTables();
  if (touched.length === 0) return undefined;
  await readReferenced(run, db, catalog);
  const pre = new Map<number, Map<string, Row>>();
  for (const t of run.touchedTables()) {
    const rows = new Map<string, Row>();
    for (const [id, o] of t.images) if (o.row !== null) rows.set(id, o.row);
    pre.set(t.table.oid, rows);
  }
  const post = new Map([...pre].map(([oid, rows]) => [oid, new Map(rows)]));
  const oids = new Map(touched.map((t) => [`${t.table.schema}\u0000${t.table.name}`, t.table.oid]));
  const drawn = new Map<string, { min: number; max: number; increment: number }>();
  for (const change of run.changes) {
    const oid = oids.get(`${change.schema}\u0000${change.table}`);
    const rows = oid === undefined ? undefined : post.get(oid);
    if (rows === undefined || oid === undefined) continue;
    const id = canonicalJson(change.key);
    if (change.op === 'delete') rows.delete(id);
    else if (change.after) rows.set(id, change.after);
    if (change.op === 'insert' && change.after) {
      const table = catalog.tables.get(oid) as CatalogTable;
      for (const s of table.sequences) {
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
  }
  const schemas = [...new Set(run.touchedTables().map((t) => t.table.schema))].sort();
  const description = await describedSchemas(db, schemas);
  const snapshot = (rowsOf: Map<number, Map<string, Row>>, position: 'pre' | 'post'): DbSnapshot => {
    const tables: DbTable[] = description.tables.map(({ oid, ...t }) => ({
      ...t,
      rows: sortRows([...(rowsOf.get(oid)?.values() ?? [])], t.primaryKey),
    }));
    const sequences = description.sequences.map((s): DbSequence => {
      const d = drawn.get(`${s.schema}\u0000${s.name}`);
      if (d === undefined) return s;
      // Where the run found the sequence, and where it left it, as far as its own inserts show.
      const last = position === 'pre' ? d.min - d.increment : d.max;
      if (last < Number(s.min)) return { ...s, last: s.min, called: false };
      return { ...s, last: String(last), called: true };
    });
    const body = { schemas, tables, sequences };
    return { ...body, ddl: renderDdl(body) };
  };
  return { pre: snapshot(pre, 'pre'), post: snapshot(post, 'post'), url: db.identity.url, schemas };
}

/** Rows that rows the run wrote reference through foreign keys, read by key (one level: enough for its inserts to pass). */
async function readReferenced(run: ObservedRun, db: Database, catalog: Catalog): Promise<void> {
  const wanted = new Map<number, { columns: string[]; keys: Map<string, unknown[]> }>();
  for (const change of run.changes) {
    if (change.after === undefined) continue;
    const table = [...catalog.tables.values()].find((t) => t.schema === change.schema && t.name === change.table);
    for (const fk of table?.foreignKeys ?? []) {
      const values = fk.columns.map((c) => change.after?.[c]);
      if (values.some((v) => v === null || v === undefined)) continue;
      const target = catalog.tables.get(fk.refOid);
      if (target === undefined || !target.readable) continue;
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
    const read = await db.pool.query(catalog.keyedRead(table, columns), params);
    for (const { r } of read.rows as Array<{ r: Row }>) {
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

// The catalog's full description of a set of schemas changes rarely: read once a minute at most.
const descriptions = new Map<string, { at: number; value: Promise<Described> }>();
type Described = { tables: Array<DbTable & { oid: number }>; sequences: DbSequence[] };

async function describedSchemas(db: Database, schemas: string[]): Promise<Described> {
  const key = `${db.identity.key}\u0000${schemas.join('\u0000')}`;
  const cached = descriptions.get(key);
  if (cached !== undefined && Date.now() - cached.at < 60_000) return cached.value;
  const value = (async () => {
    const tables = await describeTables(db.pool, schemas);
    const sequences = await describeSequences(db.pool, schemas, { fromView: true });
    return { tables: tables.map((t) => ({ ...t, rows: [] })), sequences };
  })();
  descriptions.set(key, { at: Date.now(), value });
  value.catch(() => descriptions.delete(key));
  return value;
}
