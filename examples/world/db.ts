// A world's Postgres (shared by the example worlds): PGlite served over the wire protocol (the default, nothing to install), or
// a real server given by URL, optionally in a fresh database that is dropped on close.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import pg from 'pg';

export interface WorldDatabase {
  /** A postgres:// URL any `pg` client can use. */
  url: string;
  kind: 'pglite' | 'postgres';
  close(): Promise<void>;
}

/**
 * Open a world's database. Without `url`: an in-memory PGlite on 127.0.0.1:<free port>.
 * With `url` and `fresh`: create `<prefix>_<random>` (default prefix `travel`) on that server and
 * drop it on close, so parallel runs do not collide.
 */
export async function openWorldDatabase(
  options: { url?: string; fresh?: boolean; prefix?: string } = {},
): Promise<WorldDatabase> {
  if (options.url === undefined) return openPglite();
  if (!options.fresh) return { url: options.url, kind: 'postgres', close: async () => {} };
  const prefix = (options.prefix ?? 'travel').replace(/[^a-z0-9_]/g, '_');
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: options.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(options.url);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    kind: 'postgres',
    async close() {
      const client = new pg.Client({ connectionString: options.url });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * A fresh PGlite, started from a cached empty data directory when there is one: initdb is most
 * of PGlite's start-up (seconds on a busy machine), loading a data dir well under one. The cache
 * lives in the temp folder, keyed by the PGlite version; TAPEDECK_PGLITE_CACHE=0 turns it off.
 */
async function createPglite(): Promise<PGlite> {
  if (process.env.TAPEDECK_PGLITE_CACHE === '0') return await PGlite.create();
  const cache = pgliteCachePath();
  if (existsSync(cache)) {
    try {
      return await PGlite.create({ loadDataDir: new Blob([readFileSync(cache)]) });
    } catch {
      // A damaged cache: start from initdb and write it again.
    }
  }
  const db = await PGlite.create();
  const dump = Buffer.from(await (await db.dumpDataDir('none')).arrayBuffer());
  const partial = `${cache}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(partial, dump);
  renameSync(partial, cache);
  return db;
}

/** Where the cached empty PGlite data directory lives (the temp folder, keyed by PGlite's version). */
export function pgliteCachePath(): string {
  return join(tmpdir(), `tapedeck-pglite-${pgliteVersion()}-empty.tar`);
}

function pgliteVersion(): string {
  const require = createRequire(import.meta.url);
  let dir = dirname(require.resolve('@electric-sql/pglite'));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string };
  return pkg.version ?? 'unknown';
}

async function openPglite(): Promise<WorldDatabase> {
  const db = await createPglite();
  // PGlite is one session; the socket server multiplexes clients onto it. The default of one
  // connection would make the API's pool and the agent's client wait on each other.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 64 });
  await server.start();
  return {
    url: `postgres://postgres:postgres@${server.getServerConn()}/postgres?sslmode=disable`,
    kind: 'pglite',
    async close() {
      await server.stop();
      await db.close();
    },
  };
}
