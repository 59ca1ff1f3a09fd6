// An agent's database connections behave on the sandbox as on a server of their own, whatever the
// driver and pool: transactions of several connections do not mix or hang, prepared statements,
// settings and LISTEN channels stay with their connection, COPY and cursors work, a dropped
// connection leaves nothing open. Run on the PGlite sandbox (one backend shared by every
// connection) and on the server sandbox (TAPEDECK_PG_URL); what one backend cannot give two
// connections is a clear error, in bounded time.
import pg from 'pg';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DbSandbox, openDbSandbox } from '../../sandbox/index.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const EMPTY = { schemas: ['public'], ddl: [], tables: [], sequences: [] };
const WAIT_MS = 1500;

const kinds = [
  { kind: 'pglite' as const, open: () => openDbSandbox(EMPTY, { kind: 'pglite', waitMs: WAIT_MS }) },
  ...(PG_URL
    ? [{ kind: 'template' as const, open: () => openDbSandbox(EMPTY, { kind: 'template', url: PG_URL }) }]
    : []),
];

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe.each(kinds)('$kind sandbox: several connections', ({ open }) => {
  let sandbox: DbSandbox;
  const pools: Array<{ end(): Promise<unknown> }> = [];
  const poolOf = (max: number) => {
    const pool = new pg.Pool({ connectionString: sandbox.url, max });
    pools.push(pool);
    return pool;
  };
  const sqlOf = (max: number) => {
    const sql = postgres(sandbox.url, { max, onnotice: () => {} });
    pools.push({ end: () => sql.end({ timeout: 5 }) });
    return sql;
  };
  beforeAll(async () => {
    sandbox = await open();
  }, 120_000);
  afterAll(async () => {
    for (const pool of pools) await pool.end().catch(() => {});
    await sandbox?.close();
  });

  it('runs parallel tool calls, each its own BEGIN … COMMIT with named prepared statements, apart', async () => {
    const pool = poolOf(6);
    await pool.query('CREATE TABLE acct (id int PRIMARY KEY, bal int NOT NULL)');
    await pool.query('INSERT INTO acct SELECT g, 100 FROM generate_series(1, 12) g');
    const transfer = async (from: number, to: number) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query({ name: 'debit', text: 'UPDATE acct SET bal = bal - 10 WHERE id = $1', values: [from] });
        await tick();
        await client.query({ name: 'credit', text: 'UPDATE acct SET bal = bal + 10 WHERE id = $1', values: [to] });
        const { rows } = await client.query({ name: 'read', text: 'SELECT bal FROM acct WHERE id = $1', values: [to] });
        await client.query('COMMIT');
        return rows[0].bal as number;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    };
    const seen = await Promise.all([1, 2, 3, 4, 5, 6].map((i) => transfer(i, i + 6)));
    expect(seen).toEqual([110, 110, 110, 110, 110, 110]);
    const { rows } = await pool.query(
      'SELECT sum(bal)::int AS total, count(*) FILTER (WHERE bal = 90)::int AS debited FROM acct',
    );
    expect(rows[0]).toEqual({ total: 1200, debited: 6 });
  }, 60_000);

  it('keeps postgres.js pipelines apart from a connection whose queries fail', async () => {
    const sql = sqlOf(4);
    const good = Array.from({ length: 60 }, (_, i) => sql`SELECT ${i}::int AS i, ${`v${i}`}::text AS v`);
    const bad = Array.from({ length: 20 }, (_, i) =>
      sql`SELECT 1 / (${i}::int - ${i}::int) AS z`.then(
        () => 'ok',
        (e: Error) => e.message,
      ),
    );
    const rows = await Promise.all(good);
    expect(rows.map((r) => r[0])).toEqual(Array.from({ length: 60 }, (_, i) => ({ i, v: `v${i}` })));
    expect(new Set(await Promise.all(bad))).toEqual(new Set(['division by zero']));
    const again = await Promise.all(
      [1, 2, 3].map((i) => sql.begin(async (tx) => (await tx`SELECT ${i}::int AS i`)[0]?.i)),
    );
    expect(again).toEqual([1, 2, 3]);
  }, 60_000);

  it('keeps a SET with the connection that made it', async () => {
    const pool = poolOf(2);
    const a = await pool.connect();
    const b = await pool.connect();
    try {
      const base = (await b.query('SHOW TimeZone')).rows[0].TimeZone;
      await a.query("SET TIME ZONE 'Asia/Tokyo'");
      await a.query('SET statement_timeout = 12345');
      expect((await b.query('SHOW TimeZone')).rows[0].TimeZone).toBe(base);
      expect((await b.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe('0');
      expect((await a.query('SHOW TimeZone')).rows[0].TimeZone).toBe('Asia/Tokyo');
      expect((await a.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe('12345ms');
      // Through a function too, with the backend handed back and forth in between.
      const path = (await b.query('SHOW search_path')).rows[0].search_path;
      await a.query("SELECT set_config('search_path', 'pg_catalog', false)");
      expect((await b.query('SHOW search_path')).rows[0].search_path).toBe(path);
      expect((await a.query('SHOW search_path')).rows[0].search_path).toBe('pg_catalog');
      await a.query('RESET ALL');
      expect((await a.query('SHOW TimeZone')).rows[0].TimeZone).toBe(base);
      expect((await b.query('SHOW TimeZone')).rows[0].TimeZone).toBe(base);
    } finally {
      a.release(true);
      b.release(true);
    }
  }, 60_000);

  it('delivers a NOTIFY to the connections that LISTEN, and only to them', async () => {
    const pool = poolOf(2);
    const listener = new pg.Client(sandbox.url);
    const other = new pg.Client(sandbox.url);
    await listener.connect();
    await other.connect();
    try {
      const heard: string[] = [];
      const strays: string[] = [];
      listener.on('notification', (n) => heard.push(`${n.channel}:${n.payload}`));
      other.on('notification', (n) => strays.push(`${n.channel}:${n.payload}`));
      await listener.query('LISTEN jobs');
      await other.query('LISTEN "Other"');
      const sql = sqlOf(1);
      let resolveJs: (payload: string) => void = () => {};
      const viaJs = new Promise<string>((resolve) => {
        resolveJs = resolve;
      });
      await sql.listen('jobs', (payload) => resolveJs(payload));
      await pool.query("SELECT pg_notify('jobs', 'one')");
      await other.query('UNLISTEN "Other"');
      await pool.query(`NOTIFY "Other", 'lost'`);
      await pool.query("NOTIFY jobs, 'two'");
      expect(await viaJs).toBe('one');
      // A round trip on each connection: what was sent to it before has arrived.
      await listener.query('SELECT 1');
      await other.query('SELECT 1');
      expect(heard).toEqual(['jobs:one', 'jobs:two']);
      expect(strays).toEqual([]);
    } finally {
      await listener.end();
      await other.end();
    }
  }, 60_000);

  it('copies in and out with COPY … STDIN/STDOUT (postgres.js)', async () => {
    const sql = sqlOf(3);
    await sql`CREATE TABLE notes (id int PRIMARY KEY, body text)`;
    const writable = await sql`COPY notes (id, body) FROM STDIN`.writable();
    await new Promise<void>((resolve, reject) => {
      writable.on('error', reject);
      writable.write('1\tfirst\n');
      writable.write('2\tsecond line\n');
      writable.end(resolve);
    });
    const busy = Promise.all([1, 2, 3].map((i) => sql`SELECT ${i}::int AS i`));
    const readable = await sql`COPY notes TO STDOUT`.readable();
    let out = '';
    for await (const chunk of readable) out += String(chunk);
    await busy;
    expect(out).toBe('1\tfirst\n2\tsecond line\n');
    const failed = await sql`COPY missing FROM STDIN`.writable().then(
      () => 'opened',
      (e: Error) => e.message,
    );
    expect(failed).toMatch(/missing/);
    // Inside a transaction too, and what a failed COPY did is rolled back with it.
    await sql.begin(async (tx) => {
      const w = await tx`COPY notes (id, body) FROM STDIN`.writable();
      await new Promise<void>((resolve, reject) => {
        w.on('error', reject);
        w.end('3\tthird\n', resolve);
      });
      await tx`INSERT INTO notes VALUES (4, 'fourth')`;
    });
    await expect(
      sql.begin(async (tx) => {
        await tx`INSERT INTO notes VALUES (5, 'fifth')`;
        await tx`COPY nowhere FROM STDIN`.writable();
      }),
    ).rejects.toThrow(/nowhere/);
    expect((await sql`SELECT count(*)::int AS n FROM notes`)[0]).toEqual({ n: 4 });
  }, 60_000);

  it('hands each job to one SELECT … FOR UPDATE SKIP LOCKED worker', async () => {
    const pool = poolOf(4);
    await pool.query("CREATE TABLE jobs (id serial PRIMARY KEY, state text NOT NULL DEFAULT 'new', worker int)");
    await pool.query('INSERT INTO jobs (state) SELECT $1 FROM generate_series(1, 24)', ['new']);
    const work = async (worker: number) => {
      const client = await pool.connect();
      let done = 0;
      try {
        for (;;) {
          await client.query('BEGIN');
          const { rows } = await client.query(
            "SELECT id FROM jobs WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
          );
          if (rows.length === 0) {
            await client.query('COMMIT');
            return done;
          }
          await client.query("UPDATE jobs SET state = 'done', worker = $2 WHERE id = $1", [rows[0].id, worker]);
          await client.query('COMMIT');
          done++;
          await tick();
        }
      } finally {
        client.release();
      }
    };
    const counts = await Promise.all([1, 2, 3, 4].map(work));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(24);
    const { rows } = await pool.query("SELECT count(*)::int AS n FROM jobs WHERE state = 'done'");
    expect(rows[0].n).toBe(24);
  }, 60_000);

  it('rolls back what a connection dropped inside its transaction left, and holds nothing', async () => {
    const pool = poolOf(2);
    await pool.query('CREATE TABLE drops (id int PRIMARY KEY)');
    const client = new pg.Client(sandbox.url);
    client.on('error', () => {});
    await client.connect();
    await client.query('BEGIN');
    await client.query('INSERT INTO drops VALUES (1)');
    await client.query({ name: 'left', text: 'SELECT $1::int AS x', values: [1] });
    const closed = new Promise((resolve) => client.once('end', resolve));
    (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    await closed;
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM drops');
    expect(rows[0].n).toBe(0);
    // Another connection may use the same statement name.
    expect((await pool.query({ name: 'left', text: 'SELECT $1::text AS y', values: ['b'] })).rows[0]).toEqual({
      y: 'b',
    });
  }, 60_000);

  it('reads a cursor in batches while other connections wait their turn', async () => {
    const sql = sqlOf(3);
    let n = 0;
    const others = Promise.all([1, 2].map((i) => sql`SELECT ${i}::int AS i`));
    for await (const rows of sql`SELECT g FROM generate_series(1, 95) g`.cursor(20)) n += rows.length;
    expect(n).toBe(95);
    expect((await others).map((r) => r[0]?.i)).toEqual([1, 2]);
  }, 60_000);
});

describe('pglite sandbox: what one backend cannot give two connections', () => {
  let sandbox: DbSandbox;
  beforeAll(async () => {
    sandbox = await openDbSandbox(EMPTY, { kind: 'pglite', waitMs: WAIT_MS });
  }, 120_000);
  afterAll(() => sandbox?.close());

  it('fails, in bounded time, a query that waits on a transaction held open by the same program', async () => {
    const a = new pg.Client(sandbox.url);
    const b = new pg.Client(sandbox.url);
    await a.connect();
    await b.connect();
    try {
      await a.query('CREATE TABLE waits (id int)');
      await a.query('BEGIN');
      await a.query('INSERT INTO waits VALUES (1)');
      const started = Date.now();
      const error = await b.query('SELECT count(*) FROM waits').then(
        () => undefined,
        (e: Error & { code?: string }) => e,
      );
      expect(error?.code).toBe('55P03');
      expect(error?.message).toMatch(/PGLITE_ONE_BACKEND.*--db/);
      expect(Date.now() - started).toBeLessThan(WAIT_MS + 10_000);
      // An extended-protocol query too; the connection stays usable after its error.
      await expect(b.query('SELECT $1::int AS x', [1])).rejects.toMatchObject({ code: '55P03' });
      // A query still waiting for its turn can be cancelled (a CancelRequest with b's key).
      const waiting = b.query('SELECT 2 AS two').then(
        () => 'ran',
        (e: Error & { code?: string }) => e.code,
      );
      const { processID, secretKey } = b as unknown as { processID: number; secretKey: number };
      const request = Buffer.alloc(16);
      request.writeInt32BE(16, 0);
      request.writeInt32BE(80877102, 4);
      request.writeInt32BE(processID, 8);
      request.writeInt32BE(secretKey, 12);
      const { default: net } = await import('node:net');
      const cancel = net.connect({ host: sandbox.host, port: sandbox.port });
      await new Promise((resolve) => cancel.end(request, () => resolve(undefined)));
      await new Promise((resolve) => cancel.once('close', resolve));
      expect(await waiting).toBe('57014');
      await a.query('COMMIT');
      expect((await b.query('SELECT count(*)::int AS n FROM waits')).rows[0].n).toBe(1);
    } finally {
      await a.end();
      await b.end();
    }
  }, 60_000);

  it('refuses temporary tables of a second connection with a clear error', async () => {
    const a = new pg.Client(sandbox.url);
    const b = new pg.Client(sandbox.url);
    await a.connect();
    await b.connect();
    try {
      await a.query('CREATE TEMP TABLE scratch (x int)');
      await expect(b.query('CREATE TEMP TABLE scratch (y int)')).rejects.toThrow(/PGLITE_SHARED_SESSION/);
      await b.query('BEGIN');
      await b.query('CREATE TEMP TABLE staging (y int) ON COMMIT DROP');
      await b.query('COMMIT');
    } finally {
      await a.end();
    }
    // The first connection's temporary tables went with it.
    await b.query('CREATE TEMP TABLE scratch (y int)');
    await b.end();
  }, 60_000);
});

/** A bare wire-protocol client: what drivers send, message by message, to see the answers' types. */
async function wireClient(url: string) {
  const { default: net } = await import('node:net');
  const u = new URL(url);
  const socket = net.connect({ host: u.hostname, port: Number(u.port) });
  await new Promise((resolve) => socket.once('connect', resolve));
  let buffered = Buffer.alloc(0);
  const messages: Array<{ type: string; body: Buffer }> = [];
  const waiting: Array<() => void> = [];
  socket.on('data', (data) => {
    buffered = Buffer.concat([buffered, data]);
    while (buffered.length >= 5 && buffered.length >= 1 + buffered.readInt32BE(1)) {
      const end = 1 + buffered.readInt32BE(1);
      messages.push({ type: String.fromCharCode(buffered[0] as number), body: buffered.subarray(5, end) });
      buffered = buffered.subarray(end);
      for (const wake of waiting.splice(0)) wake();
    }
  });
  const message = (type: string, ...parts: Buffer[]) => {
    const body = Buffer.concat(parts);
    const head = Buffer.alloc(5);
    head.write(type, 0, 'latin1');
    head.writeInt32BE(body.length + 4, 1);
    return Buffer.concat([head, body]);
  };
  const str = (s: string) => Buffer.from(`${s}\0`);
  const int16 = (n: number) => Buffer.from([n >> 8, n & 255]);
  /** Sends, then collects the answers up to ReadyForQuery: their types, and the error's message. */
  const send = async (...frames: Buffer[]) => {
    socket.write(Buffer.concat(frames));
    for (;;) {
      const at = messages.findIndex((m) => m.type === 'Z');
      if (at >= 0) {
        const got = messages.splice(0, at + 1);
        const error = got.find((m) => m.type === 'E')?.body.toString('utf8');
        const data = got.filter((m) => m.type === 'D').map((m) => m.body.subarray(6).toString('utf8'));
        return { types: got.map((m) => m.type).join(''), error, data };
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };
  const startup = Buffer.alloc(8);
  startup.writeInt32BE(196608, 4);
  const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
  startup.writeInt32BE(8 + params.length, 0);
  await send(Buffer.concat([startup, params]));
  return {
    parse: (name: string, sql: string) => message('P', str(name), str(sql), int16(0)),
    bind: (portal: string, statement: string) =>
      message('B', str(portal), str(statement), int16(0), int16(0), int16(0)),
    execute: (portal: string) => message('E', str(portal), Buffer.alloc(4)),
    sync: () => message('S'),
    send,
    end: () => socket.end(message('X')),
  };
}

describe('pglite sandbox: statements on the wire', () => {
  let sandbox: DbSandbox;
  beforeAll(async () => {
    sandbox = await openDbSandbox(EMPTY, { kind: 'pglite', waitMs: WAIT_MS });
  }, 120_000);
  afterAll(() => sandbox?.close());

  it('binds a connection its own unnamed statement, never another connection’s, and keeps named ones apart', async () => {
    const a = await wireClient(sandbox.url);
    const b = await wireClient(sandbox.url);
    try {
      expect((await a.send(a.parse('', 'SELECT 1 AS a'), a.sync())).types).toBe('1Z');
      expect((await b.send(b.parse('', "SELECT 'b' AS b"), b.sync())).types).toBe('1Z');
      // The backend's unnamed statement was b's last: a still binds its own, as on a server.
      expect((await a.send(a.bind('', ''), a.execute(''), a.sync())).data).toEqual(['1']);
      expect((await b.send(b.bind('', ''), b.execute(''), b.sync())).data).toEqual(['b']);
      expect((await a.send(a.bind('', ''), a.execute(''), a.sync())).data).toEqual(['1']);
      const fresh = await wireClient(sandbox.url);
      const none = await fresh.send(fresh.bind('', ''), fresh.execute(''), fresh.sync());
      expect(none.error).toMatch(/does not exist/);
      fresh.end();
      // One statement name, two connections, two texts.
      await a.send(a.parse('same', 'SELECT 10'), a.sync());
      await b.send(b.parse('same', 'SELECT 20'), b.sync());
      expect((await a.send(a.bind('p', 'same'), a.execute('p'), a.sync())).data).toEqual(['10']);
      expect((await b.send(b.bind('p', 'same'), b.execute('p'), b.sync())).data).toEqual(['20']);
    } finally {
      a.end();
      b.end();
    }
  }, 60_000);
});
