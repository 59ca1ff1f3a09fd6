// The ingest and query commands, run in-process through commander as the CLI runs them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { register as registerIngest } from '../../src/cli/commands/ingest.js';
import { register as registerQuery } from '../../src/cli/commands/query.js';
import { buildLedger } from '../../src/ledger/index.js';
import { readRecording } from '../../src/recording/index.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-store-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function run(...args: string[]): Promise<string> {
  const program = new Command('tapedeck').exitOverride();
  registerIngest(program);
  registerQuery(program);
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    await program.parseAsync(['node', 'tapedeck', ...args]);
  } finally {
    spy.mockRestore();
    err.mockRestore();
  }
  return out;
}

describe('tapedeck ingest and query', () => {
  it('ingests idempotently and answers SQL', async () => {
    const db = join(tmp, 'warehouse');
    // The same folder twice: every recording is ingested a second time in the same run.
    const first = JSON.parse(await run('ingest', 'recordings/examples', 'recordings/examples', '--db', db, '--json'));
    const distinct = new Set(first.results.map((r: { traceId: string }) => r.traceId));
    expect(distinct.size).toBeGreaterThanOrEqual(2);
    expect(first.results.length).toBe(2 * distinct.size);
    const rows = JSON.parse(
      await run('query', 'SELECT count(*) AS runs, sum(total_tokens) AS tokens FROM trace_run', '--db', db, '--json'),
    );
    expect(rows[0].runs).toBe(distinct.size);
    let tokens = 0;
    for (const r of first.results.slice(0, distinct.size))
      tokens += buildLedger(await readRecording(join('recordings/examples', r.recordingId))).run.total_tokens;
    expect(rows[0].tokens).toBe(tokens);
  });
});
