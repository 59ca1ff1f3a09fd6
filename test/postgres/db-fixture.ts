// A throwaway database on the test server with a shop.items table, a non-superuser application
// role that may write it, and a local HTTP tool API; names carry `untrusted` and a random suffix.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

export interface ShopDb {
  /** The owner's URL (the server's superuser): what `record --db` is given. */
  url: string;
  /** The application role's URL (NOSUPERUSER, only USAGE + DML on shop). */
  appUrl: string;
  name: string;
  query<T extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

export async function createShopDb(base: string, tag: string): Promise<ShopDb> {
  const suffix = randomBytes(4).toString('hex');
  const name = `untrusted_${tag}_${suffix}`;
  const role = `untrusted_app_${suffix}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`);
  const u = new URL(base);
  u.pathname = `/${name}`;
  const url = u.toString();
  u.username = role;
  const appUrl = u.toString();
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {});
  await pool.query(`CREATE SCHEMA shop;
    CREATE TABLE shop.items (id serial PRIMARY KEY, name text NOT NULL, touched int NOT NULL DEFAULT 0);
    GRANT USAGE ON SCHEMA shop TO ${role};
    GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA shop TO ${role};
    GRANT USAGE ON ALL SEQUENCES IN SCHEMA shop TO ${role};`);
  return {
    url,
    appUrl,
    name,
    async query<T extends pg.QueryResultRow>(sql: string, params?: unknown[]) {
      return (await pool.query<T>(sql, params)).rows;
    },
    async drop() {
      await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    },
  };
}

/** A tool API that answers every request with a small JSON body. */
export async function startToolApi(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, path: req.url?.split('?')[0] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A small seeded PRNG (mulberry32): the same seed gives the same kill moments and cases. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
