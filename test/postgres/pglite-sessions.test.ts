// What a Postgres session holds stays with its connection on the sandbox, as on a server: SQL-level
// prepared statements, cursors (held ones too), session advisory locks, temporary objects; and a
// dropped connection's end them. The same test runs on the PGlite sandbox (one backend shared by
// every connection) and on the server sandbox (TAPEDECK_PG_URL), the oracle; where one backend
// cannot keep two sessions apart, the PGlite sandbox refuses with a coded error, never shares.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DbSandbox, openDbSandbox } from '../../sandbox/index.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const EMPTY = { schemas: ['public'], ddl: [], tables: [], sequences: [] };

const kinds = [
  { kind: 'pglite' as const, open: () => openDbSandbox(EMPTY, { kind: 'pglite', waitMs: 1500 }) },
  ...(PG_URL
    ? [{ kind: 'template' as const, open: () => openDbSandbox(EMPTY, { kind: 'template', url: PG_URL }) }]
    : []),
];

type PgError = Error & { code?: string };
const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: PgError) => e,
  );

describe.each(kinds)('$kind sandbox: a session’s own objects', ({ kind, open }) => {
  let sandbox: DbSandbox;
  const clients: pg.Client[] = [];
  const connect = async (applicationName?: string) => {
    const client = new pg.Client({
      connectionString: sandbox.url,
      ...(applicationName ? { application_name: applicationName } : {}),
    });
    client.on('error', () => {});
    await client.connect();
    clients.push(client);
    return client;
  };
  /**
   * Ends a connection and waits until the server saw it go: a round trip on another (PGlite's one
   * backend), and on a real server until its backend has exited, which happens after the socket
   * closes (its session locks and objects go then; under load that takes a while).
   */
  const drop = async (client: pg.Client, after: pg.Client) => {
    const pid =
      kind === 'pglite'
        ? undefined
        : (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
    await client.end();
    await after.query('SELECT 1');
    const deadline = Date.now() + 30_000;
    while (pid !== undefined && Date.now() < deadline) {
      const left = await after.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid]);
      if (left.rowCount === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  beforeAll(async () => {
    sandbox = await open();
  }, 120_000);
  afterAll(async () => {
    for (const client of clients) await client.end().catch(() => {});
    await sandbox?.close();
  });

  it('keeps SQL-level PREPARE names apart, and DEALLOCATE ALL takes only its own', async () => {
    const a = await connect();
    const b = await connect();
    await a.query('PREPARE pick (int) AS SELECT $1 * 10 AS v');
    await b.query(`PREPARE "Pick" AS SELECT 'b' AS v`);
    await b.query(`PREPARE pick AS SELECT 'b' AS v`);
    await a.query('PREPARE a_only AS SELECT 1 AS v');
    expect((await a.query('EXECUTE pick(4)')).rows).toEqual([{ v: 40 }]);
    // A name is a name, whatever it holds.
    await b.query(`PREPARE "odd""; DROP TABLE x; --" AS SELECT 5 AS v`);
    expect((await b.query(`/* run */ EXECUTE "odd""; DROP TABLE x; --"`)).rows).toEqual([{ v: 5 }]);
    expect((await b.query('EXECUTE PICK')).rows).toEqual([{ v: 'b' }]);
    expect((await b.query('EXPLAIN (COSTS OFF) EXECUTE pick')).rows.length).toBeGreaterThan(0);
    const missing = await failure(b.query('EXECUTE a_only'));
    expect(missing?.code).toBe('26000');
    expect(missing?.message).toBe('prepared statement "a_only" does not exist');
    await b.query('CREATE TABLE picked AS EXECUTE pick');
    expect((await a.query('SELECT v FROM picked')).rows).toEqual([{ v: 'b' }]);
    // A driver's protocol-level statement of one connection outlives another's DEALLOCATE ALL.
    expect((await a.query({ name: 'named', text: 'SELECT $1::int + 1 AS v', values: [1] })).rows).toEqual([{ v: 2 }]);
    await b.query('DEALLOCATE pick');
    expect((await a.query('EXECUTE pick(5)')).rows).toEqual([{ v: 50 }]);
    await b.query('DEALLOCATE ALL');
    expect((await failure(b.query('EXECUTE "Pick"')))?.code).toBe('26000');
    expect((await a.query('EXECUTE pick(6)')).rows).toEqual([{ v: 60 }]);
    expect((await a.query({ name: 'named', text: 'SELECT $1::int + 1 AS v', values: [2] })).rows).toEqual([{ v: 3 }]);
    // What a dropped connection prepared goes with it.
    await drop(a, b);
    const { rows } = await b.query<{ name: string }>('SELECT name FROM pg_prepared_statements');
    expect(rows.filter((r) => r.name.endsWith('a_only') || r.name.endsWith('pick'))).toEqual([]);
  }, 60_000);

  it('keeps cursors, held ones too, with the connection that declared them', async () => {
    const a = await connect();
    const b = await connect();
    await a.query('CREATE TABLE marks (id int PRIMARY KEY, n int NOT NULL)');
    await a.query('INSERT INTO marks SELECT g, 0 FROM generate_series(1, 5) g');
    await a.query('BEGIN');
    await a.query('DECLARE held_a CURSOR WITH HOLD FOR SELECT id FROM marks ORDER BY id');
    await a.query('COMMIT');
    expect((await a.query('FETCH 2 FROM held_a')).rows).toEqual([{ id: 1 }, { id: 2 }]);
    const unseen = await failure(b.query('FETCH 1 FROM held_a'));
    expect(unseen?.code).toBe('34000');
    expect(unseen?.message).toBe('cursor "held_a" does not exist');
    expect((await failure(b.query('CLOSE held_a')))?.code).toBe('34000');
    // The same name on another connection is another cursor; WHERE CURRENT OF finds its own.
    await b.query('BEGIN');
    await b.query('DECLARE held_a CURSOR FOR SELECT id FROM marks ORDER BY id DESC FOR UPDATE');
    await b.query('MOVE 1 IN held_a');
    expect((await b.query('FETCH NEXT FROM held_a')).rows).toEqual([{ id: 4 }]);
    await b.query('UPDATE marks SET n = n + 1 WHERE CURRENT OF held_a');
    await b.query('CLOSE held_a');
    await b.query('COMMIT');
    // CLOSE ALL closes the connection's own cursors; one backend would close another's too: refused.
    const closeAll = await failure(b.query('CLOSE ALL'));
    if (kind === 'pglite') expect(closeAll?.message).toMatch(/PGLITE_SHARED_SESSION.*CLOSE ALL/);
    else expect(closeAll).toBeUndefined();
    expect((await a.query('FETCH ALL FROM held_a')).rows).toEqual([{ id: 3 }, { id: 4 }, { id: 5 }]);
    expect((await b.query('SELECT id FROM marks WHERE n = 1')).rows).toEqual([{ id: 4 }]);
    await drop(a, b);
    const { rows } = await b.query<{ name: string }>('SELECT name FROM pg_cursors');
    expect(rows.filter((r) => r.name.endsWith('held_a'))).toEqual([]);
    await b.query('BEGIN');
    await b.query('DECLARE mine CURSOR FOR SELECT 1');
    await b.query('CLOSE ALL');
    await b.query('COMMIT');
  }, 60_000);

  it('holds a session advisory lock for one connection only, and lets it go with it', async () => {
    const a = await connect();
    const b = await connect();
    const c = await connect();
    // tapedeck's tracker marks its run alive with a lock of its own class: no agent's business.
    const own = await connect('tapedeck test');
    await own.query('SELECT pg_advisory_lock($1, 5)', [0x74617063]);
    const tryLock = async (client: pg.Client, key: number) =>
      (await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1) AS got', [key])).rows[0]?.got;
    expect(await tryLock(a, 42)).toBe(true);
    const other = await failure(tryLock(b, 42).then((got) => expect(got).toBe(false)));
    if (kind === 'pglite') {
      // One session cannot say "not yours": refused, never a false "got it".
      expect(other?.message).toMatch(/PGLITE_ADVISORY_LOCK/);
      expect((other as PgError).code).toBe('55P03');
    } else expect(other).toBeUndefined();
    expect((await a.query('SELECT pg_advisory_unlock(42) AS ok')).rows).toEqual([{ ok: true }]);
    expect(await tryLock(b, 42)).toBe(true);
    // Another's lock is not this connection's to unlock.
    const unlock = await failure(
      a.query('SELECT pg_advisory_unlock(42) AS ok').then((r) => expect(r.rows).toEqual([{ ok: false }])),
    );
    if (kind === 'pglite') expect(unlock?.message).toMatch(/PGLITE_ADVISORY_LOCK/);
    else expect(unlock).toBeUndefined();
    // Its holder dropped without unlocking: the lock is free.
    await drop(b, c);
    // The server frees it as it ends the dropped connection's session, just after the socket closed.
    const freed = async () => {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
        if (await tryLock(c, 42).catch(() => false)) return true;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return false;
    };
    expect(await freed()).toBe(true);
    // Taken once, by this connection: nothing of the dropped one's is left to unlock.
    const unlockTwice = 'SELECT pg_advisory_unlock(42) AS first, pg_advisory_unlock(42) AS second';
    expect((await c.query(unlockTwice)).rows).toEqual([{ first: true, second: false }]);
    expect((await c.query('SELECT pg_advisory_unlock_all()')).rowCount).toBe(1);
    // Transaction-level ones end with their transaction.
    await a.query('BEGIN');
    await a.query('SELECT pg_advisory_xact_lock(7)');
    await a.query('COMMIT');
    expect(await tryLock(c, 7)).toBe(true);
    await c.query('SELECT pg_advisory_unlock(7)');
  }, 60_000);

  it('keeps temporary views and sequences with their connection', async () => {
    const a = await connect();
    const b = await connect();
    const own = await connect('tapedeck test');
    await own.query('CREATE FUNCTION pg_temp.tapedeck_probe() RETURNS int LANGUAGE sql AS $$SELECT 7$$');
    await a.query('CREATE OR REPLACE TEMP VIEW scratch_v AS SELECT 1 AS x');
    await a.query('CREATE TEMPORARY SEQUENCE scratch_s');
    await a.query('SELECT 2 AS y INTO TEMP scratch_t');
    expect((await a.query(`SELECT nextval('scratch_s')::int AS n`)).rows).toEqual([{ n: 1 }]);
    for (const sql of [
      'CREATE TEMP VIEW other_v AS SELECT 2 AS x',
      'CREATE SEQUENCE pg_temp.other_s',
      // ON COMMIT DROP in one statement does not let the next through.
      'CREATE TEMP TABLE gone (x int) ON COMMIT DROP; CREATE TEMP TABLE other_t (y int)',
    ]) {
      const refused = await failure(b.query(sql));
      if (kind === 'pglite') expect(refused?.message).toMatch(/PGLITE_SHARED_SESSION/);
      else expect(refused).toBeUndefined();
    }
    await drop(a, b);
    // Its temporary objects went with it; tapedeck's own did not.
    expect((await failure(b.query('SELECT * FROM scratch_v')))?.code).toBe('42P01');
    await b.query('CREATE TEMP VIEW scratch_v AS SELECT 3 AS x');
    expect((await b.query('SELECT x FROM scratch_v')).rows).toEqual([{ x: 3 }]);
    expect((await own.query('SELECT pg_temp.tapedeck_probe() AS p')).rows).toEqual([{ p: 7 }]);
  }, 60_000);
});

describe('pglite sandbox: tapedeck’s own connection beside an open transaction', () => {
  let sandbox: DbSandbox;
  beforeAll(async () => {
    sandbox = await openDbSandbox(EMPTY, { kind: 'pglite' });
  }, 120_000);
  afterAll(() => sandbox?.close());

  it('fails at once, not after the 15 s wait, to apply a tool call’s changes while the agent holds a transaction', async () => {
    const agent = new pg.Client(sandbox.url);
    await agent.connect();
    try {
      await sandbox.query('CREATE TABLE orders (id int PRIMARY KEY)');
      await agent.query('BEGIN');
      await agent.query('INSERT INTO orders VALUES (1)');
      const started = Date.now();
      const error = await failure(
        sandbox.apply([{ schema: 'public', table: 'orders', op: 'insert', key: { id: 2 }, after: { id: 2 } }]),
      );
      expect(error?.message).toMatch(/PGLITE_ONE_BACKEND.*tool call.*--db postgres/);
      expect(Date.now() - started).toBeLessThan(8_000);
      await agent.query('COMMIT');
      expect(await sandbox.query('SELECT count(*)::int AS n FROM orders')).toEqual([{ n: 1 }]);
    } finally {
      await agent.end();
    }
  }, 60_000);
});
