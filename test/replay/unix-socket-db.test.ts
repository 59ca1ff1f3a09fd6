// An agent that reaches the --db database by the server's Unix socket (PGHOST=/var/run/postgresql,
// a socket folder written in code, psql): the recorder counts it as the recorded database (no
// "not recorded" warning), `record --isolate` lets it through to that database's door, and every
// replay sends it to the sandbox database — in-process (isolation none) and in the OS sandbox,
// which allows no Unix sockets — with the real rows untouched.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { scratchDatabase, tempDir } from '../record/helpers.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'socket-db-agent.mjs');
const BWRAP = detectIsolation().level === 'bwrap';
const PSQL = spawnSync('sh', ['-c', 'command -v psql']).status === 0;

/** The folder of the server's own Unix socket, as it says (undefined: it has none this process can reach). */
async function socketFolder(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ unix_socket_directories: string }>('SHOW unix_socket_directories');
    const port = new URL(url).port || '5432';
    for (const dir of (rows[0]?.unix_socket_directories ?? '').split(',').map((d) => d.trim())) {
      if (!dir.startsWith('/')) continue;
      const probe = new pg.Client({
        host: dir,
        port: Number(port),
        database: new URL(url).pathname.slice(1),
        user: decodeURIComponent(new URL(url).username) || 'postgres',
      });
      const reached = await probe.connect().then(
        () => true,
        () => false,
      );
      await probe.end().catch(() => {});
      if (reached) return dir;
    }
    return undefined;
  } finally {
    await client.end();
  }
}

const folder = PG_URL ? await socketFolder(PG_URL) : undefined;
if (PG_URL && folder === undefined) console.warn('unix-socket-db.test.ts skipped: the server has no Unix socket here');

describe.runIf(PG_URL && folder)('an agent that reaches its database by the Unix socket', () => {
  const tmp = tempDir('tapedeck-socket-db-');
  let db: Awaited<ReturnType<typeof scratchDatabase>>;
  let real: pg.Client;
  let env: Record<string, string>;
  const notes = async () => (await real.query('SELECT id, body FROM note ORDER BY id')).rows;

  beforeAll(async () => {
    db = await scratchDatabase(
      PG_URL as string,
      'socket_db_',
      `CREATE TABLE note (id serial PRIMARY KEY, body text); INSERT INTO note (body) VALUES ('seed');`,
    );
    real = new pg.Client({ connectionString: db.url });
    await real.connect();
    const u = new URL(db.url);
    env = {
      PGHOST: folder as string,
      PGPORT: u.port || '5432',
      PGDATABASE: u.pathname.slice(1),
      PGUSER: decodeURIComponent(u.username) || 'postgres',
    };
  });
  afterAll(async () => {
    await real?.end();
    await db?.drop();
    tmp.remove();
  });

  /** Records `args` (--db given by its TCP URL), then replays it in each isolation: exact, the real rows untouched. */
  async function roundTrip(name: string, args: string[], isolate: boolean, isolations: Array<'none' | 'bwrap'>) {
    const out = path.join(tmp.dir, name);
    const recorded = await recordCommand({
      command: [process.execPath, AGENT, ...args],
      env,
      out,
      stdio: 'pipe',
      dbUrl: db.url,
      ...(isolate ? { isolate: true } : {}),
    });
    expect(recorded.exitCode, `${name}: the recorded run failed`).toBe(0);
    const rec = await readRecording(out);
    // The agent's connection is the recorded database's, not an unrecorded one a replay refuses.
    expect(rec.manifest.unrecorded ?? []).toEqual([]);
    expect(recorded.unrecorded ?? []).toEqual([]);
    // The run's row is in the recording's world.
    const added = rec.events.filter((e) => e.type === 'db.changed').map((e) => (e.payload as { op: string }).op);
    expect(added).toEqual(['insert']);
    const before = await notes();
    for (const isolation of isolations) {
      const result = await replay({
        recording: out,
        mode: 'exact',
        out: path.join(tmp.dir, `${name}-${isolation}`),
        stdio: 'pipe',
        isolation,
        env,
        timeoutMs: 120_000,
      });
      expect(result.divergences, `${name} (${isolation}): ${result.output?.stderr}`).toEqual([]);
      expect(result.worldMatches, `${name} (${isolation}): ${JSON.stringify(result.worldDiff)}`).toBe(true);
      expect(result.blockedConnections).toEqual([]);
      expect(await notes(), `${name} (${isolation}) reached the real database`).toEqual(before);
    }
  }

  it('pg configured by PGHOST alone: recorded as the database, replayed in-process and in the OS sandbox', async () => {
    await roundTrip('pg-env', ['env'], false, BWRAP ? ['none', 'bwrap'] : ['none']);
  }, 240_000);

  it('pg given the socket folder in code (no PGHOST)', async () => {
    const { PGHOST: _gone, ...rest } = env;
    const saved = env;
    env = rest;
    try {
      await roundTrip('pg-code', ['code', folder as string], false, BWRAP ? ['none', 'bwrap'] : ['none']);
    } finally {
      env = saved;
    }
  }, 240_000);

  it.runIf(BWRAP)(
    'record --isolate: pg by PGHOST and in code reach the database, and replay in the OS sandbox',
    async () => {
      await roundTrip('isolated-env', ['env'], true, ['bwrap']);
      await roundTrip('isolated-code', ['code', folder as string], true, ['bwrap']);
    },
    240_000,
  );

  it.runIf(BWRAP && PSQL)(
    'psql by PGHOST: recorded under --isolate, replayed in the OS sandbox',
    async () => {
      await roundTrip('psql', ['psql'], true, ['bwrap']);
    },
    240_000,
  );

  // The connection in a variable of the agent's own (psql "$APP_DB"): a URL naming the folder, a
  // key=value string, and a URL with no host at all (libpq's default folder, Debian's).
  it.runIf(BWRAP && PSQL)(
    'psql given a socket URL or key=value string in a variable: recorded under --isolate, replayed in the OS sandbox',
    async () => {
      const { PGHOST: _gone, ...rest } = env;
      const saved = env;
      const dsns = {
        url: `postgresql:///${env.PGDATABASE}?host=${encodeURIComponent(folder as string)}&port=${env.PGPORT}&user=${env.PGUSER}`,
        kv: `host=${folder} port=${env.PGPORT} dbname=${env.PGDATABASE} user=${env.PGUSER}`,
        ...(folder === '/var/run/postgresql' && env.PGPORT === '5432'
          ? { bare: `postgresql:///${env.PGDATABASE}` }
          : {}),
      };
      try {
        for (const [name, dsn] of Object.entries(dsns)) {
          env = { ...rest, APP_DB: dsn };
          await roundTrip(`psql-conn-${name}`, ['psql-conn'], true, ['bwrap']);
        }
      } finally {
        env = saved;
      }
    },
    360_000,
  );

  // libpq's own default folder (Debian's): psql given no host at all.
  it.runIf(BWRAP && PSQL && folder === '/var/run/postgresql')(
    "psql with no PGHOST (libpq's default socket): recorded under --isolate, replayed in the OS sandbox",
    async () => {
      const { PGHOST: _gone, ...rest } = env;
      const saved = env;
      env = rest;
      try {
        await roundTrip('psql-default', ['psql'], true, ['bwrap']);
      } finally {
        env = saved;
      }
    },
    240_000,
  );
});
