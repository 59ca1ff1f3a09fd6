// The code a schema holds (a plpgsql function behind a default, a trigger that fills a column), which
// a recording names in `unbuilt` and never carries: a replay without it says so in one line and the
// session cannot run as recorded; given the user's own migration (`schemaSql`, --schema-sql), the
// sandbox holds it and the session replays exactly, in the PGlite and template sandboxes.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { scratchDatabase, tempDir } from '../record/helpers.js';
import { CODE, runCodeAgent, WORLD } from './fixtures/code-world.mjs';

const ADMIN = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('./fixtures/code-world.mjs', import.meta.url));
const tmp = tempDir();
afterAll(() => tmp.remove());

describe.runIf(ADMIN)('a schema’s code in a replay: named when missing, the user’s own SQL when given', () => {
  let source: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
  let dir = '';
  let result: unknown;
  const schemaSql = path.join(tmp.dir, 'functions.sql');
  beforeAll(async () => {
    writeFileSync(schemaSql, CODE);
    source = await scratchDatabase(ADMIN as string, 'worlds_code_', WORLD);
    const run = await record({ out: path.join(tmp.dir, 'rec'), name: 'code', command: [process.execPath, AGENT] }, () =>
      runCodeAgent(source?.url as string),
    );
    dir = run.dir;
    result = run.result;
  }, 240_000);
  afterAll(async () => source?.drop());

  it('the recording names the code and carries none of it', async () => {
    const recording = await readRecording(dir);
    expect((recording.pre.db?.unbuilt ?? []).map((o) => `${o.kind} ${o.name}`).sort()).toEqual([
      'default code',
      'function order_code',
      'function order_slug',
      'trigger order_slug',
    ]);
    expect(result).toMatchObject([
      { name: 'Mail', code: 'ORD-0042', slug: 'mail-ORD-0042-new', total: 20 },
      { name: 'Report', code: 'ORD-0042', slug: 'report-ORD-0042-new', total: 20 },
    ]);
  });

  it('without it: one line says what the sandbox lacks, and the session does not run as recorded', async () => {
    const replayed = await replay({ recording: dir, mode: 'exact', out: path.join(tmp.dir, 'bare'), stdio: 'pipe' });
    const said = (replayed.warnings ?? []).filter((w) => /lacks/.test(w));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/function app\.order_code.*trigger app\.order_slug on app\.orders.*--schema-sql/);
    expect(replayed.output?.stdout ?? '').toBe('');
  }, 240_000);

  for (const sandbox of ['pglite', 'template'] as const)
    it(`with --schema-sql: replays exactly in the ${sandbox} sandbox, nothing said missing`, async () => {
      const replayed = await replay({
        recording: dir,
        mode: 'exact',
        out: path.join(tmp.dir, `own-${sandbox}`),
        stdio: 'pipe',
        schemaSql: [schemaSql],
        ...(sandbox === 'template' ? { db: ADMIN } : {}),
      });
      expect(replayed.output?.stderr ?? '').not.toMatch(/error/i);
      expect((replayed.warnings ?? []).filter((w) => /lacks/.test(w))).toEqual([]);
      expect(replayed.divergences).toEqual([]);
      expect(replayed.worldDiff).toEqual([]);
      expect(JSON.parse(replayed.output?.stdout ?? 'null')).toEqual(JSON.parse(JSON.stringify(result)));
    }, 240_000);

  it('SQL the sandbox refuses is one line naming the file', async () => {
    const bad = path.join(tmp.dir, 'bad.sql');
    writeFileSync(bad, 'CREATE TABLE app.orders (id int);');
    await expect(
      replay({ recording: dir, mode: 'exact', out: path.join(tmp.dir, 'bad'), stdio: 'pipe', schemaSql: [bad] }),
    ).rejects.toMatchObject({
      code: 'SCHEMA_SQL_FAILED',
      message: expect.stringMatching(/^--schema-sql .*bad\.sql: the sandbox database refused it: [^\n]*$/),
    });
  }, 240_000);
});
