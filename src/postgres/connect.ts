// Opening a connection: a clear error that names the server without its password, and a client
// that a dropped connection does not crash.
import type pg from 'pg';
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

/** The database URLs a run names (the --db URL, database-looking env values): their ports lead out. */
export function databaseAddresses(urls: Array<string | undefined>): Array<{ host: string; port: number }> {
  const out = new Map<string, { host: string; port: number }>();
  for (const url of urls) {
    if (!url || !/^postgres(ql)?:\/\//.test(url)) continue;
    try {
      const u = new URL(url);
      const host = u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
      const port = Number(u.port || 5432);
      out.set(`${host}:${port}`, { host, port });
    } catch {}
  }
  return [...out.values()];
}
