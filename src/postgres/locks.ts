// How tapedeck's runs mark themselves alive on a Postgres server, and take table locks without
// standing in the application's way.
import type pg from 'pg';

/** The advisory lock class (first key) a capture run holds: 'tapc'. */
export const CAPTURE_LOCK_CLASS = 0x74617063;
/** The advisory lock class a template sandbox's admin session holds: 'taps'. */
export const SANDBOX_LOCK_CLASS = 0x74617073;
/** Capture schemas and triggers carry the run's 8-hex key in their name. */
export const CAPTURE_SCHEMA_PREFIX = '_tapedeck_cap_';
export const CAPTURE_TRIGGER_PREFIX = 'zz_tapedeck_';
/** The application_name a recorded agent's own sessions carry: tapedeck-run-<8 hex> (capture.ts). */
export const RUN_APPLICATION_PREFIX = 'tapedeck-run-';
/** Sandbox databases and their roles: tapedeck_sbx_<8 hex>. */
export const SANDBOX_PREFIX = 'tapedeck_sbx_';

/** The signed 32-bit advisory-lock key of an 8-hex run key. */
export const lockKeyOf = (hex: string): number => Number.parseInt(hex, 16) | 0;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs a statement that takes a table lock with a short lock timeout, retrying while the
 * application holds the table: we wait in small steps and never hold a lock while waiting for
 * another, so we cannot deadlock with the application (whose transactions then never fail).
 */
export async function withLockRetry(client: pg.Client, sql: string, attempts = 150): Promise<void> {
  await client.query('SET lock_timeout = 100');
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(sql);
        return;
      } catch (error) {
        if ((error as { code?: string }).code !== '55P03' || attempt >= attempts) throw error;
        await sleep(Math.min(200, 10 * attempt));
      }
    }
  } finally {
    await client.query('SET lock_timeout = 0').catch(() => {});
  }
}
