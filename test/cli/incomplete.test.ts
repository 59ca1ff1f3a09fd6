// An incomplete recording (the writer was killed mid-line) is scored and costed up to its last whole
// line, and every command says so on stderr, keeping --json stdout valid.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { example, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-qa-incomplete-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function incompleteCopy(): string {
  const dir = join(tmp, 'killed');
  cpSync(example('openai-baseline'), dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  manifest.status = 'incomplete';
  manifest.integrity = { events: 0 }; // what the writer leaves before close()
  delete manifest.endedAt;
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  const lines = readFileSync(join(dir, 'events.jsonl'), 'utf8').split('\n');
  writeFileSync(join(dir, 'events.jsonl'), `${lines.slice(0, 30).join('\n')}\n${(lines[30] ?? '').slice(0, 40)}`);
  return dir;
}

describe('an incomplete recording', () => {
  it('ledger --json and diff warn on stderr that it is incomplete; stdout stays valid', async () => {
    const dir = incompleteCopy();
    const [ledger, diff] = await Promise.all([
      tapedeck(['ledger', dir, '--json']),
      tapedeck(['diff', dir, example('openai-baseline')]),
    ]);
    expect(ledger.code, ledger.stderr).toBe(0);
    expect(JSON.parse(ledger.stdout).steps.length).toBe(4);
    for (const run of [ledger, diff]) {
      expect(run.stderr).toMatch(/^tapedeck: warning: .*killed: the recording is incomplete/m);
      expect(run.stderr).toMatch(/^tapedeck: warning: .*killed: events\.jsonl:31: ignored a cut-off last line/m);
    }
  });
});
