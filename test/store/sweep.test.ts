// `tapedeck sweep` end to end: the committed example recordings × 3 prompt versions × k = 5, each a
// counterfactual replay (the FAKE model live for requests the recording does not hold, the travel
// API re-hosted in the sandbox through the example project file) run by the sweep's own workers
// from pg-boss on a Postgres server, scored and ingested. The printed pass@k, pass^k and cost per
// resolved task per version equal what the SQL in docs/scale.md computes from the warehouse.
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMPTS, startModelServer } from '../../examples/world/index.js';
import { openWarehouse, type Warehouse } from '../../src/store/index.js';
import type { SweepSummary } from '../../src/store/sweep.js';
import { example, root, tapedeck } from '../cli/run-cli.js';
import { createTestDatabase, PG_URL } from './helpers.js';

const RECORDINGS = [
  'openai-baseline',
  'openai-baseline-stream',
  'anthropic-baseline-stream',
  'anthropic-fixed',
  'openai-fixed-stream',
];
const K = 5;

/** The documented query (docs/scale.md), so the docs say what is checked here. */
function documentedSql(): string {
  const doc = readFileSync(join(root, 'docs/scale.md'), 'utf8');
  const sql = /```sql\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!sql) throw new Error('docs/scale.md has no ```sql block');
  return sql;
}

describe.skipIf(!PG_URL)('tapedeck sweep over the example recordings (TAPEDECK_PG_URL)', () => {
  let tmp: string;
  let db: { url: string; drop: () => Promise<void> };
  let model: { url: string; close: () => Promise<void> };
  let wh: Warehouse | undefined;
  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'tapedeck-sweep-'));
    db = await createTestDatabase('tapedeck_scale_sweep');
    model = await startModelServer();
  });
  afterAll(async () => {
    await wh?.close();
    await model?.close();
    await db?.drop();
    await rm(tmp, { recursive: true, force: true });
  });

  it('prints pass@k, pass^k and cost per resolved task per prompt version, equal to the warehouse query', async () => {
    // A third version: the baseline with only the fixed prompt's first added line (the one that flips the outcome).
    const baseline = readFileSync(PROMPTS.baseline, 'utf8');
    const line = readFileSync(PROMPTS.fixed, 'utf8')
      .split('\n')
      .find((l) => !baseline.includes(l) && l.includes('get_passenger'));
    expect(line).toBeDefined();
    const passengerOnly = join(tmp, 'passenger-only.txt');
    writeFileSync(passengerOnly, baseline.replace(/\n$/, `\n${line}\n`));

    const args = [
      'sweep',
      ...RECORDINGS.map(example),
      '--trust-recording', // committed: made elsewhere
      '--prompts',
      PROMPTS.baseline,
      PROMPTS.fixed,
      passengerOnly,
      '--samples',
      String(K),
      '--contract',
      join(root, 'examples/contracts/book-flight.yaml'),
      '--model-endpoint',
      model.url,
      '--config',
      join(root, 'examples/tapedeck.config.ts'),
      '--db',
      db.url,
      '--workers',
      '2',
    ];
    const run = await tapedeck([...args, '--json'], { cwd: tmp, timeoutMs: 3_000_000 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      new RegExp(
        `${RECORDINGS.length * 3 * K} replays \\(${RECORDINGS.length} recordings × 3 prompt versions × k = ${K}\\)`,
      ),
    );
    const summary = JSON.parse(run.stdout) as SweepSummary;
    expect(summary.k).toBe(K);
    expect(summary.versions.map((v) => v.promptVersion)).toEqual(['baseline', 'fixed', 'passenger-only']);
    for (const v of summary.versions) {
      expect(v).toMatchObject({ tasks: RECORDINGS.length, runs: RECORDINGS.length * K, incompleteTasks: [] });
    }
    const byVersion = Object.fromEntries(summary.versions.map((v) => [v.promptVersion, v]));
    // The scenario: the baseline prompt books the wrong passenger, the fixed prompt and its first line alone do not.
    expect(byVersion.baseline?.resolved).toBe(0);
    expect(byVersion.baseline?.costPerResolvedTask).toBeNull();
    expect(byVersion.fixed?.resolved).toBeGreaterThan(0);
    expect(byVersion['passenger-only']?.resolved).toBeGreaterThan(0);

    // The same figures from the warehouse, by the documented SQL.
    wh = await openWarehouse({ url: db.url });
    const rows = (await wh.query(documentedSql(), [summary.sweepId, K])).rows;
    expect(rows.map((r) => r.prompt_version)).toEqual(['baseline', 'fixed', 'passenger-only']);
    for (const row of rows) {
      const v = byVersion[String(row.prompt_version)];
      const num = (x: unknown) => (x === null ? null : Number(x));
      expect({
        tasks: row.tasks,
        runs: row.runs,
        resolved: row.resolved,
        passAtK: num(row.pass_at_k),
        passHatK: num(row.pass_hat_k),
        costPerRun: num(row.cost_per_run),
        costPerResolvedTask: num(row.cost_per_resolved_task),
      }).toEqual({
        tasks: v?.tasks,
        runs: v?.runs,
        resolved: v?.resolved,
        passAtK: expect.closeTo(v?.passAtK as number, 9),
        passHatK: expect.closeTo(v?.passHatK as number, 9),
        costPerRun: expect.closeTo(v?.costPerRun as number, 9),
        costPerResolvedTask:
          v?.costPerResolvedTask === null ? null : expect.closeTo(v?.costPerResolvedTask as number, 9),
      });
    }

    // Run again: every probe was answered, nothing is replayed, and the table prints the same figures.
    const again = await tapedeck(args, { cwd: tmp, timeoutMs: 600_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(new RegExp(`${RECORDINGS.length * 3 * K} answered before, 0 queued`));
    for (const v of summary.versions) {
      const fmt = (n: number | null) => (n === null ? '-' : n.toFixed(3));
      expect(again.stdout).toMatch(
        new RegExp(
          `^${v.promptVersion}\\s+${v.tasks}\\s+${v.runs}\\s+${v.resolved}\\s+${fmt(v.passAt1)}\\s+${fmt(v.passAtK)}\\s+${fmt(v.passHatK)}\\s`,
          'm',
        ),
      );
    }
    expect(again.stdout).toMatch(/pass@5\s+pass\^5\s+cost\/run\s+cost\/resolved/);
  }, 3_600_000);
});
