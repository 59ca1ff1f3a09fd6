// Tasks of one agent process that wait on the database at once and then draw a value (a uuid for
// the row each inserts) take their values in the order the database answers them. A replay's
// sandbox database answers in its own order (PGlite one connection at a time, a clone on the
// server with its own timing), so without more the tasks swapped their recorded values: the
// replayed rows had each other's ids ("end state differs"). The recorder notes each reply with
// the values drawn before it (dbReply); a replay with --db-order hands replies over in that order. Real
// Postgres, real pg and postgres.js clients, both sandboxes; the recorded rows are the sentinel.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { scratchDatabase, tempDir } from '../record/helpers.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'db-race-agent.mjs');
const SCHEMA = `
  CREATE TABLE stock (sku text PRIMARY KEY, qty int);
  INSERT INTO stock VALUES ('a', 1), ('b', 2), ('c', 3), ('d', 4), ('e', 5), ('f', 6);
  CREATE TABLE log (id text PRIMARY KEY, sku text NOT NULL, at bigint NOT NULL);`;

describe.skipIf(!PG_URL)('database replies in the recorded order', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(() => {
    tmp = tempDir();
  });
  afterAll(() => tmp.remove());

  /** Records the agent in `mode` against a fresh database; returns the recording's folder. */
  const record = async (mode: string) => {
    const db = await scratchDatabase(PG_URL as string, 'td_dbreply_', SCHEMA);
    try {
      const out = path.join(tmp.dir, `rec-${mode}`);
      const recorded = await recordCommand({
        command: [process.execPath, AGENT],
        env: { DATABASE_URL: db.url, TASKS_MODE: mode },
        out,
        stdio: 'pipe',
        dbUrl: db.url,
      });
      expect(recorded.exitCode).toBe(0);
      return out;
    } finally {
      await db.drop();
    }
  };
  let runs = 0;
  const replayed = async (dir: string, options: { template?: boolean; unordered?: boolean } = {}) => {
    const result = await replay({
      recording: dir,
      mode: 'exact',
      out: path.join(tmp.dir, `replay-${++runs}`),
      stdio: 'pipe',
      isolation: 'none',
      timeoutMs: 120_000,
      ...(options.template ? { dbSandbox: 'template' as const, db: PG_URL } : {}),
      // --db-order is the default in exact mode; --no-db-order (dbOrder: false) turns it off.
      ...(options.unordered ? { dbOrder: false } : {}),
    });
    expect(result.status, result.output?.stderr).toBe('complete');
    expect(result.divergences).toEqual([]);
    return result;
  };

  /** A replay in PGlite whose end state differs must say why, and how to replay it as recorded. */
  const saidWhenDiffers = (result: Awaited<ReturnType<typeof replayed>>) => {
    if ((result.worldDiff ?? []).length > 0)
      expect(result.warnings?.join('\n')).toMatch(/not in the recorded order.*--db-sandbox template/);
  };

  it('pg pool: every task takes its own recorded values, in the embedded sandbox and on the server', async () => {
    const dir = await record('pool');
    const recording = await readRecording(dir);
    const noted = recording.events.filter((e) => e.type === 'nondeterminism' && e.payload.kind === 'dbReply');
    expect(noted.length).toBeGreaterThan(0);
    // With --no-db-order the replies go as the sandbox sends them: when that swapped the tasks'
    // values, the replay says what to do.
    const unordered = await replayed(dir, { unordered: true });
    if ((unordered.worldDiff ?? []).length > 0)
      expect(unordered.warnings?.join('\n')).toMatch(/several connections at once.*--db-order/);
    for (const template of [false, true, false]) {
      const result = await replayed(dir, { template });
      const where = template ? 'template' : 'PGlite';
      expect(result.worldDiff ?? [], `${where}: ${result.worldDiff?.join('\n')}`).toEqual([]);
      expect(result.worldMatches).toBe(true);
      expect(result.warnings?.join('\n') ?? '').not.toMatch(/database repl/);
    }
  }, 240_000);

  // postgres.js pipelines queries on its connections, and the transactions here are concurrent:
  // PGlite answers one connection's message at a time and one transaction at a time, so it cannot
  // always answer in the recorded order. On a server sandbox concurrent transactions come back as
  // recorded; postgres.js's pipelined replies mostly do (2 of 8 server replays here did not, in CI
  // too), and when they do not the replay says so (its replies went as they came).
  const orderedOrSaid = (result: Awaited<ReturnType<typeof replayed>>) => {
    if ((result.worldDiff ?? []).length > 0)
      expect(result.warnings?.join('\n'), result.worldDiff?.join('\n')).toMatch(/not in the recorded order/);
  };
  for (const mode of ['sql', 'tx']) {
    it(`${mode}: reproduced on the server${mode === 'sql' ? ' or said' : ''}; in PGlite reproduced or said`, async () => {
      const dir = await record(mode);
      for (let i = 0; i < 2; i++) {
        const result = await replayed(dir, { template: true });
        if (mode === 'sql') orderedOrSaid(result);
        else expect(result.worldDiff ?? [], result.worldDiff?.join('\n')).toEqual([]);
      }
      saidWhenDiffers(await replayed(dir));
    }, 240_000);
  }
});
