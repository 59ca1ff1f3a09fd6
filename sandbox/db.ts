// Database sandboxes seeded from a recording's snapshot: PGlite served over the Postgres wire
// protocol (default), a database of its own on a real server (template mode, --db), or a
// testcontainers Postgres. Each hands back the address the agent gets (host, port, URL), a query
// function, effect application and a snapshot. Seeding goes through src/postgres, which builds
// the database from the snapshot's description and never runs recorded SQL.
//
// On a real server the sandbox is a database created for this replay and owned by a role created
// for it (no other privilege), and the agent reaches it only through a wire-protocol gate that
// admits that database as that role: nothing else on the server is reachable or changed.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import path from 'node:path';
import type { Extensions } from '@electric-sql/pglite';
import type pg from 'pg';
import { DEFAULT_SOCKET_DIRS, socketDirOf } from '../src/postgres/connect.js';
import {
  applyRowChanges,
  connectDb,
  createExtensions,
  type DbGate,
  lockKeyOf,
  openGate,
  type PgliteExtension,
  pgliteExtensions,
  quoteIdent,
  redactDbUrl,
  removeSandboxLeftovers,
  SANDBOX_LOCK_CLASS,
  SANDBOX_PREFIX,
  searchPathSetting,
  seedDatabase,
  setDatabaseSearchPath,
  snapshotDatabase,
  type Upstream,
  wantedExtensions,
  withDatabase,
} from '../src/postgres/index.js';
import type { DbChangedPayload, DbSnapshot, Row } from '../src/recording/index.js';
import { TapedeckError } from '../src/recording/index.js';
import { noteLeftover } from './leftovers.js';
import { type PgliteServer, servePglite } from './pglite/index.js';

/** The kinds of database sandbox, in `--db-sandbox`'s words. */
export const DB_SANDBOX_KINDS = ['pglite', 'template', 'testcontainers'] as const;
export type DbSandboxKind = (typeof DB_SANDBOX_KINDS)[number];

export interface DbSandbox {
  readonly kind: DbSandboxKind;
  /** The connection URL the agent gets (through the env var it reads). */
  readonly url: string;
  /** host:port the agent connects to (the network guard, or an OS sandbox, forwards exactly this). */
  readonly host: string;
  readonly port: number;
  query(sql: string, params?: unknown[]): Promise<Row[]>;
  /**
   * What it lacks of the recorded database for want of an extension (one line each: the extension,
   * why, what is built without it); empty when it holds everything the description builds.
   */
  readonly lacks: readonly string[];
  /** Applies recorded row changes (effects of a served tool call). */
  apply(changes: DbChangedPayload[]): Promise<void>;
  /** The sandbox's current state, in the snapshot format. */
  snapshot(schemas: string[]): Promise<DbSnapshot>;
  /**
   * Keeps the sandbox's data for inspection after close: a server sandbox stays on its server
   * (its URL, without password, is returned), a PGlite sandbox returns its data dir (a tarball for PGlite's loadDataDir).
   */
  keep(): Promise<{ url?: string; dataDir?: Uint8Array }>;
  close(): Promise<void>;
}

export interface DbSandboxOptions {
  kind: DbSandboxKind;
  /** template: an admin URL of a real server (a role with CREATEDB and CREATEROLE, or a superuser). */
  url?: string;
  /** pglite: how many simultaneous client connections the wire server accepts. */
  maxConnections?: number;
  /** pglite: how long a connection waits while another holds the one backend idle in a transaction (ms). */
  waitMs?: number;
  /** testcontainers: the image to run. */
  image?: string;
}

/** Values in the snapshot's JSON form: timestamps as ISO strings, bigint/numeric as strings. */
export function snapshotValue(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? String(value) : value.toISOString();
  if (Buffer.isBuffer(value)) return `\\x${value.toString('hex')}`;
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(snapshotValue);
  return value;
}

const connect = (url: string, what: string): Promise<pg.Client> =>
  connectDb(url, { what, application: 'tapedeck replay' });

function sandboxFrom(
  kind: DbSandboxKind,
  address: { url: string; host: string; port: number },
  client: pg.Client,
  snapshot: DbSnapshot,
  lacks: readonly string[],
  cleanup: () => Promise<void>,
  keep: () => Promise<{ url?: string; dataDir?: Uint8Array }> = async () => ({}),
): DbSandbox {
  let closed = false;
  return {
    kind,
    ...address,
    lacks,
    async query(sql, params) {
      const result = await client.query(sql, params as unknown[] | undefined);
      return (result.rows as Row[]).map((r) =>
        Object.fromEntries(Object.entries(r).map(([k, v]) => [k, snapshotValue(v)])),
      );
    },
    apply: (changes) => applyRowChanges(client, changes, snapshot),
    snapshot: async (schemas) => (await snapshotDatabase(client, schemas)).snapshot,
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
const seeded = new Map<string, { dataDir: Blob; lacks: string[] }>();
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

async function createPglite(loadDataDir?: Blob, extensions?: Record<string, PgliteExtension>) {
  const { PGlite } = await import('@electric-sql/pglite');
  const rt = await pgliteRuntime();
  return PGlite.create({
    pgliteWasmModule: rt.pgliteWasmModule,
    initdbWasmModule: rt.initdbWasmModule,
    fsBundle: rt.fsBundle,
    ...(loadDataDir ? { loadDataDir } : {}),
    // The modules of the recorded database's extensions, loaded at start (src/postgres/extensions.ts).
    ...(extensions && Object.keys(extensions).length > 0 ? { extensions: extensions as Extensions } : {}),
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
  const key = createHash('sha256').update(JSON.stringify(snapshot)).digest('hex');
  const cached = seeded.get(key);
  const db = await createPglite(cached?.dataDir ?? (await blankDataDir()), await pgliteExtensions(snapshot));
  let server: PgliteServer | undefined;
  const cleanup = async () => {
    await server?.close().catch(() => {});
    await db.close().catch(() => {});
  };
  try {
    server = await servePglite(db, {
      ...(options.maxConnections ? { maxConnections: options.maxConnections } : {}),
      ...(options.waitMs ? { waitMs: options.waitMs } : {}),
    });
    const { host, port } = server;
    const url = `postgres://postgres@${host}:${port}/postgres`;
    const client = await connect(url, 'the PGlite sandbox');
    let lacks = cached?.lacks;
    if (lacks === undefined) {
      lacks = (await seedDatabase(client, snapshot)).lacks;
      if (seeded.size >= SEEDED_CACHE_MAX) seeded.delete(seeded.keys().next().value as string);
      seeded.set(key, { dataDir: await db.dumpDataDir('none'), lacks });
    }
    // The agent's connections start on the recorded search_path (the seeding one keeps its own).
    const searchPath = searchPathSetting(snapshot);
    if (searchPath !== undefined) server.startWith(new Map([['search_path', searchPath]]));
    return sandboxFrom('pglite', { url, host, port }, client, snapshot, lacks, cleanup, async () => ({
      dataDir: new Uint8Array(await (await db.dumpDataDir('none')).arrayBuffer()),
    }));
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** Where the server of a postgres:// URL listens: host and port, or a Unix socket (`?host=/dir`). */
function upstreamOf(url: string): Upstream {
  const u = new URL(url);
  const port = Number(u.port || 5432);
  // No host at all: libpq's default folder.
  const socketDir = socketDirOf(u) ?? (u.hostname === '' ? DEFAULT_SOCKET_DIRS[0] : undefined);
  if (socketDir !== undefined) return { path: path.join(socketDir, `.s.PGSQL.${port}`) };
  return { host: decodeURIComponent(u.hostname), port };
}

/** The same server, as another role with its password, on another database. */
function asRole(url: string, role: string, password: string, database: string): string {
  const u = new URL(withDatabase(url, database));
  u.username = role;
  u.password = password;
  return u.toString();
}

/**
 * Lets the sandbox role create in its own database's `public` schema. On PostgreSQL 15+ `public`
 * belongs to pg_database_owner and PUBLIC lost CREATE on it; the database owner holds those rights
 * only through inheriting pg_database_owner, which the NOINHERIT sandbox role does not. It can take
 * them anyway (SET ROLE pg_database_owner), so granting them to it directly gives it nothing more
 * than it has, and keeps NOINHERIT for any role it might ever be made a member of. Older servers
 * (public owned by the bootstrap superuser, CREATE for PUBLIC) need nothing.
 */
async function ownPublicSchema(client: pg.Client, role: string): Promise<void> {
  const { rows } = await client.query<{ create: boolean; owner: string }>(
    `SELECT has_schema_privilege(n.oid, 'CREATE') AS create, pg_get_userbyid(n.nspowner) AS owner
       FROM pg_namespace n WHERE n.nspname = 'public'`,
  );
  const publicSchema = rows[0];
  if (!publicSchema || publicSchema.create || publicSchema.owner !== 'pg_database_owner') return;
  await client.query('SET ROLE pg_database_owner');
  try {
    await client.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${quoteIdent(role)}`);
  } finally {
    await client.query('RESET ROLE');
  }
}

/**
 * Creates the recorded database's extensions in the new sandbox database as the admin role: the
 * untrusted ones (earthdistance) need a superuser, which the sandbox role is not. Only names on the
 * allow-list are created (src/postgres/extensions.ts); the sandbox role may use what they made.
 * One that cannot be created is left out here; seeding says what the sandbox then lacks.
 */
async function adminExtensions(adminUrl: string, database: string, snapshot: DbSnapshot): Promise<void> {
  if (wantedExtensions(snapshot).length === 0) return;
  const admin = await connect(withDatabase(adminUrl, database), 'the sandbox database');
  try {
    await admin.query('BEGIN');
    const held = await createExtensions(admin, snapshot);
    for (const { name, schema } of wantedExtensions(snapshot)) {
      if (held.has(name)) await admin.query(`GRANT USAGE ON SCHEMA ${quoteIdent(schema)} TO ${quoteIdent(database)}`);
    }
    await admin.query('COMMIT');
  } finally {
    await admin.end().catch(() => {});
  }
}

async function openTemplate(snapshot: DbSnapshot, options: DbSandboxOptions): Promise<DbSandbox> {
  if (!options.url)
    throw new TapedeckError('DB_URL_REQUIRED', 'A database sandbox on a server needs its URL (--db postgres://…).');
  const adminUrl = options.url;
  const admin = await connect(adminUrl, 'the server');
  // Sandboxes of replays that were killed are removed before this one is made.
  await removeSandboxLeftovers(admin).catch(() => undefined);
  const hex = randomBytes(4).toString('hex');
  const name = `${SANDBOX_PREFIX}${hex}`;
  const password = randomBytes(18).toString('hex');
  const forget = noteLeftover({ kind: 'pg-sandbox', url: adminUrl, name });
  let gate: DbGate | undefined;
  let client: pg.Client | undefined;
  let kept = false;
  const cleanup = async () => {
    await gate?.close().catch(() => {});
    await client?.end().catch(() => {});
    if (kept) {
      // Out of the cleaner's way: a kept sandbox is the user's to drop.
      const keptName = `tapedeck_kept_${hex}`;
      await admin
        .query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name])
        .catch(() => {});
      await admin.query(`ALTER DATABASE "${name}" RENAME TO "${keptName}"`).catch(() => {});
      await admin.query(`ALTER ROLE "${name}" RENAME TO "${keptName}"`).catch(() => {});
    } else {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
      await admin.query(`DROP ROLE IF EXISTS "${name}"`).catch(() => {});
    }
    await admin.query('SELECT pg_advisory_unlock_all()').catch(() => {});
    await admin.end().catch(() => {});
    forget();
  };
  try {
    // Alive for as long as this session lasts: `tapedeck doctor` and other replays leave it be.
    await admin.query('SELECT pg_advisory_lock($1, $2)', [SANDBOX_LOCK_CLASS, lockKeyOf(hex)]);
    const { rows } = await admin.query<{ rolsuper: boolean }>(
      'SELECT rolsuper FROM pg_roles WHERE rolname = current_user',
    );
    try {
      await admin.query(
        `CREATE ROLE "${name}" LOGIN PASSWORD '${password}' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT CONNECTION LIMIT 64`,
      );
      if (!rows[0]?.rolsuper) await admin.query(`GRANT "${name}" TO CURRENT_USER`);
      await admin.query(`CREATE DATABASE "${name}" OWNER "${name}" TEMPLATE template0 ENCODING 'UTF8'`);
      await admin.query(`REVOKE ALL ON DATABASE "${name}" FROM PUBLIC`);
    } catch (error) {
      throw new TapedeckError(
        'DB_SANDBOX_FAILED',
        `Cannot create the sandbox database on ${redactDbUrl(adminUrl)}: ${(error as Error).message}. --db needs a role with CREATEDB and CREATEROLE (or a superuser).`,
        { cause: error },
      );
    }
    await adminExtensions(adminUrl, name, snapshot);
    // Seeded as the sandbox role: the recording's description can create nothing that role cannot.
    const roleUrl = asRole(adminUrl, name, password, name);
    client = await connect(roleUrl, 'the sandbox database');
    await ownPublicSchema(client, name);
    const { lacks } = await seedDatabase(client, snapshot);
    await setDatabaseSearchPath(client, snapshot);
    gate = await openGate({ upstream: upstreamOf(adminUrl), database: name, user: name });
    const url = `postgres://${name}:${password}@${gate.host}:${gate.port}/${name}`;
    return sandboxFrom(
      'template',
      { url, host: gate.host, port: gate.port },
      client,
      snapshot,
      lacks,
      cleanup,
      async () => {
        kept = true;
        return { url: redactDbUrl(withDatabase(adminUrl, `tapedeck_kept_${hex}`)) };
      },
    );
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
    const host = container.getHost();
    const port = container.getMappedPort(5432);
    const url = `postgres://postgres@${host}:${port}/postgres`;
    const client = await connect(url, 'the container');
    const { lacks } = await seedDatabase(client, snapshot);
    await setDatabaseSearchPath(client, snapshot);
    return sandboxFrom('testcontainers', { url, host, port }, client, snapshot, lacks, cleanup);
  } catch (error) {
    await cleanup();
    throw error;
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
