// Sweeps: recordings × prompt versions × k samples, each sample a replay job (a probe) run by
// workers from the queue; the results are the replays' rows in the warehouse, from which pass@k,
// pass^k and cost per resolved task per prompt version are computed (seed 001: EQ A6.1, A6.2).
import { createHash } from 'node:crypto';
import { costPerResolvedTask, passAtK, passHatK } from '../evaluate/aggregate.js';
import { TapedeckError } from '../recording/errors.js';
import { readManifest } from '../recording/index.js';
import type { ReplayJob } from './jobs.js';
import { type EnqueueOptions, QUEUE_SCHEMA, type Queue } from './queue.js';
import { localRecording } from './recordings/index.js';
import type { Warehouse } from './warehouse.js';

export interface PromptVersion {
  /** The name it is reported under (e.g. the file's name). */
  version: string;
  text: string;
}

export interface SweepSpec {
  /** Recording folders or store URLs (what every worker can reach). */
  recordings: readonly string[];
  prompts: readonly PromptVersion[];
  /** k: replays per recording and prompt version. */
  samples: number;
  /** Eval contract YAML text: each replay's hard gate decides whether it resolved the task. */
  contract: string;
  mode?: 'counterfactual' | 'exact';
  modelEndpoint?: string;
  /** A store URL the replays are pushed to (default: kept on the worker that ran them). */
  out?: string;
  /** Run the recorded commands and apply the recorded env of recordings no worker's key sealed (--trust-recording). */
  trustRecording?: boolean;
}

export interface Probe {
  key: string;
  promptVersion: string;
  taskId: string;
  sample: number;
  job: ReplayJob;
}

export interface SweepPlan {
  sweepId: string;
  k: number;
  probes: Probe[];
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** The probes of a sweep. A probe's key is what it replays, so the same probe in two sweeps is one replay. */
export async function planSweep(spec: SweepSpec): Promise<SweepPlan> {
  if (!Number.isInteger(spec.samples) || spec.samples < 1)
    throw new TapedeckError('BAD_OPTION', `--samples ${spec.samples} is not a positive integer`);
  if (spec.prompts.length === 0) throw new TapedeckError('BAD_OPTION', 'a sweep needs at least one prompt version');
  if (new Set(spec.prompts.map((p) => p.version)).size !== spec.prompts.length)
    throw new TapedeckError('BAD_OPTION', 'two prompt versions have the same name: name the files apart');
  const mode = spec.mode ?? 'counterfactual';
  const contractSha = sha256(spec.contract);
  const tasks: Array<{ ref: string; taskId: string; identity: string }> = [];
  for (const ref of spec.recordings) {
    const manifest = await readManifest(await localRecording(ref));
    // The recording's identity: its id and the hash of its events (an edited recording is another probe).
    tasks.push({ ref, taskId: manifest.id, identity: `${manifest.id}:${manifest.integrity?.eventsSha256 ?? ''}` });
  }
  const probes: Probe[] = [];
  for (const prompt of spec.prompts) {
    for (const task of tasks) {
      for (let sample = 0; sample < spec.samples; sample++) {
        const key = sha256(
          JSON.stringify([
            task.identity,
            sha256(prompt.text),
            sample,
            contractSha,
            mode,
            spec.modelEndpoint ?? '',
            // Trusting the recording applies its env: another replay (kept out when unset, so keys stay as they were).
            ...(spec.trustRecording ? ['trusted'] : []),
          ]),
        );
        probes.push({
          key,
          promptVersion: prompt.version,
          taskId: task.taskId,
          sample,
          job: {
            recording: task.ref,
            mode,
            systemPrompt: prompt.text,
            contract: spec.contract,
            ...(spec.modelEndpoint !== undefined ? { modelEndpoint: spec.modelEndpoint } : {}),
            ...(spec.out !== undefined ? { out: spec.out } : {}),
            ...(spec.trustRecording ? { trustRecording: true } : {}),
            probe: { key, taskId: task.taskId, sample },
          },
        });
      }
    }
  }
  const sweepId = sha256(
    JSON.stringify(
      spec.prompts.map((p) => [p.version, ...probes.filter((q) => q.promptVersion === p.version).map((q) => q.key)]),
    ),
  ).slice(0, 16);
  return { sweepId, k: spec.samples, probes };
}

/** Stores the sweep and its probes, and queues the probes not answered yet. */
export async function enqueueSweep(
  warehouse: Warehouse,
  queue: Queue,
  plan: SweepPlan,
  options: EnqueueOptions = {},
): Promise<{ queued: number; answered: number; alreadyQueued: number }> {
  await warehouse.query(
    `INSERT INTO sweep (sweep_id, k, spec) VALUES ($1, $2, $3::jsonb) ON CONFLICT (sweep_id) DO NOTHING`,
    [plan.sweepId, plan.k, JSON.stringify({ probes: plan.probes.length })],
  );
  await warehouse.query(
    `INSERT INTO sweep_probe (probe_key, task_id, sample)
     SELECT p.key, p.task_id, p.sample FROM jsonb_to_recordset($1::jsonb) AS p(key text, task_id text, sample int)
     ON CONFLICT (probe_key) DO NOTHING`,
    [JSON.stringify(plan.probes.map((p) => ({ key: p.key, task_id: p.taskId, sample: p.sample })))],
  );
  await warehouse.query(
    `INSERT INTO sweep_member (sweep_id, prompt_version, probe_key)
     SELECT $1, m.version, m.key FROM jsonb_to_recordset($2::jsonb) AS m(version text, key text)
     ON CONFLICT DO NOTHING`,
    [plan.sweepId, JSON.stringify(plan.probes.map((p) => ({ version: p.promptVersion, key: p.key })))],
  );
  const answered = new Set(
    (
      await warehouse.query(
        'SELECT probe_key FROM sweep_probe WHERE probe_key = ANY($1::text[]) AND trace_id IS NOT NULL',
        [plan.probes.map((p) => p.key)],
      )
    ).rows.map((r) => String(r.probe_key)),
  );
  let queued = 0;
  let alreadyQueued = 0;
  const seen = new Set<string>();
  for (const probe of plan.probes) {
    if (answered.has(probe.key) || seen.has(probe.key)) continue;
    seen.add(probe.key);
    // The probe key is the singleton key: a probe queued or running already is not queued again.
    const id = await queue.enqueue('replay', probe.job, { ...options, singletonKey: probe.key });
    if (id === null) alreadyQueued++;
    else queued++;
  }
  return { queued, answered: answered.size, alreadyQueued };
}

export async function isProbeAnswered(warehouse: Warehouse, key: string): Promise<boolean> {
  const r = await warehouse.query('SELECT 1 FROM sweep_probe WHERE probe_key = $1 AND trace_id IS NOT NULL', [key]);
  return r.rows.length > 0;
}

export async function recordProbeResult(
  warehouse: Warehouse,
  key: string,
  result: { traceId: string; evalId: string | null; replay: string; jobId: string },
): Promise<void> {
  await warehouse.query(
    `UPDATE sweep_probe SET trace_id = $2, eval_id = $3, replay = $4, job_id = $5, completed_at = (now() AT TIME ZONE 'UTC')
     WHERE probe_key = $1`,
    [key, result.traceId, result.evalId, result.replay, result.jobId],
  );
}

export interface SweepProgress {
  total: number;
  answered: number;
  /** Probes whose job used up its retries. */
  failed: number;
}

export async function sweepProgress(warehouse: Warehouse, sweepId: string): Promise<SweepProgress> {
  const r = await warehouse.query(
    `SELECT count(DISTINCT m.probe_key)::int AS total,
            count(DISTINCT m.probe_key) FILTER (WHERE p.trace_id IS NOT NULL)::int AS answered,
            count(DISTINCT m.probe_key) FILTER (WHERE p.trace_id IS NULL AND EXISTS (
              SELECT 1 FROM ${QUEUE_SCHEMA}.job j WHERE j.name = 'tapedeck-replay' AND j.singleton_key = m.probe_key AND j.state = 'failed'
            ) AND NOT EXISTS (
              SELECT 1 FROM ${QUEUE_SCHEMA}.job j WHERE j.name = 'tapedeck-replay' AND j.singleton_key = m.probe_key AND j.state IN ('created', 'retry', 'active')
            ))::int AS failed
     FROM sweep_member m JOIN sweep_probe p ON p.probe_key = m.probe_key
     WHERE m.sweep_id = $1`,
    [sweepId],
  );
  const row = r.rows[0] ?? {};
  return { total: Number(row.total ?? 0), answered: Number(row.answered ?? 0), failed: Number(row.failed ?? 0) };
}

/** One prompt version's figures. pass@k and pass^k are means over the tasks with at least k runs. */
export interface VersionSummary {
  promptVersion: string;
  tasks: number;
  runs: number;
  resolved: number;
  passAt1: number | null;
  passAtK: number | null;
  passHatK: number | null;
  costPerRun: number | null;
  /** Seed 001 EQ A6.2: cost per run / resolution rate = total cost / resolved runs; null when none resolved. */
  costPerResolvedTask: number | null;
  currency: string | null;
  /** Tasks with fewer than k answered runs (left out of pass@k and pass^k). */
  incompleteTasks: string[];
}

export interface SweepSummary {
  sweepId: string;
  k: number;
  versions: VersionSummary[];
}

/** The runs of a sweep as the warehouse holds them: one row per answered probe with a score. */
export const SWEEP_RUNS_SQL = `
SELECT m.prompt_version, p.task_id, e.hard_success, r.total_cost, r.currency
FROM sweep_member m
JOIN sweep_probe p ON p.probe_key = m.probe_key
JOIN eval_task_result e ON e.eval_id = p.eval_id
JOIN trace_run r ON r.trace_id = p.trace_id
WHERE m.sweep_id = $1`;

/** pass@k, pass^k and cost per resolved task per prompt version, from the warehouse. */
export async function sweepSummary(
  warehouse: Warehouse,
  sweepId: string,
  versionOrder: readonly string[] = [],
): Promise<SweepSummary> {
  const sweep = await warehouse.query('SELECT k FROM sweep WHERE sweep_id = $1', [sweepId]);
  if (sweep.rows.length === 0) throw new TapedeckError('NO_SWEEP', `no sweep ${sweepId} in ${warehouse.location}`);
  const k = Number(sweep.rows[0]?.k);
  const rows = (await warehouse.query(SWEEP_RUNS_SQL, [sweepId])).rows;
  const versions = new Map<string, Map<string, { n: number; c: number; cost: number }>>();
  const currency = new Map<string, string | null>();
  for (const version of versionOrder) versions.set(version, new Map());
  for (const row of rows) {
    const version = String(row.prompt_version);
    const task = String(row.task_id);
    let tasks = versions.get(version);
    if (!tasks) versions.set(version, (tasks = new Map()));
    const t = tasks.get(task) ?? { n: 0, c: 0, cost: 0 };
    t.n++;
    if (row.hard_success === true) t.c++;
    t.cost += Number(row.total_cost ?? 0);
    tasks.set(task, t);
    if (!currency.has(version)) currency.set(version, (row.currency as string | null) ?? null);
  }
  const mean = (values: number[]): number | null =>
    values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
  const out: VersionSummary[] = [];
  for (const [version, tasks] of versions) {
    const all = [...tasks.values()];
    const complete = [...tasks.entries()].filter(([, t]) => t.n >= k);
    const runs = all.reduce((n, t) => n + t.n, 0);
    const resolved = all.reduce((n, t) => n + t.c, 0);
    const cost = all.reduce((n, t) => n + t.cost, 0);
    const costPerRun = runs === 0 ? null : cost / runs;
    const resolvedCost =
      costPerRun === null ? Number.POSITIVE_INFINITY : costPerResolvedTask(costPerRun, resolved / runs);
    out.push({
      promptVersion: version,
      tasks: tasks.size,
      runs,
      resolved,
      passAt1: mean(all.filter((t) => t.n >= 1).map((t) => passAtK(t.n, t.c, 1))),
      passAtK: mean(complete.map(([, t]) => passAtK(t.n, t.c, k))),
      passHatK: mean(complete.map(([, t]) => passHatK(t.n, t.c, k))),
      costPerRun,
      costPerResolvedTask: Number.isFinite(resolvedCost) ? resolvedCost : null,
      currency: currency.get(version) ?? null,
      incompleteTasks: [...tasks.entries()].filter(([, t]) => t.n < k).map(([task]) => task),
    });
  }
  return { sweepId, k, versions: out };
}
