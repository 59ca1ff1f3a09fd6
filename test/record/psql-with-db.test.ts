// An agent that shells out to psql, recorded with --db: psql's queries are not recorded (it is not
// Node), but what it changes in the recorded schemas is (the database's own changes), and a replay
// in the OS sandbox runs it against the sandbox database. The warning says so instead of "a replay
// cannot answer them", record and verify alike; without --db the plain warning stays. The real
// database is the sentinel: the replay's psql never reaches it.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { tapedeck } from '../cli/run-cli.js';
import { scratchDatabase, tempDir } from './helpers.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const hasPsql = spawnSync('psql', ['--version']).status === 0;
const tmp = tempDir('tapedeck-psql-db-');

// The database's address comes in a variable of the agent's own naming.
const AGENT = `
import { execFileSync } from 'node:child_process';
const url = process.env.LEDGER_DSN;
execFileSync('psql', [url, '-qc', "INSERT INTO acct.entries VALUES (7, 'via psql')"]);
console.log('rows ' + execFileSync('psql', [url, '-tAc', 'SELECT count(*) FROM acct.entries']).toString().trim());
`;

describe.runIf(PG_URL && hasPsql)('an agent that shells out to psql', () => {
  let db: { url: string; drop(): Promise<void> };
  const agent = path.join(tmp.dir, 'agent.mjs');
  beforeAll(async () => {
    db = await scratchDatabase(
      PG_URL as string,
      'tapedeck_psql_',
      'CREATE SCHEMA acct; CREATE TABLE acct.entries (id int PRIMARY KEY, note text);',
    );
    writeFileSync(agent, AGENT);
  });
  afterAll(async () => {
    await db?.drop();
    tmp.remove();
  });

  const realRows = () =>
    spawnSync('psql', [db.url, '-tAc', 'SELECT id, note FROM acct.entries ORDER BY id'], {
      encoding: 'utf8',
    }).stdout.trim();

  it('is told its changes are recorded with --db, and its replay in the OS sandbox touches only the sandbox database', async () => {
    const out = path.join(tmp.dir, 'rec');
    const env = { LEDGER_DSN: db.url };
    const recorded = await tapedeck(
      ['record', '--out', out, '--db', db.url, '--db-schema', 'acct', '--', process.execPath, agent],
      { env, timeoutMs: 120_000 },
    );
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(recorded.stdout).toContain('rows 1');
    const warning = recorded.stderr.split('\n').filter((l) => l.includes('not recorded:'));
    expect(warning).toEqual([expect.stringContaining('not recorded: what psql (2 processes) read from the database')]);
    expect(warning[0]).toContain('recorded all the same (--db)');
    expect(warning[0]).not.toContain('a replay cannot answer them');
    const verified = await tapedeck(['verify', out, '--json'], { timeoutMs: 60_000 });
    expect(JSON.parse(verified.stdout)[0].summary.warnings).toContainEqual(
      warning[0]?.replace(/^tapedeck: warning: /, ''),
    );
    expect(realRows()).toBe('7|via psql');

    if (detectIsolation().level !== 'bwrap') return;
    const replayed = await tapedeck(['replay', out, '--out', path.join(tmp.dir, 'replay')], {
      env,
      timeoutMs: 180_000,
    });
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
    // psql ran again, in the sandbox database: its insert did not clash with the real row.
    expect(replayed.stdout).toContain('rows 1');
    expect(replayed.stdout).toContain('no divergence');
    expect(replayed.stdout).toContain('end state equals the recorded end state');
    expect(realRows()).toBe('7|via psql');
  }, 300_000);

  it('keeps the plain warning when the database was not recorded', async () => {
    const fresh = await scratchDatabase(
      PG_URL as string,
      'tapedeck_psql_',
      'CREATE SCHEMA acct; CREATE TABLE acct.entries (id int PRIMARY KEY, note text);',
    );
    try {
      const recorded = await tapedeck(
        ['record', '--out', path.join(tmp.dir, 'rec-no-db'), '--', process.execPath, agent],
        {
          env: { LEDGER_DSN: fresh.url },
          timeoutMs: 120_000,
        },
      );
      expect(recorded.code, recorded.stderr).toBe(0);
      expect(recorded.stderr).toContain('not recorded: the calls of psql (2 processes)');
      expect(recorded.stderr).toContain('a replay cannot answer them');
    } finally {
      await fresh.drop();
    }
  }, 180_000);
});
