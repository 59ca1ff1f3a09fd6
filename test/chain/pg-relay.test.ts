// The Postgres relay: a client reaches the current sandbox database whatever it names; retarget moves it.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DbSandbox, openDbSandbox } from '../../sandbox/db.js';
import { pgTargetOf, startPgRelay } from '../../sandbox/pg-relay.js';
import { notesSnapshot } from './fixtures.js';

async function notes(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ body: string }>('SELECT body FROM app.notes ORDER BY id')).rows.map((r) => r.body);
  } finally {
    await client.end();
  }
}

const server = process.env.TAPEDECK_PG_URL;
const kinds: Array<{ kind: 'pglite' | 'template'; url?: string }> = [
  { kind: 'pglite' },
  ...(server ? [{ kind: 'template' as const, url: server }] : []),
];

describe.each(kinds)('the Postgres relay ($kind sandbox)', ({ kind, url }) => {
  let first: DbSandbox;
  let second: DbSandbox;
  beforeAll(async () => {
    first = await openDbSandbox(notesSnapshot('first world'), { kind, ...(url ? { url } : {}) });
    second = await openDbSandbox(notesSnapshot('second world'), { kind, ...(url ? { url } : {}) });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
  });

  it('takes a client to the sandbox whatever database and user it names', async () => {
    const seen: Array<{ database?: string; user?: string }> = [];
    const relay = await startPgRelay(pgTargetOf(first.url), { onConnect: (c) => seen.push(c) });
    try {
      // The agent's own URL for the real database: only the relay's address is the sandbox's.
      expect(await notes(`postgres://app_user:secret@127.0.0.1:${relay.port}/production`)).toEqual(['first world']);
      expect(seen).toEqual([{ database: 'production', user: 'app_user' }]);
      expect(await notes(relay.url())).toEqual(['first world']);
    } finally {
      await relay.close();
    }
  });

  it('moves to the next database on retarget, cutting the connections to the last one', async () => {
    const relay = await startPgRelay(pgTargetOf(first.url));
    const pool = new pg.Pool({ connectionString: relay.url(), max: 2 });
    pool.on('error', () => {});
    try {
      expect((await pool.query('SELECT body FROM app.notes')).rows).toEqual([{ body: 'first world' }]);
      await pool.query("UPDATE app.notes SET body = 'written in the first'");
      relay.retarget(pgTargetOf(second.url));
      // The pool's idle connection was cut; its next query takes a new one, to the new database.
      let rows: unknown[] = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          rows = (await pool.query('SELECT body FROM app.notes')).rows;
          break;
        } catch {}
      }
      expect(rows).toEqual([{ body: 'second world' }]);
      expect(await notes(first.url)).toEqual(['written in the first']);
      relay.retarget(undefined);
      await expect(notes(relay.url())).rejects.toThrow(/no sandbox database is attached/);
    } finally {
      await pool.end();
      await relay.close();
    }
  });
});
