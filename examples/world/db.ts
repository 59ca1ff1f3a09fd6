// The world's Postgres: PGlite served over the wire protocol (the default, nothing to install), or
// a real server given by URL, optionally in a fresh database that is dropped on close.
import { randomBytes } from 'node:crypto';
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
 * Open the world's database. Without `url`: an in-memory PGlite on 127.0.0.1:<free port>.
 * With `url` and `fresh`: create `travel_<random>` on that server and drop it on close, so
 * parallel runs do not collide.
 */
export async function openWorldDatabase(options: { url?: string; fresh?: boolean } = {}): Promise<WorldDatabase> {
  if (options.url === undefined) return openPglite();
  if (!options.fresh) return { url: options.url, kind: 'postgres', close: async () => {} };
  const name = `travel_${randomBytes(6).toString('hex')}`;
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

async function openPglite(): Promise<WorldDatabase> {
  const db = await PGlite.create();
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
