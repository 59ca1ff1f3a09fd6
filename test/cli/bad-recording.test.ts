// A path that is not a recording gets one clear line and exit 2 from every command that reads one.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { example, expectOneLineError, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-qa-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const file = join(tmp, 'a-file.txt');
writeFileSync(file, 'not a recording\n');
const missing = join(tmp, 'no-such-recording');

describe('a path that is not a recording', () => {
  it('a file instead of a recording directory: one line naming it, exit 2 (ledger, eval, diff)', async () => {
    const runs = await Promise.all([
      tapedeck(['ledger', file, '--json']),
      tapedeck(['eval', file, '--contract', 'examples/contracts/book-flight.yaml']),
      tapedeck(['diff', file, example('openai-baseline')]),
    ]);
    for (const run of runs) expectOneLineError(run, /a-file\.txt: is a file, not a recording directory/);
  });

  it('a missing path says "no such recording"; a folder of recordings says to name them', async () => {
    const [noSuch, folder] = await Promise.all([
      tapedeck(['ledger', missing]),
      tapedeck(['eval', 'recordings/examples', '--contract', 'examples/contracts/book-flight.yaml']),
    ]);
    expectOneLineError(noSuch, /no-such-recording: no such recording/);
    expectOneLineError(folder, /recordings\/examples is a folder of \d+ recordings, not a recording: name them/);
  });

  it('verify names the problem once, without repeating the path', async () => {
    const corrupt = join(tmp, 'corrupt');
    cpSync(example('openai-baseline'), corrupt, { recursive: true });
    writeFileSync(join(corrupt, 'events.jsonl'), '{not json\n', { flag: 'a' });
    const run = await tapedeck(['verify', corrupt, file]);
    expect(run.code).toBe(1);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^bad {2}\S+\/corrupt\/events\.jsonl:\d+: field \(json\): is not valid JSON/);
    expect(lines[1]).toBe(
      `bad  ${file}: is a file, not a recording directory (a recording directory holds manifest.json and events.jsonl)`,
    );
  });

  it('list: a named folder that does not exist is an error; an existing empty one is not', async () => {
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    const [noFolder, aFile, run] = await Promise.all([
      tapedeck(['list', missing]),
      tapedeck(['list', file]),
      tapedeck(['list', empty]),
    ]);
    expectOneLineError(noFolder, /no such folder/);
    expectOneLineError(aFile, /is a file, not a folder of recordings/);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^no recordings under/);
  });
});
