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
import { createRequire } from 'node:module';
import path from 'node:path';
import type pg from 'pg';
import { monotonicNow } from '../../../sandbox/preload/shared-clock.mjs';
import { redactDbUrl } from '../../postgres/index.js';
import { canonicalJson, type DbChangedPayload, type Row } from '../../recording/index.js';
import { type Catalog, type CatalogTable, keyOf, readCatalog } from './observed-catalog.js';
import { KeyedReads, onOneClient } from './observed-reads.js';
import { imagesFromText, writeImage } from './observed-result.js';
import type { ObservedRun } from './observed-run.js';
import { buildWorld, type ObservedDatabase, type ObservedWorld } from './observed-world.js';
import { planStatement, type StatementPlan, withOldRow, withReturning } from './sql-plan.js';

export { type ObservedLimits, ObservedRun } from './observed-run.js';
export type { ObservedWorld } from './observed-world.js';

const AFTER = '__tapedeck_after';
const BEFORE = '__tapedeck_before';
const TABLE = '__tapedeck_table';
const INSERTED = '__tapedeck_inserted';

// ------------------------------------------------------------------ the pg patch

type QueryFn = (this: pg.Client, config: unknown, values?: unknown, callback?: unknown) => unknown;
type ConnectFn = (this: pg.Pool, callback?: unknown) => unknown;
type ParseRowFn = (this: RawResult, rowData: unknown[]) => unknown;
/** pg's Result, as far as the raw-text capture needs it. */
interface RawResult {
  _types?: { [kRaw]?: unknown[][] };
}
interface PgModule {
  Client: { prototype: { query: QueryFn } };
  Result?: { prototype: { parseRow?: ParseRowFn; _parseRowAsArray?: ParseRowFn } };
  Pool: (new (config: pg.PoolConfig) => pg.Pool) & { prototype: { connect: ConnectFn } };
}

interface Database extends ObservedDatabase {
  catalog: Catalog | undefined;
  /** When the catalog was read (a statement naming a table it lacks reads it again, at most once a second). */
  loadedAt: number;
  loading: Promise<Catalog> | undefined;
}

// Databases the process's runs talked to: tapedeck's connection (a small pool that closes when
// idle) and the catalog, kept across runs.
const databases = new Map<string, Database>();
/** tapedeck's own connections to each database. */
const OWN_CONNECTIONS = 2;

interface TxChange {
  run: ObservedRun;
  table: CatalogTable;
  change: DbChangedPayload;
}

const kOwn = Symbol('tapedeck.own-client');
const kTx = Symbol('tapedeck.tx');
const kGate = Symbol('tapedeck.gate');
/** The connection's own search path (current_schemas), read when an unqualified write needs it. */
const kPath = Symbol('tapedeck.search-path');
/** A statement in the open transaction may have set the path (a ROLLBACK or COMMIT of SET LOCAL resets it). */
const kPathTx = Symbol('tapedeck.search-path-tx');
/** A statement that may change a connection's search path: SET/RESET/DISCARD (SET ROLE moves `$user`), set_config. */
const PATH_CHANGE = /search_path|^\s*(?:set|reset|discard)\b/i;
/** A statement that ends a transaction (a path set in it may revert). */
const TX_END = /^\s*(?:commit|end|rollback|abort|prepare\s+transaction)\b/i;
/** On the type parsers a read is given: the field texts of its rows, as the server sent them. */
const kRaw = Symbol('tapedeck.raw-rows');

type Tagged = pg.Client & {
  [kOwn]?: true;
  [kTx]?: TxChange[];
  [kGate]?: Promise<unknown>;
  [kPath]?: string[];
  [kPathTx]?: true;
  _txStatus?: string | null;
  _types?: { getTypeParser(oid: number, format?: string): unknown };
};

export interface PgObserver {
  /** The run's snapshots and manifest part, once its keyed reads have finished (undefined: no database traffic). */
  finish(run: ObservedRun): Promise<ObservedWorld | undefined>;
  /** Puts pg's query back. */
  dispose(): void;
}

/**
 * Patches pg's Client.prototype.query in tapedeck's own pg and in the one `cwd` resolves (when
 * another copy). `runOf()` names the run of the current async context; `outside(fn)` runs fn
 * outside every run (tapedeck's own queries and timers must not count as the agent's);
 * `bind(fn)` gives fn that runs in the current context's run, whoever calls it.
 */
export async function installPgObserver(options: {
  cwd: string;
  runOf: () => ObservedRun | undefined;
  outside: <T>(fn: () => T) => T;
  bind: <A extends unknown[], R>(fn: (...args: A) => R) => (...args: A) => R;
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
            max: OWN_CONNECTIONS,
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
        reads: new KeyedReads(pool, OWN_CONNECTIONS),
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
      .outside(() =>
        onOneClient(db.pool, (client) => readCatalog(client as unknown as Parameters<typeof readCatalog>[0])),
      )
      .then((catalog) => {
        db.catalog = catalog;
        db.loadedAt = monotonicNow();
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
    // A read's rows as the server sent them (its field texts), kept for the reads that carry the
    // marker: observed-result.ts turns them into images without reading the rows again.
    const resultProto = mod.Result?.prototype;
    let rawCapable = false;
    if (resultProto?.parseRow !== undefined && resultProto._parseRowAsArray !== undefined) {
      for (const name of ['parseRow', '_parseRowAsArray'] as const) {
        const realParse = resultProto[name] as ParseRowFn;
        const keep: ParseRowFn = function (this: RawResult, rowData) {
          this._types?.[kRaw]?.push(rowData);
          return realParse.call(this, rowData);
        };
        resultProto[name] = keep;
        undo.push(() => {
          if (resultProto[name] === keep) resultProto[name] = realParse;
        });
      }
      rawCapable = true;
    }
    const proto = mod.Client.prototype;
    const real = proto.query;
    const patched: QueryFn = function query(this: Tagged, config, values, callback) {
      const run = (this as Tagged)[kOwn] ? undefined : options.runOf();
      if (run === undefined || config === null || config === undefined) {
        pathMayChange(this, config);
        return real.call(this, config, values, callback);
      }
      if (typeof (config as { submit?: unknown }).submit === 'function') {
        run.note('query objects (cursors, streams)');
        pathMayChange(this, config);
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
      // A callback in the config (client.query({ text, callback })) is answered like one passed
      // as an argument: pg would call it and return nothing for tapedeck to read the result from.
      const ownCallback = typeof config === 'object' ? (config as { callback?: unknown }).callback : undefined;
      if (typeof ownCallback === 'function') {
        cb ??= ownCallback;
        config = withConfig(config, { callback: undefined });
      }
      const plan = planOf(text);
      const db = databaseOf(this);
      run.database ??= db.identity;
      const go = (catalog: Catalog | undefined) =>
        execute(this, run, db, catalog, real, config, text, vals, plan, rawCapable);
      let promise: Promise<unknown>;
      // A write naming its table unqualified: the connection's search path, read before it is sent.
      const needsPath = () => plan.table !== undefined && plan.table.schema === undefined && this[kPath] === undefined;
      // A write to a table the catalog does not know (made since it was read) reads it again.
      const stale =
        db.catalog !== undefined &&
        plan.table !== undefined &&
        db.catalog.resolve(plan.table, this[kPath]) === undefined &&
        monotonicNow() - db.loadedAt > 1000;
      // The first statements on a database wait for its catalog; later ones on the same client
      // keep their order behind them.
      if (db.catalog === undefined || stale || this[kGate] !== undefined || needsPath()) {
        const gate = (this[kGate] ?? Promise.resolve())
          .then(() => (db.catalog === undefined || stale ? loadCatalog(db).catch(() => db.catalog) : db.catalog))
          .then(async (catalog) => {
            if (needsPath()) await searchPathOf(this, real);
            return go(catalog);
          });
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
    // (Bound to the run alone, not through an AsyncResource: that cost an async resource a
    // statement, and would carry the agent's own async contexts where pg does not.)
    const poolProto = mod.Pool.prototype;
    const ownConnect = Object.hasOwn(poolProto, 'connect');
    const realConnect = poolProto.connect;
    const connect: ConnectFn = function connect(this: pg.Pool, callback) {
      const bound =
        typeof callback === 'function' && options.runOf() !== undefined
          ? options.bind(callback as (...args: unknown[]) => unknown)
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
    rawCapable: boolean,
  ): Promise<unknown> {
    const seq = run.nextSeq();
    let table: CatalogTable | undefined;
    let sql = text;
    let added = 0;
    if (plan.kind === 'insert' || plan.kind === 'update' || plan.kind === 'delete') {
      // An unqualified name is found along this connection's own search path (one it set, or its
      // role's or database's), never tapedeck's: another schema's table of that name is another table.
      table = plan.table ? catalog?.resolve(plan.table, client[kPath]) : undefined;
      // An UPDATE assigning a key column: looked up by its key after, the row before would be
      // another row, or none; it is joined by its key before instead. So is one of a table whose
      // BEFORE UPDATE trigger may change a key (where the join cannot be made, a row whose before
      // is not found by its key after is counted, not recorded: takeChanges).
      const keyAssigned =
        table !== undefined && plan.kind === 'update' && table.primaryKey.some((c) => plan.setTargets?.includes(c));
      const keyChange = keyAssigned || (table !== undefined && plan.kind === 'update' && table.keyTriggers);
      const join =
        keyChange &&
        table !== undefined &&
        catalog !== undefined &&
        plan.ref !== undefined &&
        catalog.descendants(table).length === 0
          ? catalog.oldRowJoin(table, plan.ref)
          : undefined;
      if (table !== undefined && table.primaryKey.length === 0 && (plan.kind === 'update' || plan.upsert === true)) {
        // No key to find its row before by: an image by its other values could be another row.
        run.note('updates of tables without a key (no primary key, no unique index of NOT NULL columns)');
        table = undefined;
      } else if (table !== undefined && catalog !== undefined && table.readable && plan.ref !== undefined) {
        const images = catalog.writeImages(table, plan.ref, plan.kind, plan.upsert === true);
        if (join !== undefined) images.before = join.before;
        const items: string[] = [];
        if (images.after !== undefined) items.push(`${images.after} AS ${AFTER}`);
        if (images.before !== undefined) items.push(`${images.before} AS ${BEFORE}`);
        if (images.table !== undefined) items.push(`${images.table} AS ${TABLE}`);
        if (images.inserted !== undefined) items.push(`${images.inserted} AS ${INSERTED}`);
        sql = withReturning(text, plan, items.join(', '));
        // The join's edits all lie before the statement's end, where RETURNING's addition starts.
        const joined = join === undefined ? undefined : withOldRow(sql, plan, join.source, join.match);
        if (keyAssigned && joined === undefined) {
          run.note('updates of a key it could not image (WHERE CURRENT OF, inheritance parents)');
          sql = text;
          table = undefined;
        } else {
          sql = joined ?? sql;
          added = items.length;
        }
      } else {
        run.note(table === undefined ? 'writes to tables not in the catalog' : 'writes to tables it may not read');
        table = undefined;
      }
    } else if (plan.kind === 'unobserved-write')
      run.note('writes it cannot follow (WITH, MERGE, COPY, several statements)');
    else if (plan.kind === 'savepoint') run.note('savepoints');
    // A named (prepared) statement is rewritten under its own name: pg refuses one name for two texts.
    const named = typeof config === 'object' ? (config as { name?: unknown }).name : undefined;
    let finalConfig =
      sql === text
        ? config
        : typeof config === 'string'
          ? sql
          : withConfig(config, { text: sql, ...(typeof named === 'string' ? { name: `${named}__tapedeck` } : {}) });
    const arrayMode = typeof config === 'object' && (config as { rowMode?: string }).rowMode === 'array';
    // A read keeps its rows' text. The parsers that make what the agent gets stay the same: the
    // statement's own (Drizzle gives its own, to keep timestamps as text), else the client's.
    // Not for binary values.
    type Parsers = { getTypeParser(oid: number, format?: string): unknown };
    const own = typeof config === 'string' ? undefined : (config as { types?: unknown; binary?: unknown });
    const parsers: Parsers | undefined =
      own?.types === undefined || own.types === null
        ? client._types
        : typeof (own.types as Partial<Parsers>).getTypeParser === 'function' && !Array.isArray(own.types)
          ? (own.types as Parsers)
          : undefined;
    // A write's images are kept as texts too: the statement's parsers are the agent's, and may keep
    // jsonb as text (Prisma's adapter-pg does, to parse JSON itself) or make something else of it.
    let raw: unknown[][] | undefined;
    if (
      rawCapable &&
      (plan.kind === 'read' || added > 0) &&
      catalog !== undefined &&
      parsers !== undefined &&
      own?.binary !== true
    ) {
      raw = [];
      // pg also sends a query's `types` as its parameter types when it is an array: none here.
      const types = {
        getTypeParser: (oid: number, format?: string) => parsers.getTypeParser(oid, format),
        length: 0,
        [kRaw]: raw,
      };
      finalConfig = typeof finalConfig === 'string' ? { text: finalConfig, types } : withConfig(finalConfig, { types });
    }
    let result: pg.QueryResult;
    pathMayChange(client, text);
    try {
      result = (await real.call(client, finalConfig, values)) as pg.QueryResult;
    } catch (error) {
      settleTransaction(client, run, plan);
      throw error;
    }
    if (result === null || typeof result !== 'object' || (Array.isArray(result) && added > 0)) {
      // No result to read (a pg that answers otherwise): the agent gets what pg gave.
      run.note('statements whose result it could not read');
      settleTransaction(client, run, plan, typeof result === 'object' && result !== null ? result : undefined);
      return result;
    }
    if (added > 0 && table !== undefined && catalog !== undefined)
      takeChanges(client, run, catalog, table, plan, result, added, arrayMode, seq, raw);
    else if (plan.kind === 'read' && catalog !== undefined && Array.isArray(result.rows) && result.rows.length > 0) {
      readAgain(run, db, catalog, result, arrayMode, seq, raw?.length === result.rows.length ? raw : undefined);
    }
    // The texts are not kept past the statement (the agent may hold its result for long).
    raw?.splice(0);
    settleTransaction(client, run, plan, result);
    return result;
  }

  /**
   * The schemas the connection finds unqualified names in, asked of the connection itself once and
   * again after a statement that may change them (undefined: it could not say, as in a failed
   * transaction; the statement then fails anyway, and the database's path is used).
   */
  async function searchPathOf(client: Tagged, real: QueryFn): Promise<string[] | undefined> {
    if (client[kPath] !== undefined) return client[kPath];
    try {
      // One text per row: a client's own parser of arrays (text[]) cannot change what comes back.
      const result = (await real.call(
        client,
        'SELECT s::text AS s FROM unnest(current_schemas(false)) WITH ORDINALITY AS p(s, n) ORDER BY n',
      )) as pg.QueryResult;
      if (!Array.isArray(result?.rows)) return undefined;
      client[kPath] = result.rows.map((r) => String((r as { s: unknown }).s));
      return client[kPath];
    } catch {
      return undefined;
    }
  }

  /** Forgets a connection's search path when `config`'s statement may change it (read again when needed). */
  function pathMayChange(client: Tagged, config: unknown): void {
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    if (typeof text !== 'string') return;
    if (PATH_CHANGE.test(text)) {
      delete client[kPath];
      client[kPathTx] = true;
    } else if (client[kPathTx] !== undefined && TX_END.test(text)) {
      delete client[kPath];
      delete client[kPathTx];
    }
  }

  /** Moves the captured images out of the result the agent gets, and queues the changes. */
  function takeChanges(
    client: Tagged,
    run: ObservedRun,
    catalog: Catalog,
    written: CatalogTable,
    plan: StatementPlan,
    result: pg.QueryResult,
    added: number,
    arrayMode: boolean,
    seq: number,
    raw: unknown[][] | undefined,
  ): void {
    const fields = result.fields ?? [];
    const texts = raw?.length === result.rows.length ? raw : undefined;
    const width = fields.length;
    const afterAt = fields.findIndex((f) => f.name === AFTER);
    const beforeAt = fields.findIndex((f) => f.name === BEFORE);
    const tableAt = fields.findIndex((f) => f.name === TABLE);
    const insertedAt = fields.findIndex((f) => f.name === INSERTED);
    const tx = (client[kTx] ??= []);
    /** Keys an UPDATE gave its rows. */
    const movedTo: Array<[CatalogTable, Row]> = [];
    for (let i = 0; i < result.rows.length; i++) {
      const row = result.rows[i] as Record<string, unknown> | unknown[];
      const get = (name: string, at: number) =>
        (arrayMode ? (row as unknown[])[at] : (row as Record<string, unknown>)[name]) as Row | null | undefined;
      const after = afterAt >= 0 ? writeImage(texts?.[i]?.[afterAt], get(AFTER, afterAt)) : undefined;
      // A boolean, or its text where the client's own parsers keep booleans as text.
      const flag = insertedAt >= 0 ? (get(INSERTED, insertedAt) as unknown) : undefined;
      const inserted = flag === true || flag === 't' ? true : flag === false || flag === 'f' ? false : undefined;
      // An upsert's inserted row was no row before it (its key lookup could only find one by chance).
      const before =
        inserted === true
          ? undefined
          : beforeAt >= 0
            ? writeImage(texts?.[i]?.[beforeAt], get(BEFORE, beforeAt))
            : undefined;
      // An updated row has a row before; none found by its key after: the update gave it another
      // key (a BEFORE UPDATE trigger, an upsert's SET), which is not known here. Counted, not guessed.
      const lost = after !== undefined && before === undefined && (plan.kind === 'update' || inserted === false);
      // The row's own table: an inheritance child's row written through its parent is the child's.
      const oid = tableAt >= 0 ? Number(get(TABLE, tableAt)) : written.oid;
      const table = oid === written.oid ? written : (catalog.tables.get(oid) ?? written);
      const image = before ?? after;
      if (lost) run.note("updates that gave a row a key it could not image (a BEFORE UPDATE trigger, an upsert's SET)");
      else if (image !== undefined) {
        const key = keyOf(table, image);
        const op: DbChangedPayload['op'] =
          plan.kind === 'delete' ? 'delete' : plan.kind === 'update' || before !== undefined ? 'update' : 'insert';
        run.observe(table, op === 'insert' ? null : (before ?? null), key, { seq, source: 'before', readAt: seq });
        const moved = before !== undefined && after !== undefined ? keyOf(table, after) : undefined;
        if (moved !== undefined && canonicalJson(moved) !== canonicalJson(key)) movedTo.push([table, moved]);
        const change = { schema: table.schema, table: table.name, op, key };
        tx.push({ run, table, change: { ...change, ...(before && { before }), ...(after && { after }) } });
      } else if (table !== written) run.note('rows of inheritance children it could not image');
      // What the agent gets: its own RETURNING columns only.
      if (arrayMode) (row as unknown[]).splice(width - added, added);
      else {
        delete (row as Record<string, unknown>)[AFTER];
        delete (row as Record<string, unknown>)[BEFORE];
        delete (row as Record<string, unknown>)[TABLE];
        delete (row as Record<string, unknown>)[INSERTED];
      }
    }
    // A key an UPDATE gave a row was no row's before it, unless another row of the same statement
    // had it (a swap under a deferrable key): that row's image came first.
    for (const [table, key] of movedTo)
      if (!run.hasImage(table, key)) run.observe(table, null, key, { seq, source: 'before', readAt: seq });
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

  /**
   * The rows a read returned, as images: from the read's own texts when it returned every column
   * of their table (observed-result.ts), else read again in full by primary key on tapedeck's
   * connection.
   */
  function readAgain(
    run: ObservedRun,
    db: Database,
    catalog: Catalog,
    result: pg.QueryResult,
    arrayMode: boolean,
    seq: number,
    raw: unknown[][] | undefined,
  ): void {
    const byTable = new Map<
      number,
      Array<{ name: string; at: number; column: string; type: string; oid: number; text: boolean }>
    >();
    for (const [at, field] of (result.fields ?? []).entries()) {
      if (!field.tableID) continue;
      const table = catalog.tables.get(field.tableID);
      const column = table?.columns.find((c) => c.attnum === field.columnID);
      if (table === undefined || column === undefined) continue;
      const list = byTable.get(table.oid) ?? [];
      list.push({
        name: field.name,
        at,
        column: column.name,
        type: column.type,
        oid: field.dataTypeID,
        text: column.text,
      });
      byTable.set(table.oid, list);
    }
    let attributed = false;
    for (const [oid, fields] of byTable) {
      const table = catalog.tables.get(oid) as CatalogTable;
      const pk = table.primaryKey.map((c) => fields.find((f) => f.column === c));
      if (table.primaryKey.length === 0 || pk.some((f) => f === undefined) || !table.readable) continue;
      attributed = true;
      // Every column of the table in the result: its rows as the read saw them, exact as of its
      // statement. Not for an inheritance parent: its result holds its descendants' rows too, in
      // its columns alone; the keyed reads below read each table's own.
      const descendants = catalog.descendants(table);
      const images =
        raw === undefined || descendants.length > 0
          ? undefined
          : imagesFromText(
              fields.map((f) => ({ name: f.column, type: f.type, at: f.at, oid: f.oid, text: f.text })),
              table.columns.map((c) => c.name),
              raw,
            );
      if (images !== undefined) {
        for (const image of images) {
          const key = keyOf(table, image);
          if (Object.values(key).some((v) => v === null)) continue;
          run.observe(table, image, key, { seq, source: 'result', readAt: seq });
        }
        continue;
      }
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
      for (const own of [table, ...descendants.filter((d) => d.readable)])
        run.track(
          options
            .outside(async () => {
              const rows = await db.reads.read(catalog, own, table.primaryKey, keys);
              // As of when it came back: a write of the run issued before then may be in it.
              const readAt = run.statementCount;
              for (const r of rows) {
                run.observe(own, r, keyOf(own, r), { seq, source: 'read', readAt });
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

/** What pg's Query reads of a statement's config (src: pg/lib/query.js and utils.normalizeQueryConfig). */
const QUERY_FIELDS = [
  'text',
  'values',
  'name',
  'rowMode',
  'types',
  'binary',
  'queryMode',
  'portal',
  'rows',
  'callback',
  'query_timeout',
];

/**
 * A statement's config with some fields changed: its own fields, and each field pg reads read off
 * the original, so a config whose fields are getters on its class (a query builder's `text`) keeps
 * them; a spread copy alone would not.
 */
function withConfig(config: unknown, changes: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(config as object) };
  for (const field of QUERY_FIELDS) {
    const value = (config as Record<string, unknown>)[field];
    if (value !== undefined) out[field] = value;
  }
  return Object.assign(out, changes);
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
