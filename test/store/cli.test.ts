// The ingest and query commands, run in-process through commander as the CLI runs them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildLedger } from '../../src/ledger/index.js';
import { readRecording } from '../../src/recording/index.js';
import { runCli as run } from '../ledger/run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-store-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('tapedeck ingest and query', () => {
  it('ingests idempotently with each run evaluated against the contract, and answers SQL', async () => {
    const db = join(tmp, 'warehouse');
    // The same folder twice: every recording is ingested a second time in the same run.
    const first = JSON.parse(
      await run(
        'ingest',
        'recordings/examples',
        'recordings/examples',
        '--contract',
        'examples/contracts/book-flight.yaml',
        '--db',
        db,
        '--json',
      ),
    );
    const distinct = new Set(first.results.map((r: { traceId: string }) => r.traceId));
    expect(distinct.size).toBeGreaterThanOrEqual(2);
    expect(first.results.length).toBe(2 * distinct.size);
    const rows = JSON.parse(
      await run(
        'query',
        'SELECT count(*) AS runs, sum(total_tokens) AS tokens, (SELECT count(*) FROM eval_task_result) AS evals, (SELECT sum(runs) FROM cost_per_resolved_task) AS scored FROM trace_run',
        '--db',
        db,
        '--json',
      ),
    );
    expect(rows[0].runs).toBe(distinct.size);
    expect(rows[0].evals).toBe(distinct.size);
    expect(Number(rows[0].scored)).toBe(distinct.size); // sum() of counts is NUMERIC: exact text
    let tokens = 0;
    for (const r of first.results.slice(0, distinct.size))
      tokens += buildLedger(await readRecording(join('recordings/examples', r.recordingId))).run.total_tokens;
    expect(rows[0].tokens).toBe(tokens);
  });
});
