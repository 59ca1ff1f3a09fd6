// Observed capture takes a read's own rows as their images when the read returned every column of
// their table, from the text the server sent (src/record/world/observed-result.ts), instead of
// reading them again by key. The images must be exactly what that keyed read gives. Checked on a
// real server for every type converted, with edge values, in sessions whose time zone shifts by
// half hours, quarter hours and seconds (the 1900 rows in Amsterdam's local mean time), and
// against the fallback: a DateStyle that is not ISO, a type not converted, a column missing.
// Then a recorded run: a whole-row read is not read again, and its images are those of the keyed read.
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotDatabase } from '../../src/postgres/index.js';
import { record } from '../../src/record/index.js';
import { readCatalog } from '../../src/record/world/observed-catalog.js';
import { imagesFromText, utcMicros } from '../../src/record/world/observed-result.js';
import { readRecording } from '../../src/recording/index.js';
import { FIXTURES, scratchDatabase, tempDir } from './helpers.js';

const ADMIN = process.env.TAPEDECK_PG_URL;
const tmp = tempDir();
let url: string;

/** Types whose text it does not turn into the JSON form, and a value of each. */
const UNCONVERTED: Record<string, [string, string]> = {
  float8: ['float8', '0.1'],
  interval: ['interval', "'1 day'"],
  array: ['text[]', "'{a,b}'"],
  bytea: ['bytea', "'\\x00ff'"],
  money: ['money', '12.5'],
  timestamp: ['timestamp', "'2026-11-28 10:00:00'"],
  time: ['time', "'10:00'"],
  mood: ['kinds.mood', "'ok'"],
  positive: ['kinds.positive', '5'],
};

const DDL = `
CREATE SCHEMA kinds;
CREATE DOMAIN kinds.doc AS jsonb;
CREATE DOMAIN kinds.docs AS json[];
CREATE TABLE kinds.every (
  id bigserial PRIMARY KEY, i2 smallint, i4 integer, i8 bigint, n numeric, n2 numeric(10,2), t text,
  vc varchar(20), ch char(5), u uuid, b boolean, j jsonb, d date, ts timestamptz,
  ts3 timestamp(3) with time zone, js json, dj kinds.doc, jbs jsonb[], jss json[], djs kinds.doc[], dja kinds.docs
);
-- json keeps its own text (duplicate keys, spacing), held as that text like jsonb's; so do a domain
-- over jsonb, arrays of json and jsonb, an array of that domain and a domain over json[].
INSERT INTO kinds.every (i2, i4, i8, n, n2, t, vc, ch, u, b, j, d, ts, ts3, js) VALUES
  (-32768, 2147483647, -9223372036854775808, 'NaN', -0.00, 'plain', 'v', 'ab', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', true,
   '{"b": 1.10, "a": [1, "x", null], "long key": {"z": true}, "é": "\\u00e9"}', '2026-11-28', '2026-11-28 10:00:00.123456+00', '2026-11-28 10:00:00.5+00', ' {"a": 1,  "a": 2} '),
  (32767, -2147483648, 9223372036854775807, 123456789012345678901234567890.123456789, 12345678.99,
   E'line\\nbreak "quoted" \\\\ back \\u00e9 \\U0001F600', 'vvvvvvvvvvvvvvvvvvvv', 'abcde', '00000000-0000-0000-0000-000000000000', false,
   '"just a string"', '0099-01-02', '1900-01-01 00:00:00+00', '2026-06-30 23:59:59.999+05:30', '12345678901234567890.10'),
  (0, 0, 0, 0, 0, '', '', '', 'ffffffff-ffff-ffff-ffff-ffffffffffff', false, 'null', '1970-01-01', '0099-06-01 12:00:00.5+00', NULL, 'null'),
  (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (1, 1, 1, 1e-20, 1.5, 'x', 'x', 'x', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', true, '[]', '2000-02-29', '2000-02-29 23:30:00.000001-03:30', '2000-02-29 23:30:00.001-03:30', '"5"');
UPDATE kinds.every SET dj = '{"z": 1, "a": 12345678901234567890.5}', jbs = ARRAY['{"b": 1}', 'null', NULL]::jsonb[],
  jss = '{"{\\"a\\": 1,  \\"a\\": 2}","  [1, 2]"}', djs = ARRAY['"5"', '5']::kinds.doc[],
  dja = '{{"{}","null"},{NULL,"\\"x\\""}}' WHERE id = 1;
UPDATE kinds.every SET dj = 'null', jbs = '{}', jss = '{}', djs = '{}', dja = '{}' WHERE id = 2;
-- Types it does not convert, one table each: every one falls back to the keyed read.
CREATE TYPE kinds.mood AS ENUM ('ok');
CREATE DOMAIN kinds.positive AS integer CHECK (VALUE > 0);
${Object.entries(UNCONVERTED)
  .map(
    ([n, [type, value]]) =>
      `CREATE TABLE kinds.t_${n} (id integer PRIMARY KEY, v ${type}); INSERT INTO kinds.t_${n} VALUES (1, ${value});`,
  )
  .join('\n')}
`;

/** A statement as query builders make them: its text and values are getters on the class. */
class Built {
  constructor(
    private readonly sql: string,
    private readonly params: unknown[],
  ) {}
  get text(): string {
    return this.sql;
  }
  get values(): unknown[] {
    return this.params;
  }
}

/** The text of each field, as the server sent it: no type parser. */
const asText = { getTypeParser: () => (value: string) => value };

async function connect(settings: string[] = []): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (const s of settings) await client.query(s);
  return client;
}

/** Images of a read's rows from its text, as observed capture makes them (undefined: falls back). */
async function fromText(client: pg.Client, sql: string, table: string) {
  const catalog = await readCatalog(client);
  const t = [...catalog.tables.values()].find((x) => x.schema === 'kinds' && x.name === table);
  if (t === undefined) throw new Error(`no table ${table}`);
  const result = await client.query({ text: sql, rowMode: 'array', types: asText });
  const columns = result.fields.flatMap((f, at) => {
    const c = t.columns.find((col) => col.attnum === f.columnID);
    return f.tableID === t.oid && c ? [{ name: c.name, type: c.type, at, oid: f.dataTypeID, text: c.text }] : [];
  });
  return {
    images: imagesFromText(
      columns,
      t.columns.map((c) => c.name),
      result.rows as unknown[][],
    ),
    catalog,
    t,
  };
}

/** The same rows by the keyed read the images replace, in a plain session. */
async function keyed(table: string, ids: unknown[]): Promise<unknown[]> {
  const client = await connect();
  try {
    const catalog = await readCatalog(client);
    const t = [...catalog.tables.values()].find((x) => x.schema === 'kinds' && x.name === table);
    if (t === undefined) throw new Error(`no table ${table}`);
    const { rows } = await client.query(`${catalog.keyedRead(t, ['id'])} ORDER BY _tapedeck_r.id`, [ids]);
    return rows.map((r) => r.r);
  } finally {
    await client.end();
  }
}

let db: Awaited<ReturnType<typeof scratchDatabase>> | undefined;

beforeAll(async () => {
  if (!ADMIN) return;
  db = await scratchDatabase(ADMIN, 'tdprod_res_', DDL);
  url = db.url;
});

afterAll(async () => {
  await db?.drop();
  tmp.remove();
});

it('turns timestamptz text in any offset into UTC with microseconds, and nothing else', () => {
  expect(utcMicros('2026-11-28 10:00:00+00')).toBe('2026-11-28T10:00:00.000000Z');
  expect(utcMicros('2026-11-28 15:30:00.5+05:30')).toBe('2026-11-28T10:00:00.500000Z');
  expect(utcMicros('1900-01-01 00:19:32+00:19:32')).toBe('1900-01-01T00:00:00.000000Z');
  expect(utcMicros('0001-01-01 00:30:00+01')).toBeUndefined(); // before year 1 in UTC
  expect(utcMicros('2026-11-28 10:00:00+00 BC')).toBeUndefined();
  expect(utcMicros('infinity')).toBeUndefined();
  expect(utcMicros('28.11.2026 10:00:00 UTC')).toBeUndefined();
  expect(utcMicros('10000-01-01 00:00:00+00')).toBeUndefined();
});

describe.skipIf(!ADMIN)('a read’s own rows as images (pg)', () => {
  const ZONES = [
    'UTC',
    'Asia/Kolkata',
    'America/St_Johns',
    'Pacific/Chatham',
    'Europe/Amsterdam',
    'America/Los_Angeles',
  ];

  it.each(ZONES)('gives exactly the keyed read’s images, key order included, in time zone %s', async (zone) => {
    const client = await connect([`SET TimeZone = '${zone}'`, `SET DateStyle = 'ISO, DMY'`]);
    try {
      const { images } = await fromText(client, 'SELECT * FROM kinds.every ORDER BY id', 'every');
      expect(images).toBeDefined();
      const ids = (images ?? []).map((r) => r.id);
      expect(ids).toHaveLength(5);
      const expected = await keyed('every', ids);
      expect(JSON.stringify(images)).toBe(JSON.stringify(expected));
    } finally {
      await client.end();
    }
  });

  it('snapshots timestamptz with or without a precision in UTC, whatever the session’s time zone', async () => {
    const forms: string[] = [];
    for (const zone of ['UTC', 'Asia/Kolkata', 'America/St_Johns']) {
      const client = await connect([`SET TimeZone = '${zone}'`]);
      try {
        const { snapshot } = await snapshotDatabase(client, ['kinds']);
        const rows = snapshot.tables.find((t) => t.name === 'every')?.rows ?? [];
        expect(rows.map((r) => r.ts3)).toContain('2026-06-30T18:29:59.999000Z');
        forms.push(JSON.stringify(rows));
      } finally {
        await client.end();
      }
    }
    expect(new Set(forms).size).toBe(1);
  });

  it('takes the columns by name in any order, and the first of a column returned twice', async () => {
    const client = await connect();
    try {
      const { images } = await fromText(
        client,
        'SELECT dja, djs, jss, jbs, dj, js, ts3, ts, d, j, b, u, ch, vc, t, n2, n, i8, i4, i2, id, i4 FROM kinds.every WHERE id = 1',
        'every',
      );
      expect(JSON.stringify(images)).toBe(JSON.stringify(await keyed('every', ['1'])));
    } finally {
      await client.end();
    }
  });

  it('falls back to the keyed read for another DateStyle, a type it does not convert, or a column missing', async () => {
    for (const style of ['SQL, DMY', 'Postgres, MDY', 'German']) {
      const client = await connect([`SET DateStyle = '${style}'`]);
      try {
        expect((await fromText(client, 'SELECT * FROM kinds.every', 'every')).images).toBeUndefined();
      } finally {
        await client.end();
      }
    }
    const client = await connect();
    try {
      for (const n of Object.keys(UNCONVERTED))
        expect((await fromText(client, `SELECT * FROM kinds.t_${n}`, `t_${n}`)).images, n).toBeUndefined();
      expect((await fromText(client, 'SELECT id, i4 FROM kinds.every', 'every')).images).toBeUndefined();
      expect((await fromText(client, 'SELECT id, i4::text AS i4, * FROM kinds.every', 'every')).images).toBeDefined();
    } finally {
      await client.end();
    }
  });

  it('records a whole-row read without reading it again, with the images the keyed read gives, and the agent’s results as without it', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    // pool.end() resolves before its clients' sockets close: the database's drop (WITH FORCE) may
    // still reach one as an error, which a pool without a listener throws.
    pool.on('error', () => {});
    // What the agent's reads give unrecorded: parsed by pg as always (Dates, objects, strings).
    const reads3 = async () => ({
      whole: (await pool.query('SELECT * FROM kinds.every WHERE id = ANY($1::bigint[])', [[1, 2]])).rows,
      part: (await pool.query('SELECT id, i4 FROM kinds.every WHERE id = $1', [3])).rows,
      array: (await pool.query({ text: 'SELECT * FROM kinds.every WHERE id = $1', rowMode: 'array' }, [4])).rows,
      // A query builder's statement: text and values are getters on its class.
      built: (await pool.query(new Built('SELECT * FROM kinds.every WHERE id = $1', [2]))).rows,
      write: (await pool.query(new Built('UPDATE kinds.every SET i4 = i4 WHERE id = $1 RETURNING i4', [2]))).rows,
      // A callback in the config, on a client of the pool.
      called: await (async () => {
        const client = await pool.connect();
        try {
          return await new Promise<unknown[]>((resolve, reject) => {
            client.query({
              text: 'SELECT * FROM kinds.every WHERE id = $1',
              values: [3],
              callback: (error: Error | null, result: pg.QueryResult) => (error ? reject(error) : resolve(result.rows)),
            } as pg.QueryConfig);
          });
        } finally {
          client.release();
        }
      })(),
      // `types: null` is pg's default parsers.
      none: (await pool.query({ text: 'SELECT * FROM kinds.every WHERE id = $1', values: [1], types: null as never }))
        .rows,
      // As Drizzle reads: its own parsers for the statement, timestamps kept as text.
      own: (
        await pool.query({
          text: 'SELECT * FROM kinds.every WHERE id = $1',
          values: [5],
          rowMode: 'array',
          types: {
            getTypeParser: (oid: number, format?: 'text' | 'binary') =>
              oid === 1184 ? (v: string) => v : pg.types.getTypeParser(oid, format),
          },
        })
      ).rows,
    });
    const plain = await reads3();
    const reads: string[] = [];
    // tapedeck's own connections are tagged: count the keyed reads that reach them.
    const realQuery = pg.Client.prototype.query;
    const spy = function (this: pg.Client, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
      if (typeof text === 'string' && text.includes('_tapedeck_r')) reads.push(text);
      return (realQuery as (...a: unknown[]) => unknown).apply(this, args);
    };
    pg.Client.prototype.query = spy as typeof realQuery;
    try {
      const run = await record(
        {
          out: path.join(tmp.dir, 'rec'),
          name: 'kinds',
          command: [process.execPath, path.join(FIXTURES, 'observed-agent.mjs')],
        },
        reads3,
      );
      expect(run.result).toEqual(plain);
      expect(run.result.whole[0]?.ts).toBeInstanceOf(Date);
      expect(typeof run.result.own[0]?.[13]).toBe('string');
      // The part read is read again (id 3); the whole ones, as objects or arrays, with the
      // statement's own parsers or not, are not.
      expect(reads).toHaveLength(1);
      const recording = await readRecording(run.dir);
      const rows = recording.pre.db?.tables.find((t) => t.name === 'every')?.rows ?? [];
      expect(rows).toEqual(await keyed('every', ['1', '2', '3', '4', '5']));
    } finally {
      pg.Client.prototype.query = realQuery;
      await pool.end();
    }
  });
});
