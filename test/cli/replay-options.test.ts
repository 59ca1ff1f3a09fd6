// `tapedeck replay` refuses a step the recording does not have before it starts any sandbox.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { example, expectOneLineError, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-replay-options-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('tapedeck replay step options', () => {
  it('--until and --fork-at past the last step are bad input, and nothing is written', async () => {
    const out = join(tmp, 'out');
    const [until, forkAt] = await Promise.all([
      tapedeck(['replay', example('openai-baseline'), '--until', '99', '--out', out]),
      tapedeck(['replay', example('openai-baseline'), '--fork-at', '99', '--mode', 'counterfactual', '--out', out]),
    ]);
    expectOneLineError(until, /--until 99 is past the recording's last step \(\d+\)/);
    expectOneLineError(forkAt, /--fork-at 99 is past the recording's last step/);
    expect(readdirSync(tmp)).toEqual([]);
  });
});
