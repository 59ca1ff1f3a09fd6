// `tapedeck worker enqueue … --db X` queues into X (commander gives --db to the parent command),
// and refuses a path that is not a recording before queueing it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { example, expectOneLineError, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-qa-worker-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('tapedeck worker enqueue', () => {
  it('queues into the --db given after the subcommand, and refuses a file as a recording', async () => {
    const db = join(tmp, 'wh');
    const file = join(tmp, 'file');
    writeFileSync(file, 'x');
    // cwd is the temp folder: a job queued in the default warehouse would land in ./.tapedeck here.
    const queued = await tapedeck(['worker', 'enqueue', example('openai-baseline'), '--db', db], { cwd: tmp });
    expect(queued.code, queued.stderr).toBe(0);
    expect(queued.stdout).toBe(`queued 1 job in ${db}\n`);
    expectOneLineError(
      await tapedeck(['worker', 'enqueue', file, '--db', db], { cwd: tmp }),
      /file: is a file, not a recording directory/,
    );
  });
});
