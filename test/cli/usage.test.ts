// Usage mistakes exit 2 (exit 1 means a finding: a bad step, a difference, a failed gate), and
// `query` and `bisect` refuse bad input before doing any work.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { example, expectOneLineError, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-qa-usage-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('usage errors', () => {
  it('an unknown flag or a missing argument exits 2, not the 1 that means "found something"', async () => {
    const runs = await Promise.all([
      tapedeck(['diff', example('openai-baseline')]),
      tapedeck(['bisect', example('openai-baseline'), '--bogus']),
      tapedeck(['eval', example('openai-baseline')]),
    ]);
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/^error: /);
    }
    expect((await tapedeck(['diff', '--help'])).code).toBe(0);
  });

  it('query: empty SQL, a warehouse folder that does not exist, a file as the warehouse', async () => {
    const file = join(tmp, 'file');
    writeFileSync(file, 'x');
    const [empty, missing, isFile] = await Promise.all([
      tapedeck(['query', '  ', '--db', join(tmp, 'wh')]),
      tapedeck(['query', 'SELECT * FROM trace_run', '--db', join(tmp, 'typo'), '--json']),
      tapedeck(['query', 'SELECT 1', '--db', file]),
    ]);
    expectOneLineError(empty, /the SQL is empty/);
    expectOneLineError(missing, /no warehouse at .*typo: fill it first with tapedeck ingest/);
    expectOneLineError(isFile, /is a file, not a warehouse folder/);
  });

  it('bisect: a wrong --baseline fails before the search runs', async () => {
    const run = await tapedeck(['bisect', example('openai-baseline'), '--baseline', join(tmp, 'nope')]);
    expectOneLineError(run, /no recording at .*nope/);
  });
});
