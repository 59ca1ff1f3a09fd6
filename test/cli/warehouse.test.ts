// `tapedeck ingest` and `tapedeck query` text output: 80 columns, numbers without padding zeros.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { example, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-qa-wh-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('ingest and query text', () => {
  it('ingest wraps its row counts at 80 columns; query trims numeric scale padding only', async () => {
    const db = join(tmp, 'wh');
    const ingest = await tapedeck([
      'ingest',
      example('openai-baseline'),
      '--db',
      db,
      '--contract',
      'examples/contracts/book-flight.yaml',
    ]);
    expect(ingest.code, ingest.stderr).toBe(0);
    expect(ingest.stdout).toMatch(
      /^ingested openai-baseline \(trace [0-9a-f]+\)\n {2}rows: 1 trace_run, 9 trace_step,/,
    );
    for (const line of ingest.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    const query = await tapedeck([
      'query',
      "SELECT cost_per_run, 1::numeric / 8 AS eighth, '1.50'::text AS label FROM cost_per_resolved_task",
      '--db',
      db,
    ]);
    expect(query.code, query.stderr).toBe(0);
    const row = (query.stdout.split('\n')[2] ?? '').trim().split(/\s+/);
    expect(row[0]).toMatch(/^0\.\d*[1-9]$/);
    expect(row[1]).toBe('0.125');
    expect(row[2]).toBe('1.50');
  });
});
