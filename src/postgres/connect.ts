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
 * The env of a tree in the OS sandbox, which allows no Unix sockets, with every way it names a
 * database's socket turned to 127.0.0.1, where the sandbox's door to that database listens at the
 * same port (`sockets`: `databaseSockets` of the databases with a door inside):
 * - PGHOST naming the socket's folder (PGHOST=/var/run/postgresql), or unset where libpq's default
 *   folder holds it (`psql -d app`);
 * - any variable holding a database URL that names the folder (`postgresql:///app?host=/dir`,
 *   `postgres://u@%2Fdir/app`) or no host at all (`postgresql:///app`: PGHOST, else the default
 *   folder), or a key=value connection string with `host=/dir` (`psql "$APP_DSN"`).
 * So libpq's programs (psql, pg_dump, psycopg) and Node's pg reach it as they reached the socket.
 * Returns only the variables it changes.
 */
export function loopbackPgEnv(
  env: Record<string, string | undefined>,
  sockets: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  if (sockets.length === 0) return out;
  const pgHost = env.PGHOST === undefined || env.PGHOST === '' ? undefined : env.PGHOST;
  const defaultDir = pgHost ?? DEFAULT_SOCKET_DIRS[0];
  const isDoor = (dir: string | undefined, port: string | undefined): boolean =>
    dir?.startsWith('/') === true && sockets.includes(path.resolve(dir, `.s.PGSQL.${port || env.PGPORT || '5432'}`));
  if (isDoor(defaultDir, env.PGPORT)) out.PGHOST = '127.0.0.1';
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name === 'PGHOST') continue;
    const changed = /^postgres(?:ql)?:\/\//.test(value)
      ? loopbackUrl(value, defaultDir, isDoor)
      : loopbackDsn(value, isDoor);
    if (changed !== undefined) out[name] = changed;
  }
  return out;
}

/** A database URL naming a door's socket, at 127.0.0.1 instead; undefined when it names none. */
function loopbackUrl(
  value: string,
  defaultDir: string | undefined,
  isDoor: (dir: string | undefined, port: string | undefined) => boolean,
): string | undefined {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return undefined;
  }
  const named = socketDirOf(u);
  const dir = named ?? (u.hostname === '' ? defaultDir : undefined);
  if (!isDoor(dir, u.searchParams.get('port') || u.port || undefined)) return undefined;
  if (u.searchParams.get('host')?.startsWith('/')) u.searchParams.delete('host');
  // A URL with no host takes one only through its text: `postgresql:///app` parses with an
  // empty, unsettable host (a URL of a special scheme would not).
  const rest = u.href.replace(/^postgres(?:ql)?:\/\/(?:[^@/?#]*@)?[^/?#]*/, '');
  const auth = u.username === '' ? '' : `${u.username}${u.password === '' ? '' : `:${u.password}`}@`;
  return `${u.protocol}//${auth}127.0.0.1${u.port === '' ? '' : `:${u.port}`}${rest}`;
}

/** A key=value connection string (`host=/var/run/postgresql dbname=app`) naming a door's socket, at 127.0.0.1 instead. */
function loopbackDsn(
  value: string,
  isDoor: (dir: string | undefined, port: string | undefined) => boolean,
): string | undefined {
  // Only a string made of key=value pairs alone (libpq's conninfo), with a host that is a folder.
  if (!/^\s*(?:[a-z_]+\s*=\s*(?:'[^']*'|\S+)\s*)+$/i.test(value) || !/(?:^|\s)host\s*=\s*'?\//.test(value))
    return undefined;
  const host = /(?:^|\s)host\s*=\s*(?:'([^']*)'|(\S+))/.exec(value);
  const dir = host?.[1] ?? host?.[2];
  const port = /(?:^|\s)port\s*=\s*'?(\d+)/.exec(value)?.[1];
  if (host === null || !isDoor(dir, port)) return undefined;
  return value.replace(host[0], host[0].replace(/=\s*(?:'[^']*'|\S+)$/, '=127.0.0.1'));
}
