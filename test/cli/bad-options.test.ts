// Option values that cannot work are refused up front with one line and exit 2.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { example, expectOneLineError, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-qa-opts-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('bad option values', () => {
  it('ingest --scores with a JSON file that holds no scores, bisect --sql-file a folder, eval --judge-url not a URL', async () => {
    const notScores = join(tmp, 'prices.json');
    writeFileSync(notScores, '{"version": "2027-01-01", "currency": "USD", "models": []}\n');
    const [ingest, bisect, evalRun] = await Promise.all([
      tapedeck(['ingest', example('openai-baseline'), '--db', join(tmp, 'wh'), '--scores', notScores]),
      tapedeck(['bisect', example('openai-baseline'), '--sql-file', tmp]),
      tapedeck([
        'eval',
        example('openai-baseline'),
        '--contract',
        'examples/contracts/book-flight.yaml',
        '--judge-url',
        'localhost:8080',
      ]),
    ]);
    expectOneLineError(ingest, /prices\.json: holds no task, validators or state/);
    expectOneLineError(bisect, /--sql-file .* cannot be read \(a directory\)/);
    expectOneLineError(evalRun, /--judge-url must be an http\(s\) base URL/);
  });

  it('a file of several lines that is not JSON, as --prices or an import, is still one line', async () => {
    const text = join(tmp, 'notes.json');
    writeFileSync(text, 'first line\nsecond line\n');
    const [ledger, har] = await Promise.all([
      tapedeck(['ledger', example('openai-baseline'), '--prices', text]),
      tapedeck(['import', '--har', text, '--out', join(tmp, 'from-har')]),
    ]);
    expectOneLineError(ledger, /notes\.json: not JSON \(Unexpected token .*"first line\\n/);
    expectOneLineError(har, /notes\.json: not JSON: /);
  });
});
