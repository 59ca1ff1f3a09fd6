// Opening a connection: a clear error that names the server without its password, and a client
// that a dropped connection does not crash.
import path from 'node:path';
import type pg from 'pg';
import { sameHost } from '../../sandbox/preload/network-guard.mjs';
import { TapedeckError } from '../recording/index.js';
import { redactDbUrl } from './sql.js';

export interface ConnectOptions {
  /** What the URL is, for the error: 'the database', 'the sandbox database', … */
  what?: string;
  /** Shown in pg_stat_activity. */
  application?: string;
  /** Give up after this long (default: pg's own, none). */
  timeoutMs?: number;
  /** Appended to the error message: what to check. */
  hint?: string;
}

/** Connects to `url`; a failure is a TapedeckError (DB_UNREACHABLE) that never shows the password. */
export async function connectDb(url: string, options: ConnectOptions = {}): Promise<pg.Client> {
  // pg is loaded by the first connection, not by every command that can connect.
  const { default: Pg } = await import('pg');
  const client = new Pg.Client({
    connectionString: url,
    application_name: options.application ?? 'tapedeck',
    ...(options.timeoutMs === undefined ? {} : { connectionTimeoutMillis: options.timeoutMs }),
  });
  try {
    await client.connect();
  } catch (cause) {
    await client.end().catch(() => {});
    throw new TapedeckError(
      'DB_UNREACHABLE',
      `cannot connect to ${options.what ?? 'the database'} ${redactDbUrl(url)}: ${(cause as Error).message}${options.hint ? `. ${options.hint}` : ''}`,
      { cause },
    );
  }
  client.on('error', () => {});
  return client;
}

/** Where a PostgreSQL client looks for a local server's Unix socket by default (libpq's, and Debian's). */
export const DEFAULT_SOCKET_DIRS = ['/var/run/postgresql', '/run/postgresql', '/tmp'];

/** The socket folder a postgres URL names (`?host=/dir`, or a host that is a path: `%2Fdir`), else undefined. */
export function socketDirOf(u: URL): string | undefined {
  const given = u.searchParams.get('host');
  if (given?.startsWith('/')) return given;
  let host = u.hostname;
  try {
    host = decodeURIComponent(host);
  } catch {}
  return host.startsWith('/') ? host : undefined;
}

/** The database URLs a run names (the --db URL, database-looking env values): their ports lead out. */
export function databaseAddresses(urls: Array<string | undefined>): Array<{ host: string; port: number }> {
  const out = new Map<string, { host: string; port: number }>();
  for (const url of urls) {
    if (!url || !/^postgres(ql)?:\/\//.test(url)) continue;
    try {
      const u = new URL(url);
      // A URL that names a socket folder names a server on this machine.
      const host = socketDirOf(u) !== undefined ? '127.0.0.1' : u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
      const port = Number(u.searchParams.get('port') || u.port || 5432);
      out.set(`${host}:${port}`, { host, port });
    } catch {}
  }
  return [...out.values()];
}

/**
 * The Unix socket paths at which the database of each URL is reached on this machine: the one a
 * URL names (`?host=/dir`: `/dir/.s.PGSQL.<port>`), or, for a server on this machine (a loopback
 * host, or none), `.s.PGSQL.<port>` in the usual socket folders: a server listens at its port and
 * at its socket alike, so an agent given `PGHOST=/var/run/postgresql` reaches the same database
 * as one given 127.0.0.1.
 */
export function databaseSockets(urls: Array<string | undefined>): string[] {
  const out = new Set<string>();
  for (const url of urls) {
    if (!url || !/^postgres(ql)?:\/\//.test(url)) continue;
    try {
      const u = new URL(url);
      // libpq takes the port from the query too (?host=/dir&port=5433).
      const port = Number(u.searchParams.get('port') || u.port || 5432);
      const dir = socketDirOf(u);
      const host = u.hostname.replace(/^\[|\]$/g, '');
      const dirs = dir !== undefined ? [dir] : host === '' || sameHost(host, '127.0.0.1') ? DEFAULT_SOCKET_DIRS : [];
      for (const d of dirs) out.add(path.resolve(d, `.s.PGSQL.${port}`));
    } catch {}
  }
  return [...out];
}

/**
 * PGHOST for a tree in the OS sandbox, which allows no Unix sockets: naming the folder of a
 * database's socket (PGHOST=/var/run/postgresql), or unset where libpq's default folder holds it
 * (`psql -d app`, `postgresql:///app`), it becomes 127.0.0.1, so libpq's programs (psql, pg_dump,
 * psycopg) and Node's pg reach the sandbox's door to that database, which listens there at the
 * same port (`sockets`: `databaseSockets` of the databases with a door inside).
 */
export function loopbackPgHost(
  env: Record<string, string | undefined>,
  sockets: readonly string[],
): { PGHOST?: string } {
  const dir = env.PGHOST === undefined || env.PGHOST === '' ? DEFAULT_SOCKET_DIRS[0] : env.PGHOST;
  if (dir === undefined || !dir.startsWith('/')) return {};
  return sockets.includes(path.resolve(dir, `.s.PGSQL.${env.PGPORT || '5432'}`)) ? { PGHOST: '127.0.0.1' } : {};
}
