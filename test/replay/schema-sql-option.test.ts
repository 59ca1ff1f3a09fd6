// --schema-sql given wrong: a path that cannot be read is a one-line error before anything runs, with
// or without a database to run it in; given to a recording that has no database, it is said not run.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, type TestServer, tempDir } from '../record/helpers.js';

describe('--schema-sql on a recording without a database', () => {
  const tmp = tempDir('tapedeck-schema-sql-option-');
  let api: TestServer;
  const recording = path.join(tmp.dir, 'rec');

  beforeAll(async () => {
    api = await startServer((_req, _body, res) => {
      res.end('ok');
    });
    const recorded = await recordCommand({
      command: [
        process.execPath,
        '-e',
        `fetch(${JSON.stringify(`${api.url}/x`)}).then((r) => r.text()).then(console.log)`,
      ],
      out: recording,
      stdio: 'pipe',
    });
    expect(recorded.exitCode).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    tmp.remove();
  });

  it.each([
    ['a missing file', () => path.join(tmp.dir, 'nope.sql'), /^--schema-sql .*nope\.sql: cannot read it \(ENOENT\)$/],
    ['a folder', () => tmp.dir, /^--schema-sql .*: cannot read it \(EISDIR\)$/],
  ])('%s: one line, before the agent runs', async (_what, file, message) => {
    const out = path.join(tmp.dir, `out-${Math.random().toString(16).slice(2)}`);
    await expect(
      replay({ recording, mode: 'exact', out, stdio: 'pipe', isolation: 'none', schemaSql: [file()] }),
    ).rejects.toMatchObject({ code: 'BAD_OPTION', message: expect.stringMatching(message) });
  });

  it('a readable file: the replay runs, and says the SQL was not run', async () => {
    const sql = path.join(tmp.dir, 'own.sql');
    writeFileSync(sql, 'CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;');
    const warnings: string[] = [];
    const result = await replay({
      recording,
      mode: 'exact',
      out: path.join(tmp.dir, 'readable'),
      stdio: 'pipe',
      isolation: 'none',
      schemaSql: [sql],
      onWarning: (w) => warnings.push(w),
    });
    expect(result.divergences).toEqual([]);
    expect(warnings).toContainEqual(expect.stringMatching(/^--schema-sql: this recording has no database .*not run$/));
  }, 60_000);
});
