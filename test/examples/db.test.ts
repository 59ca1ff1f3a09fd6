// The world's embedded database: PGlite over the wire protocol, started from a cached empty data
// directory (in the temp folder) that a damaged file cannot break.
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openWorldDatabase, pgliteCachePath } from '../../examples/world/index.js';

let dir: string;
const savedTmp = process.env.TMPDIR;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tapedeck-pglite-cache-'));
  process.env.TMPDIR = dir;
});
afterAll(async () => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  await rm(dir, { recursive: true, force: true });
});

async function roundTrip(url: string): Promise<number> {
  const clients = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
  try {
    for (const c of clients) await c.connect();
    await clients[0]!.query('CREATE TABLE t (id int PRIMARY KEY)');
    await clients[0]!.query('INSERT INTO t VALUES (1), (2)');
    const { rows } = await clients[1]!.query('SELECT count(*)::int AS n FROM t');
    return (rows[0] as { n: number }).n;
  } finally {
    for (const c of clients) await c.end();
  }
}

it('recovers from a damaged cache, rewrites it, and starts from it next time', async () => {
  expect(pgliteCachePath().startsWith(dir)).toBe(true);
  await writeFile(pgliteCachePath(), 'not a tarball');
  const first = await openWorldDatabase();
  try {
    expect(first.kind).toBe('pglite');
    expect(await roundTrip(first.url)).toBe(2);
  } finally {
    await first.close();
  }
  expect((await stat(pgliteCachePath())).size).toBeGreaterThan(1_000_000);
  expect(await readdir(dir)).toHaveLength(1);

  const second = await openWorldDatabase();
  try {
    // A fresh database every time: the table of the first one is not there.
    expect(await roundTrip(second.url)).toBe(2);
  } finally {
    await second.close();
  }
});
