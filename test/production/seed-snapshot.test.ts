// A production run recorded with the observed world, replayed over a named development snapshot
// (#17: "seeded from … the rows the run observed, or from a named development snapshot"). The
// run reads and writes a few rows of a "production" database; `tapedeck snapshot save` takes a
// development database with other rows; replays seeded from it (PGlite through the real CLI, the
// server sandbox in process) find the snapshot's rows where the run never looked and the run's own
// rows where it did, stay exact, and touch neither database. Bad names, a missing snapshot, a
// changed db.json and a snapshot without a table the recording needs are one-line errors (exit 2).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record } from '../../src/record/index.js';
import { readRecording, stagingPath } from '../../src/recording/index.js';
import { createAnswerChain, replay } from '../../src/replay/index.js';
import { runShopAgent, SHOP_DDL } from '../record/fixtures/observed-agent.mjs';
import { FIXTURES, tempDir } from '../record/helpers.js';

const ADMIN = process.env.TAPEDECK_PG_URL;
const BIN = path.resolve('bin/tapedeck.mjs');
const EXPLORE = path.resolve('test/production/explore-agent.mjs');
const suffix = randomBytes(4).toString('hex');
const PROD = `tdprod_seedp_${suffix}`;
const DEV = `tdprod_seedd_${suffix}`;
const tmp = tempDir('tapedeck-seed-snapshot-');
const project = path.join(tmp.dir, 'project');
const snapshots = path.join(project, '.tapedeck', 'snapshots');
let admin: pg.Client;

const PROD_ROWS = `
INSERT INTO shop.customers SELECT g, 'customer ' || g FROM generate_series(1, 200) g;
INSERT INTO shop.items (sku, qty, price) SELECT 'SKU-' || g, 100, (g % 50) + 0.99 FROM generate_series(1, 5000) g;
INSERT INTO shop.notes (customer_id, body) SELECT g % 200 + 1, 'note ' || g FROM generate_series(1, 400) g;
`;
// Development rows: other names, quantities and prices; fewer items (none with id 4321); orders
// that hold the id the recorded run's insert got; notes of customers 1-5 only.
const DEV_ROWS = `
INSERT INTO shop.customers SELECT g, 'dev customer ' || g FROM generate_series(1, 50) g;
INSERT INTO shop.items (sku, qty, price) SELECT 'DEV-' || g, 7, 1.50 FROM generate_series(1, 300) g;
INSERT INTO shop.orders (customer_id, item_id, qty) SELECT 1, g, 1 FROM generate_series(1, 5) g;
INSERT INTO shop.notes (customer_id, body) SELECT g % 5 + 1, 'dev note ' || g FROM generate_series(1, 40) g;
INSERT INTO shop.audit VALUES ('seeded', 0);
CREATE SCHEMA crm;
CREATE TABLE crm.leads (id integer PRIMARY KEY, email text);
INSERT INTO crm.leads VALUES (1, 'a@example.com');
`;

function urlOf(database: string): string {
  const u = new URL(ADMIN as string);
  u.pathname = `/${database}`;
  return u.toString();
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Every row of every user table, hashed: a database nobody wrote keeps its digest. */
function digest(url: string): Promise<string> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ t: string }>(
      `SELECT table_schema || '.' || table_name AS t FROM information_schema.tables
        WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
    );
    const parts: string[] = [];
    for (const { t } of rows) {
      const [schema, name] = t.split('.');
      const r = await c.query(
        `SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x::text), '')) AS h FROM "${schema}"."${name}" x`,
      );
      parts.push(`${t}:${r.rows[0].h}`);
    }
    return parts.join(' ');
  });
}

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}, cwd = project): Promise<CliResult> {
  const base = { ...process.env, ...env };
  delete base.TAPEDECK_SNAPSHOTS_DIR;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: base, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 240_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The explore agent's line among the agent's output. */
function exploreLine(text: string): {
  explore: { items: Array<Record<string, unknown>>; customers: Array<Record<string, unknown>> };
  out: unknown;
} {
  const line = text.split('\n').find((l) => l.startsWith('{"explore"'));
  if (!line) throw new Error(`no explore line in: ${text.slice(0, 2000)}`);
  return JSON.parse(line);
}

/** What the explore agent must see: the run's rows where it looked, the snapshot's elsewhere. */
function expectSeededView(view: ReturnType<typeof exploreLine>['explore']): void {
  expect(view.items).toEqual([
    { id: '11', sku: 'SKU-11', qty: 100, price: '11.99' }, // the run's row, not DEV-11
    { id: '12', sku: 'DEV-12', qty: 7, price: '1.50' }, // never observed: the snapshot's
    { id: '4321', sku: 'SKU-4321', qty: 100, price: '21.99' }, // the run's, absent from the snapshot
  ]);
  expect(view.customers).toEqual([
    { id: 7, name: 'customer 7' },
    { id: 9, name: 'dev customer 9' },
  ]);
}

let recordingDir: string;
let recorded: unknown;
const digests: Record<string, string> = {};

beforeAll(async () => {
  if (!ADMIN) return;
  admin = new pg.Client({ connectionString: ADMIN });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${PROD}`);
  await admin.query(`CREATE DATABASE ${DEV}`);
  await withClient(urlOf(PROD), (c) => c.query(SHOP_DDL + PROD_ROWS));
  await withClient(urlOf(DEV), (c) => c.query(SHOP_DDL + DEV_ROWS));
  mkdirSync(project, { recursive: true });
  // The production run, recorded in process with the observed world (the in-process default).
  const pool = new pg.Pool({ connectionString: urlOf(PROD), max: 3 });
  pool.on('error', () => {});
  await runShopAgent(pool, { customer: 8, items: [12, 4322] }); // an unrecorded session first: order 1
  const input = { customer: 7, items: [11, 4321] };
  const run = await record(
    {
      out: path.join(tmp.dir, 'rec'),
      name: 'shop',
      input,
      command: [process.execPath, path.join(FIXTURES, 'observed-agent.mjs')],
    },
    () => runShopAgent(pool, input),
  );
  await pool.end();
  recordingDir = run.dir;
  recorded = run.result;
  digests.prod = await digest(urlOf(PROD));
  digests.dev = await digest(urlOf(DEV));
}, 240_000);

afterAll(async () => {
  if (!ADMIN) return;
  await admin.query(`DROP DATABASE IF EXISTS ${PROD} WITH (FORCE)`);
  await admin.query(`DROP DATABASE IF EXISTS ${DEV} WITH (FORCE)`);
  await admin.end();
  tmp.remove();
}, 60_000);

describe.skipIf(!ADMIN)('replay seeded from a named development snapshot', () => {
  it('saves and lists a snapshot of the development database under the project', async () => {
    const recording = await readRecording(recordingDir);
    expect(recording.manifest.world?.db?.mode).toBe('observed');
    const saved = await cli(['snapshot', 'save', 'dev', '--db', urlOf(DEV), '--schema', 'shop', '--json']);
    expect(saved.stderr).toBe('');
    expect(saved.code).toBe(0);
    expect(JSON.parse(saved.stdout)).toMatchObject({ name: 'dev', schemas: ['shop'], tables: 5, rows: 396 });
    expect(existsSync(path.join(snapshots, 'dev', 'db.json'))).toBe(true);
    // What a save killed midway leaves (a hidden copy named for its dead process) goes with the next save.
    const killed = stagingPath(path.join(snapshots, 'dev')).replace(`-${process.pid}-`, '-4194000-');
    mkdirSync(killed);
    writeFileSync(path.join(killed, 'db.json'), '{"partial":');
    expect((await cli(['snapshot', 'save', 'dev2', '--db', urlOf(DEV), '--schema', 'shop'])).code).toBe(0);
    expect(existsSync(killed)).toBe(false);
    expect((await cli(['snapshot', 'rm', 'dev2'])).code).toBe(0);
    const again = await cli(['snapshot', 'save', 'dev', '--db', urlOf(DEV)]);
    expect(again.code).toBe(2);
    expect(again.stderr.trim()).toMatch(/^tapedeck: a snapshot named "dev" exists in .*; pass --force/);
    expect((await cli(['snapshot', 'save', 'crm-only', '--db', urlOf(DEV), '--schema', 'crm'])).code).toBe(0);
    // Saved again (--force), it is another world: a kept chain's fingerprint (bisect-prompt's probe cache key) moves.
    process.env.TAPEDECK_SNAPSHOTS_DIR = snapshots;
    try {
      const fingerprint = () => createAnswerChain({ seedSnapshot: 'dev' }).fingerprint;
      const before = fingerprint();
      expect((await cli(['snapshot', 'save', 'dev', '--db', urlOf(DEV), '--schema', 'shop', '--force'])).code).toBe(0);
      expect(fingerprint()).not.toBe(before);
    } finally {
      delete process.env.TAPEDECK_SNAPSHOTS_DIR;
    }
    // Every command that replays takes it, through the flags they share with the project file.
    for (const command of ['replay', 'bisect-prompt', 'worker', 'tui'])
      expect((await cli([command, '--help'])).stdout).toContain('--seed-snapshot <name>');
    const list = JSON.parse((await cli(['snapshot', 'list', '--json'])).stdout);
    expect(list.snapshots.map((s: { name: string; tables: number }) => [s.name, s.tables])).toEqual([
      ['crm-only', 1],
      ['dev', 5],
    ]);
  }, 120_000);

  it('replays exactly over the snapshot (PGlite, real CLI), and a changed agent finds the snapshot’s rows where the run never looked', async () => {
    const replayOver = (out: string, command: string[] = []) =>
      cli(['replay', recordingDir, '--seed-snapshot', 'dev', '--json', '--out', path.join(tmp.dir, out), ...command]);
    const exact = await replayOver('replay-exact');
    expect(exact.code, exact.stderr).toBe(0);
    const result = JSON.parse(exact.stdout);
    expect(result.divergences).toEqual([]);
    expect(result.worldMatches).toBe(true);
    expect(JSON.parse(exact.stderr.split('\n').find((l) => l.startsWith('{')) ?? '{}')).toEqual(
      JSON.parse(JSON.stringify(recorded)),
    );
    // The replay's own recording starts from the seeded world and says which snapshot it was.
    const replayed = await readRecording(path.join(tmp.dir, 'replay-exact'));
    expect(replayed.manifest.replay?.overrides?.seedSnapshot).toMatchObject({ name: 'dev' });
    const customers = replayed.pre.db?.tables.find((t) => t.name === 'customers')?.rows ?? [];
    expect(customers).toHaveLength(50);
    expect(customers.find((r) => r.id === 7)).toEqual({ id: 7, name: 'customer 7' });

    const changed = await replayOver('replay-explore', ['--', process.execPath, EXPLORE]);
    expect(changed.code, changed.stderr).toBe(0);
    const seen = exploreLine(changed.stderr);
    expectSeededView(seen.explore);
    expect(seen.out).toEqual(JSON.parse(JSON.stringify(recorded)));
    expect(JSON.parse(changed.stdout).worldMatches).toBe(true);
  }, 240_000);

  it('finds the snapshots of the project file given with --config, whatever folder the command runs in', async () => {
    // Another project, whose file names its own snapshots folder; every command runs from `project`.
    const other = path.join(tmp.dir, 'other-project');
    mkdirSync(other, { recursive: true });
    const config = path.join(other, 'tapedeck.config.json');
    writeFileSync(config, JSON.stringify({ snapshotsDir: 'shared-snapshots' }));
    const saved = await cli([
      'snapshot',
      'save',
      'other-dev',
      '--db',
      urlOf(DEV),
      '--schema',
      'shop',
      '--config',
      config,
    ]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(existsSync(path.join(other, 'shared-snapshots', 'other-dev', 'db.json'))).toBe(true);
    expect(existsSync(path.join(snapshots, 'other-dev'))).toBe(false);
    const listed = JSON.parse((await cli(['snapshot', 'list', '--json', '--config', config])).stdout);
    expect(listed.snapshots.map((s: { name: string }) => s.name)).toEqual(['other-dev']);
    const exact = await cli([
      'replay',
      recordingDir,
      '--config',
      config,
      '--seed-snapshot',
      'other-dev',
      '--json',
      '--out',
      path.join(tmp.dir, 'replay-other-project'),
    ]);
    expect(exact.code, exact.stderr).toBe(0);
    expect(JSON.parse(exact.stdout).divergences).toEqual([]);
    // Without --config the command's own project is searched, and the snapshot is not there.
    const missing = await cli(['replay', recordingDir, '--seed-snapshot', 'other-dev']);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toMatch(/no snapshot named "other-dev" in /);
    expect((await cli(['snapshot', 'rm', 'other-dev', '--config', config])).code).toBe(0);
    expect(existsSync(path.join(other, 'shared-snapshots', 'other-dev'))).toBe(false);
  }, 240_000);

  it('replays over the snapshot in the server sandbox (TAPEDECK_PG_URL)', async () => {
    const result = await replay({
      recording: recordingDir,
      mode: 'exact',
      out: path.join(tmp.dir, 'replay-server'),
      stdio: 'pipe',
      dbSandbox: 'template',
      db: ADMIN as string,
      seedSnapshot: 'dev',
      snapshotsDir: snapshots,
      command: [process.execPath, EXPLORE],
      timeoutMs: 120_000,
    });
    expect(result.divergences).toEqual([]);
    expect(result.worldDiff).toEqual([]);
    expectSeededView(exploreLine(result.output?.stdout ?? '').explore);
  }, 240_000);

  it('refuses bad names, a missing snapshot, a changed db.json and a snapshot without a needed table, in one line each', async () => {
    const oneLine = (r: CliResult, pattern: RegExp) => {
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr.trim()).toMatch(pattern);
    };
    oneLine(await cli(['snapshot', 'save', '../evil', '--db', urlOf(DEV)]), /snapshot name "\.\.\/evil" is not/);
    oneLine(await cli(['snapshot', 'rm', 'a/b']), /snapshot name "a\/b" is not/);
    oneLine(await cli(['replay', recordingDir, '--seed-snapshot', '..']), /snapshot name "\.\." is not/);
    oneLine(await cli(['replay', recordingDir, '--seed-snapshot', 'nope']), /no snapshot named "nope" in /);
    oneLine(await cli(['snapshot', 'rm', 'nope']), /no snapshot named "nope"/);
    // A db.json changed after it was saved (a row's value edited; the file still valid JSON).
    cpSync(path.join(snapshots, 'dev'), path.join(snapshots, 'edited'), { recursive: true });
    const info = JSON.parse(readFileSync(path.join(snapshots, 'edited', 'snapshot.json'), 'utf8'));
    writeFileSync(path.join(snapshots, 'edited', 'snapshot.json'), JSON.stringify({ ...info, name: 'edited' }));
    const db = readFileSync(path.join(snapshots, 'edited', 'db.json'), 'utf8');
    writeFileSync(path.join(snapshots, 'edited', 'db.json'), db.replace('dev customer 9"', 'dev customer 0"'));
    oneLine(
      await cli(['replay', recordingDir, '--seed-snapshot', 'edited']),
      /edited\/db\.json does not match the sha256 in snapshot\.json/,
    );
    // A snapshot.json that is not one.
    writeFileSync(
      path.join(snapshots, 'edited', 'snapshot.json'),
      JSON.stringify({ ...info, name: 'edited', bytes: -1 }),
    );
    oneLine(await cli(['replay', recordingDir, '--seed-snapshot', 'edited']), /edited\/snapshot\.json: bytes: /);
    oneLine(
      await cli(['replay', recordingDir, '--seed-snapshot', 'crm-only']),
      /the snapshot "crm-only" has no table shop\.\w+, which the recording needs/,
    );
    const removed = await cli(['snapshot', 'rm', 'crm-only', '--json']);
    expect(removed.code).toBe(0);
    expect(existsSync(path.join(snapshots, 'crm-only'))).toBe(false);
    // Neither database was written by any of it.
    expect(await digest(urlOf(PROD))).toBe(digests.prod);
    expect(await digest(urlOf(DEV))).toBe(digests.dev);
  }, 240_000);
});
