// `tapedeck eval` with a bad --contract or --scores-out: one clear line, exit 2, no stack trace.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { example, expectOneLineError, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-qa-eval-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const contract = 'examples/contracts/book-flight.yaml';

describe('tapedeck eval, bad input', () => {
  it('a directory, a scalar file or a bad path as --contract / --scores-out', async () => {
    const scalar = join(tmp, 'scalar.yaml');
    writeFileSync(scalar, 'hello\n');
    const [dir, notMapping, scoresOut] = await Promise.all([
      tapedeck(['eval', example('openai-baseline'), '--contract', tmp]),
      tapedeck(['eval', example('openai-baseline'), '--contract', scalar, '--json']),
      tapedeck(['eval', example('openai-baseline'), '--contract', contract, '--scores-out', join(scalar, 'x.json')]),
    ]);
    expectOneLineError(dir, /contract .* is a directory, not a YAML file/);
    expectOneLineError(notMapping, /scalar\.yaml:1:1: \(top level\): a contract is a YAML mapping/);
    expectOneLineError(scoresOut, /--scores-out .*x\.json: cannot write the scores file \(ENOTDIR\)/);
  });
});
