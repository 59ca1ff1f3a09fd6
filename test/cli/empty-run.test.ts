// A run that made no steps (the agent exited at once) is a valid recording: every command handles it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRecordingWriter } from '../../src/recording/index.js';
import { expectOneLineError, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-qa-empty-'));
const dir = join(tmp, 'no-steps');
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
beforeAll(async () => {
  const writer = await createRecordingWriter(dir, { name: 'no-steps', agent: { command: ['true'], cwd: tmp } });
  await writer.close('complete');
});

describe('a recording with no steps', () => {
  it('bisect finds nothing, and an out-of-range step says the run has no steps (not "1..0")', async () => {
    const [bisect, outOfRange] = await Promise.all([
      tapedeck(['bisect', dir]),
      tapedeck(['bisect', dir, '--good', '3']),
    ]);
    expect(bisect.code, bisect.stderr).toBe(0);
    expect(bisect.stdout).toContain('no bad step');
    expectOneLineError(outOfRange, /--good step 3 is out of range: .*no-steps has no steps \(only 0/);
  });
});
