// A database sandbox built from a recording is data, never code: on a real server it is a database
// of its own, owned by a role of its own, reachable only through a gate that admits exactly that
// database as that role; on PGlite and on a server alike, recorded SQL text is never run and
// sequences hand out the ids the recorded run got.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DbSandbox, openDbSandbox } from '../../sandbox/index.js';
import type { DbSnapshot } from '../../src/recording/index.js';
import { deadSandboxes } from '../support/pg-leftovers.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-sbx-test-'));
const pwned = path.join(tmp, 'pwned');
process.env.TAPEDECK_STATE_DIR ??= path.join(tmp, 'state');

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A snapshot as a hostile recording could write it: SQL in every text field that reaches a sandbox. */
function hostileSnapshot(victim: string): DbSnapshot {
  return {
    schemas: ['shop'],
    ddl: [
      `DROP DATABASE "${victim}"`,
      `COPY (SELECT 1) TO PROGRAM 'touch ${pwned}'`,
      'CREATE TABLE "shop"."items" (id integer)',
    ],
    tables: [
      {
        schema: 'shop',
        name: 'items',
        columns: [
          {
            name: 'id',
            type: 'integer',
            nullable: false,
            default: { kind: 'sequence', schema: 'shop', name: 'item_ids' },
          },
          { name: 'name', type: `text); DROP DATABASE "${victim}"; --`, nullable: true },
          {
            name: 'note',
            type: `text DEFAULT pg_read_file('/etc/passwd')`,
            nullable: true,
            default: { kind: 'value', value: "x'); DROP TABLE shop.items; --" },
          },
        ],
        primaryKey: ['id'],
        rows: [
          { id: 1, name: 'tent', note: 'a' },
          { id: 2, name: "'); DROP DATABASE x; --", note: null },
        ],
      },
      {
        schema: 'shop',
        name: 'orders',
        columns: [
          { name: 'id', type: 'bigint', nullable: false, identity: 'always' },
          { name: 'item_id', type: 'integer', nullable: false },
        ],
        primaryKey: ['id'],
        foreignKeys: [
          {
            name: 'orders_item',
            columns: ['item_id'],
            references: { schema: 'shop', table: 'items', columns: ['id'] },
          },
        ],
        rows: [{ id: 7, item_id: 1 }],
      },
    ],
    sequences: [
      // Not owned by any column, and ahead of the rows (ids 3..40 were drawn and rolled back).
      {
        schema: 'shop',
        name: 'item_ids',
        type: 'bigint',
        start: '1',
        increment: '1',
        min: '1',
        max: '1000',
        cycle: false,
        last: '40',
        called: true,
      },
      {
        schema: 'shop',
        name: 'orders_id_seq',
        type: 'bigint',
        start: '1',
        increment: '1',
        min: '1',
        max: '9223372036854775807',
        cycle: false,
        last: '9',
        called: true,
        ownedBy: { table: 'orders', column: 'id' },
        identity: true,
      },
    ],
  };
}

async function exerciseSandbox(db: DbSandbox): Promise<void> {
  const agent = new pg.Client({ connectionString: db.url });
  await agent.connect();
  try {
    // The ids the recorded run got next, from a sequence no column owns and from an identity.
    expect((await agent.query("INSERT INTO shop.items (name) VALUES ('new') RETURNING id")).rows).toEqual([{ id: 41 }]);
    expect((await agent.query('INSERT INTO shop.orders (item_id) VALUES (41) RETURNING id')).rows).toEqual([
      { id: '10' },
    ]);
    // A recorded type that is no type became text; the recorded default is a plain constant.
    const { rows } = await agent.query<{ type: string; note: string }>(
      `SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = 'shop.items'::regclass AND attname = 'name'`,
    );
    expect(rows[0]?.type).toBe('text');
    expect((await agent.query('SELECT note FROM shop.items WHERE id = 41')).rows[0]).toEqual({
      note: "x'); DROP TABLE shop.items; --",
    });
    await expect(agent.query('INSERT INTO shop.orders (item_id) VALUES (999)')).rejects.toThrow(/foreign key/);
  } finally {
    await agent.end();
  }
  expect(existsSync(pwned)).toBe(false);
}

describe('a PGlite sandbox', () => {
  it('is built from the description: recorded SQL is not run, sequences continue where the run was', async () => {
    const db = await openDbSandbox(hostileSnapshot('postgres'), { kind: 'pglite' });
    try {
      await exerciseSandbox(db);
    } finally {
      await db.close();
    }
  });
});

describe.runIf(PG_URL)('a sandbox on a real server (template mode)', () => {
  let admin: pg.Client;
  const victim = `utst_victim_${process.pid}`;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${victim}`);
  });

  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${victim} WITH (FORCE)`);
    await admin.end();
  });

  it('runs nothing of the recording on the server, and hands out the recorded ids', async () => {
    const db = await openDbSandbox(hostileSnapshot(victim), { kind: 'template', url: PG_URL as string });
    try {
      await exerciseSandbox(db);
    } finally {
      await db.close();
    }
    const { rows } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [victim]);
    expect(rows).toHaveLength(1);
    expect(await deadSandboxes(admin)).toEqual([]);
  });

  it('lets the agent reach its own database as its own unprivileged role, and nothing else', async () => {
    const db = await openDbSandbox(hostileSnapshot(victim), { kind: 'template', url: PG_URL as string });
    try {
      const url = new URL(db.url);
      const name = url.pathname.slice(1);
      expect(url.username).toBe(name);
      const agent = new pg.Client({ connectionString: db.url });
      await agent.connect();
      try {
        const { rows } = await agent.query<{ super: boolean; createdb: boolean; createrole: boolean; owner: string }>(
          `SELECT rolsuper AS super, rolcreatedb AS createdb, rolcreaterole AS createrole,
                  (SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()) AS owner
             FROM pg_roles WHERE rolname = current_user`,
        );
        expect(rows[0]).toEqual({ super: false, createdb: false, createrole: false, owner: name });
        await expect(agent.query(`COPY (SELECT 1) TO PROGRAM 'touch ${pwned}'`)).rejects.toThrow(
          /superuser|pg_execute_server_program/,
        );
        await expect(agent.query(`DROP DATABASE ${victim}`)).rejects.toThrow(
          /must be owner|permission denied|cannot drop/,
        );
        await expect(agent.query("SELECT pg_read_file('/etc/passwd')")).rejects.toThrow(/permission denied/);
      } finally {
        await agent.end();
      }
      // Through the gate: another database, another role, a replication connection: all refused.
      const attempts: Array<[string, (u: URL) => void]> = [
        ['another database', (u) => (u.pathname = `/${victim}`)],
        ['the postgres database', (u) => (u.pathname = '/postgres')],
        [
          'another role',
          (u) => {
            u.username = 'postgres';
            u.password = '';
          },
        ],
        ['a replication connection', (u) => u.searchParams.set('replication', 'database')],
      ];
      for (const [what, change] of attempts) {
        const u = new URL(db.url);
        change(u);
        const client = new pg.Client({ connectionString: u.toString() });
        const outcome = await client.connect().then(
          () => 'connected',
          (error: Error) => error.message,
        );
        await client.end().catch(() => {});
        expect(outcome, what).toMatch(/tapedeck sandbox/);
      }
    } finally {
      await db.close();
    }
    expect(await deadSandboxes(admin)).toEqual([]);
  });

  it('builds tables in schema public, which PostgreSQL 15+ gives to pg_database_owner, and the agent writes them', async () => {
    const snapshot: DbSnapshot = {
      schemas: ['public'],
      ddl: [],
      tables: [
        {
          schema: 'public',
          name: 'checkpoint_blobs',
          columns: [
            { name: 'thread_id', type: 'text', nullable: false },
            { name: 'blob', type: 'bytea', nullable: true },
          ],
          primaryKey: ['thread_id'],
          rows: [{ thread_id: 't1', blob: '\\x00ff' }],
        },
      ],
    };
    const db = await openDbSandbox(snapshot, { kind: 'template', url: PG_URL as string });
    try {
      const agent = new pg.Client({ connectionString: db.url });
      await agent.connect();
      try {
        await agent.query("INSERT INTO public.checkpoint_blobs VALUES ('t2', '\\x01')");
        await agent.query('CREATE TABLE public.checkpoint_migrations (v integer)');
        const { rows } = await agent.query<{ thread_id: string; blob: Buffer }>(
          'SELECT thread_id, blob FROM public.checkpoint_blobs ORDER BY thread_id',
        );
        expect(rows.map((r) => [r.thread_id, r.blob.toString('hex')])).toEqual([
          ['t1', '00ff'],
          ['t2', '01'],
        ]);
        // Still no more than the owner of its own database.
        const { rows: role } = await agent.query<{ inherit: boolean; super: boolean }>(
          'SELECT rolinherit AS inherit, rolsuper AS super FROM pg_roles WHERE rolname = current_user',
        );
        expect(role[0]).toEqual({ inherit: false, super: false });
        await expect(agent.query(`DROP DATABASE ${victim}`)).rejects.toThrow(/must be owner|permission denied/);
      } finally {
        await agent.end();
      }
    } finally {
      await db.close();
    }
    expect(await deadSandboxes(admin)).toEqual([]);
  });

  it('refuses a server role that cannot create roles, saying what --db needs', async () => {
    const role = `utst_nocreate_${process.pid}`;
    await admin.query(`CREATE ROLE ${role} LOGIN CREATEDB`);
    try {
      const u = new URL(PG_URL as string);
      u.username = role;
      await expect(openDbSandbox(hostileSnapshot(victim), { kind: 'template', url: u.toString() })).rejects.toThrow(
        /CREATEDB and CREATEROLE/,
      );
    } finally {
      await admin.query(`DROP ROLE ${role}`);
    }
    expect(await deadSandboxes(admin)).toEqual([]);
  });
});
