// Database sandboxes seeded from a recording's snapshot: PGlite served over the Postgres wire
// protocol (default), a template-cloned database on a real server, or a testcontainers Postgres.
// Each hands back a URL for the agent, a query function, effect application and a snapshot.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { DbChangedPayload, DbSnapshot, DbTable, Row } from '../src/recording/index.js';
import { TapedeckError } from '../src/recording/index.js';

export type DbSandboxKind = 'pglite' | 'template' | 'testcontainers';

export interface DbSandbox {
  readonly kind: DbSandboxKind;
  /** The connection URL the agent gets (through the env var it reads). */
  readonly url: string;
  /** host:port the network guard lets through. */
  readonly host: string;
  readonly port: number;
  query(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Applies recorded row changes (effects of a served tool call). */
  apply(changes: DbChangedPayload[]): Promise<void>;
  /** The sandbox's current rows, in the snapshot format (DDL taken from `ddl`). */
  snapshot(schemas: string[], ddl?: string[]): Promise<DbSnapshot>;
  /**
   * Keeps the sandbox's data for inspection after close: a template clone stays on its server
   * (its URL is returned), a PGlite sandbox returns its data dir (a tarball for PGlite's loadDataDir).
   */
  keep(): Promise<{ url?: string; dataDir?: Uint8Array }>;
  close(): Promise<void>;
}

export interface DbSandboxOptions {
  kind: DbSandboxKind;
  /** template: an admin URL of a real server (its database is used to create and drop others). */
  url?: string;
  /** pglite: how many simultaneous client connections the wire server accepts. */
  maxConnections?: number;
  /** testcontainers: the image to run. */
  image?: string;
}

export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
const tableRef = (schema: string, table: string): string => `${quoteIdent(schema)}.${quoteIdent(table)}`;

/** Values in the snapshot's JSON form: timestamps as ISO strings, bigint/numeric as strings. */
export function snapshotValue(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? String(value) : value.toISOString();
  if (Buffer.isBuffer(value)) return `\\x${value.toString('hex')}`;
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(snapshotValue);
  return value;
}

function paramValue(value: unknown, type: string | undefined): unknown {
  if (value === null || value === undefined) return null;
  if (type && /^json/i.test(type)) return JSON.stringify(value);
  if (typeof value === 'object' && !Array.isArray(value)) return JSON.stringify(value);
  return value;
}

/** Creates the snapshot's schemas and rows through `client`, then moves sequences past the seeded ids. */
export async function seedDatabase(client: pg.Client, snapshot: DbSnapshot): Promise<void> {
  for (const schema of snapshot.schemas) {
    if (schema !== 'public') await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
  }
  // Foreign keys and sequence positions come after the rows, whatever order the tables are in.
  const deferred = (sql: string) =>
    /^\s*ALTER\s+TABLE\b[\s\S]*\bFOREIGN\s+KEY\b/i.test(sql) || /^\s*SELECT\s+setval\b/i.test(sql);
  for (const statement of snapshot.ddl) if (!deferred(statement)) await client.query(statement);
  for (const table of snapshot.tables) await insertRows(client, table);
  for (const statement of snapshot.ddl) if (deferred(statement)) await client.query(statement);
  for (const table of snapshot.tables) {
    for (const column of table.columns) {
      const { rows } = await client.query<{ seq: string | null }>('SELECT pg_get_serial_sequence($1, $2) AS seq', [
        tableRef(table.schema, table.name),
        column.name,
      ]);
      const seq = rows[0]?.seq;
      if (!seq) continue;
      await client.query(
        `SELECT setval($1, COALESCE((SELECT MAX(${quoteIdent(column.name)}) FROM ${tableRef(table.schema, table.name)}), 0) + 1, false)`,
        [seq],
      );
    }
  }
}

async function insertRows(client: pg.Client, table: DbTable): Promise<void> {
  if (table.rows.length === 0) return;
  const columns = table.columns.map((c) => c.name);
  const types = new Map(table.columns.map((c) => [c.name, c.type]));
  const perBatch = Math.max(1, Math.floor(30000 / Math.max(1, columns.length)));
  for (let start = 0; start < table.rows.length; start += perBatch) {
    const batch = table.rows.slice(start, start + perBatch);
    const params: unknown[] = [];
    const tuples = batch.map((row) => {
      const slots = columns.map((c) => {
        params.push(paramValue(row[c], types.get(c)));
        return `$${params.length}`;
      });
      return `(${slots.join(', ')})`;
    });
    await client.query(
      `INSERT INTO ${tableRef(table.schema, table.name)} (${columns.map(quoteIdent).join(', ')}) VALUES ${tuples.join(', ')}`,
      params,
    );
  }
}

/** Applies recorded row changes: inserts, updates and deletes by key. */
export async function applyRowChanges(
  client: pg.Client,
  changes: DbChangedPayload[],
  columnTypes: ReadonlyMap<string, string> = new Map(),
): Promise<void> {
  for (const change of changes) {
    const typeOf = (column: string) => columnTypes.get(`${change.schema}.${change.table}.${column}`);
    const ref = tableRef(change.schema, change.table);
    const keyCols = Object.keys(change.key);
    const where = (offset: number) =>
      keyCols.map((k, i) => `${quoteIdent(k)} IS NOT DISTINCT FROM $${offset + i + 1}`).join(' AND ');
    const keyVals = keyCols.map((k) => paramValue(change.key[k], typeOf(k)));
    if (change.op === 'delete') {
      await client.query(`DELETE FROM ${ref} WHERE ${where(0)}`, keyVals);
      continue;
    }
    const after = change.after ?? {};
    const cols = Object.keys(after);
    const vals = cols.map((c) => paramValue(after[c], typeOf(c)));
    if (change.op === 'insert') {
      await client.query(
        `INSERT INTO ${ref} (${cols.map(quoteIdent).join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
        vals,
      );
    } else if (cols.length > 0) {
      const sets = cols.map((c, i) => `${quoteIdent(c)} = $${i + 1}`).join(', ');
      await client.query(`UPDATE ${ref} SET ${sets} WHERE ${where(cols.length)}`, [...vals, ...keyVals]);
    }
  }
}

/** Reads the tables of `schemas` in the snapshot format, rows sorted by primary key. */
export async function snapshotDatabase(client: pg.Client, schemas: string[], ddl: string[] = []): Promise<DbSnapshot> {
  const tables: DbTable[] = [];
  const { rows: tableRows } = await client.query<{ schema: string; name: string }>(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
     WHERE table_type = 'BASE TABLE' AND table_schema = ANY($1) ORDER BY table_schema, table_name`,
    [schemas],
  );
  for (const t of tableRows) {
    const { rows: cols } = await client.query<{ name: string; type: string; nullable: string }>(
      `SELECT column_name AS name, data_type AS type, is_nullable AS nullable FROM information_schema.columns
       WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
      [t.schema, t.name],
    );
    const { rows: pk } = await client.query<{ name: string }>(
      `SELECT a.attname AS name FROM pg_index i
       JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
       WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)`,
      [tableRef(t.schema, t.name)],
    );
    const primaryKey = pk.map((r) => r.name);
    const order = (primaryKey.length > 0 ? primaryKey : cols.map((c) => c.name)).map(quoteIdent).join(', ');
    const { rows } = await client.query(`SELECT * FROM ${tableRef(t.schema, t.name)} ORDER BY ${order}`);
    tables.push({
      schema: t.schema,
      name: t.name,
      columns: cols.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable === 'YES' })),
      primaryKey,
      rows: rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, snapshotValue(v)]))),
    });
  }
  return { schemas, ddl, tables };
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // A dropped sandbox connection must not crash the replayer.
  client.on('error', () => {});
  return client;
}

function sandboxFrom(
  kind: DbSandboxKind,
  url: string,
  client: pg.Client,
  snapshot: DbSnapshot,
  cleanup: () => Promise<void>,
  keep: () => Promise<{ url?: string; dataDir?: Uint8Array }> = async () => ({}),
): DbSandbox {
  const u = new URL(url);
  const columnTypes = new Map<string, string>();
  for (const t of snapshot.tables)
    for (const c of t.columns) columnTypes.set(`${t.schema}.${t.name}.${c.name}`, c.type);
  let closed = false;
  return {
    kind,
    url,
    host: u.hostname,
    port: Number(u.port || 5432),
    async query(sql, params) {
      const result = await client.query(sql, params as unknown[] | undefined);
      return (result.rows as Row[]).map((r) =>
        Object.fromEntries(Object.entries(r).map(([k, v]) => [k, snapshotValue(v)])),
      );
    },
    apply: (changes) => applyRowChanges(client, changes, columnTypes),
    snapshot: (schemas, ddl) => snapshotDatabase(client, schemas, ddl),
    keep,
    async close() {
      if (closed) return;
      closed = true;
      await client.end().catch(() => {});
      await cleanup();
    },
  };
}

// PGlite's first start compiles its WASM and runs initdb (seconds on a busy machine). The
// compiled modules and an initialised data dir are kept per process (and the data dir on disk),
// and a seeded data dir per snapshot, so later sandboxes start in well under a second.
interface PgliteRuntime {
  pgliteWasmModule: WebAssembly.Module;
  initdbWasmModule: WebAssembly.Module;
  fsBundle: Blob;
  version: string;
}
let runtime: Promise<PgliteRuntime> | undefined;
let blank: Promise<Blob> | undefined;
const seeded = new Map<string, Blob>();
const SEEDED_CACHE_MAX = 8;

function pgliteRuntime(): Promise<PgliteRuntime> {
  runtime ??= (async () => {
    const require = createRequire(import.meta.url);
    const dist = path.dirname(require.resolve('@electric-sql/pglite'));
    const pkg = JSON.parse(await readFile(path.join(dist, '..', 'package.json'), 'utf8')) as { version: string };
    const [pglite, initdb, data] = await Promise.all([
      readFile(path.join(dist, 'pglite.wasm')),
      readFile(path.join(dist, 'initdb.wasm')),
      readFile(path.join(dist, 'pglite.data')),
    ]);
    return {
      pgliteWasmModule: await WebAssembly.compile(pglite),
      initdbWasmModule: await WebAssembly.compile(initdb),
      fsBundle: new Blob([data]),
      version: pkg.version,
    };
  })();
  return runtime;
}

async function createPglite(loadDataDir?: Blob) {
  const { PGlite } = await import('@electric-sql/pglite');
  const rt = await pgliteRuntime();
  return PGlite.create({
    pgliteWasmModule: rt.pgliteWasmModule,
    initdbWasmModule: rt.initdbWasmModule,
    fsBundle: rt.fsBundle,
    ...(loadDataDir ? { loadDataDir } : {}),
  });
}

/** An initialised, empty PGlite data dir: from memory, from the on-disk cache, or made once. */
function blankDataDir(): Promise<Blob> {
  blank ??= (async () => {
    const rt = await pgliteRuntime();
    const cacheDir =
      process.env.TAPEDECK_CACHE_DIR ??
      path.join(process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'), 'tapedeck');
    const file = path.join(cacheDir, `pglite-${rt.version}-blank.tar`);
    try {
      return new Blob([await readFile(file)]);
    } catch {}
    const db = await createPglite();
    const dump = await db.dumpDataDir('none');
    await db.close();
    const bytes = Buffer.from(await dump.arrayBuffer());
    const part = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    await mkdir(cacheDir, { recursive: true })
      .then(() => writeFile(part, bytes))
      .then(() => rename(part, file))
      .catch(() => rm(part, { force: true }));
    return new Blob([bytes]);
  })();
  blank.catch(() => {
    blank = undefined;
  });
  return blank;
}

async function openPglite(snapshot: DbSnapshot, options: DbSandboxOptions): Promise<DbSandbox> {
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const key = createHash('sha256').update(JSON.stringify(snapshot)).digest('hex');
  const cached = seeded.get(key);
  const db = await createPglite(cached ?? (await blankDataDir()));
  const server = new PGLiteSocketServer({
    db,
    port: 0,
    host: '127.0.0.1',
    maxConnections: options.maxConnections ?? 32,
  });
  const cleanup = async () => {
    await server.stop().catch(() => {});
    await db.close().catch(() => {});
  };
  try {
    await server.start();
    const url = `postgres://postgres@${server.getServerConn()}/postgres`;
    const client = await connect(url);
    if (!cached) {
      await seedDatabase(client, snapshot);
      if (seeded.size >= SEEDED_CACHE_MAX) seeded.delete(seeded.keys().next().value as string);
      seeded.set(key, await db.dumpDataDir('none'));
    }
    return sandboxFrom('pglite', url, client, snapshot, cleanup, async () => ({
      dataDir: new Uint8Array(await (await db.dumpDataDir('none')).arrayBuffer()),
    }));
  } catch (error) {
    await cleanup();
    throw error;
  }
}

async function openTemplate(snapshot: DbSnapshot, options: DbSandboxOptions): Promise<DbSandbox> {
  if (!options.url)
    throw new TapedeckError('DB_URL_REQUIRED', 'A template database sandbox needs a server URL (--db postgres://…).');
  const suffix = randomBytes(5).toString('hex');
  const template = `tapedeck_tpl_${suffix}`;
  const sandbox = `tapedeck_sbx_${suffix}`;
  let admin: pg.Client;
  try {
    admin = await connect(options.url);
  } catch (error) {
    throw new TapedeckError(
      'DB_UNREACHABLE',
      `Cannot connect to ${redactUrl(options.url)}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  const drop = async (name: string) => {
    await admin
      .query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
        name,
      ])
      .catch(() => {});
    await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)}`).catch(() => {});
  };
  let kept = false;
  const cleanup = async () => {
    if (!kept) await drop(sandbox);
    await drop(template);
    await admin.end().catch(() => {});
  };
  try {
    await admin.query(`CREATE DATABASE ${quoteIdent(template)}`);
    const seeder = await connect(withDatabase(options.url, template));
    try {
      await seedDatabase(seeder, snapshot);
    } finally {
      await seeder.end();
    }
    await admin.query(`CREATE DATABASE ${quoteIdent(sandbox)} TEMPLATE ${quoteIdent(template)}`);
    const url = withDatabase(options.url, sandbox);
    const client = await connect(url);
    return sandboxFrom('template', url, client, snapshot, cleanup, async () => {
      kept = true;
      return { url };
    });
  } catch (error) {
    await cleanup();
    throw error;
  }
}

async function openContainer(snapshot: DbSnapshot, options: DbSandboxOptions): Promise<DbSandbox> {
  const { GenericContainer, Wait } = await import('testcontainers');
  let container: Awaited<ReturnType<InstanceType<typeof GenericContainer>['start']>>;
  try {
    container = await new GenericContainer(options.image ?? 'postgres:16-alpine')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
      .start();
  } catch (error) {
    throw new TapedeckError(
      'NO_CONTAINER_RUNTIME',
      `Cannot start a Postgres container: ${(error as Error).message}. Start a Docker engine, or use the PGlite sandbox (default) or --db <server URL>.`,
      { cause: error },
    );
  }
  const cleanup = async () => {
    await container.stop().catch(() => {});
  };
  try {
    const url = `postgres://postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`;
    const client = await connect(url);
    await seedDatabase(client, snapshot);
    return sandboxFrom('testcontainers', url, client, snapshot, cleanup);
  } catch (error) {
    await cleanup();
    throw error;
  }
}

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url;
  }
}

/**
 * Opens a database sandbox seeded from `snapshot`. Close it when done: it drops what it created.
 * @example const db = await openDbSandbox(recording.pre.db, { kind: 'pglite' }); // db.url -> postgres://…
 */
export async function openDbSandbox(
  snapshot: DbSnapshot,
  options: DbSandboxOptions = { kind: 'pglite' },
): Promise<DbSandbox> {
  switch (options.kind) {
    case 'pglite':
      return openPglite(snapshot, options);
    case 'template':
      return openTemplate(snapshot, options);
    case 'testcontainers':
      return openContainer(snapshot, options);
    default:
      throw new TapedeckError('BAD_DB_SANDBOX', `Unknown database sandbox kind "${String(options.kind)}".`);
  }
}
