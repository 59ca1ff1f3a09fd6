// Aggregates over many runs: unbiased pass@k (product form, never factorials), pass^k, Task Success Rate,
// Average Outcome Score, cost per resolved task, and the failure Pareto (seeds 000 §4.2, 001 §6.3-§6.6).
import type { EvalTaskResult } from './evaluate.js';

function checkCounts(n: number, c: number, k: number): void {
  if (![n, c, k].every(Number.isInteger) || n < 0 || c < 0 || c > n || k < 1 || k > n)
    throw new RangeError(`need integers 0 <= c <= n and 1 <= k <= n (got n=${n}, c=${c}, k=${k})`);
}

/**
 * Unbiased pass@k (Chen et al. 2021; seed 001 EQ A6.1): 1 - C(n-c, k) / C(n, k), computed as
 * 1 - prod_{i=n-c+1..n} (1 - k/i), which stays exact in floating point for any n.
 * @example passAtK(20, 5, 2) // 0.4473...
 */
export function passAtK(n: number, c: number, k: number): number {
  checkCounts(n, c, k);
  if (n - c < k) return 1;
  let miss = 1;
  for (let i = n - c + 1; i <= n; i++) miss *= 1 - k / i;
  return 1 - miss;
}

/**
 * pass^k: the probability that k attempts drawn without replacement from the n runs ALL pass,
 * C(c, k) / C(n, k) = prod_{i=0..k-1} (c-i)/(n-i). The reliability view: what a user who runs the task k times sees.
 */
export function passHatK(n: number, c: number, k: number): number {
  checkCounts(n, c, k);
  if (c < k) return 0;
  let all = 1;
  for (let i = 0; i < k; i++) all *= (c - i) / (n - i);
  return all;
}

/** Seed 001 EQ A6.2: C_resolved = C_run / Pr[resolved]. Infinity when nothing resolves. */
export function costPerResolvedTask(costPerRun: number, resolutionRate: number): number {
  return resolutionRate > 0 ? costPerRun / resolutionRate : Number.POSITIVE_INFINITY;
}

/** Task Success Rate (seed 000 §4.2): runs with hardSuccess / all runs. */
export function taskSuccessRate(results: readonly Pick<EvalTaskResult, 'hardSuccess'>[]): number {
  return results.length === 0 ? 0 : results.filter((r) => r.hardSuccess).length / results.length;
}

/** Average Outcome Score (seed 000 §4.2): mean soft score over the runs that passed the hard gate; null if none did. */
export function averageOutcomeScore(
  results: readonly Pick<EvalTaskResult, 'hardSuccess' | 'outcomeScore'>[],
): number | null {
  const passed = results.filter((r) => r.hardSuccess);
  return passed.length === 0 ? null : passed.reduce((s, r) => s + r.outcomeScore, 0) / passed.length;
}

export interface ParetoBar {
  key: string;
  count: number;
  share: number;
  cumulativeShare: number;
}

/** Counts sorted descending with their share and running share: the chart with one owner per bar. */
export function pareto(keys: Iterable<string>): ParetoBar[] {
  const counts = new Map<string, number>();
  let total = 0;
  for (const k of keys) {
    counts.set(k, (counts.get(k) ?? 0) + 1);
    total++;
  }
  let running = 0;
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([key, count]) => {
      running += count;
      return { key, count, share: count / total, cumulativeShare: running / total };
    });
}

export interface TaskAggregate {
  taskId: string;
  n: number;
  c: number;
  passAtK: Record<number, number>;
  passHatK: Record<number, number>;
}

export interface Aggregate {
  runs: number;
  tasks: TaskAggregate[];
  taskSuccessRate: number;
  averageOutcomeScore: number | null;
  meanCostPerRun: number;
  costPerResolvedTask: number;
  /** Primary failure reasons of the failed runs. */
  failurePareto: ParetoBar[];
  /** Trajectory failure classes (seed 001) over all runs. */
  trajectoryPareto: ParetoBar[];
}

/** Aggregates eval_task_result rows; pass@k / pass^k per task for each k <= that task's n. */
export function aggregate(
  results: readonly EvalTaskResult[],
  options: { k?: number[]; costs?: readonly number[] } = {},
): Aggregate {
  const ks = options.k ?? [1, 5, 10];
  const byTask = new Map<string, EvalTaskResult[]>();
  for (const r of results) byTask.set(r.taskId, [...(byTask.get(r.taskId) ?? []), r]);
  const tasks: TaskAggregate[] = [...byTask.entries()].map(([taskId, runs]) => {
    const n = runs.length;
    const c = runs.filter((r) => r.hardSuccess).length;
    const at: Record<number, number> = {};
    const hat: Record<number, number> = {};
    for (const k of ks)
      if (k >= 1 && k <= n) {
        at[k] = passAtK(n, c, k);
        hat[k] = passHatK(n, c, k);
      }
    return { taskId, n, c, passAtK: at, passHatK: hat };
  });
  const costs = options.costs ?? results.map((r) => r.cost);
  const meanCost = costs.length === 0 ? 0 : costs.reduce((a, b) => a + b, 0) / costs.length;
  const rate = taskSuccessRate(results);
  return {
    runs: results.length,
    tasks,
    taskSuccessRate: rate,
    averageOutcomeScore: averageOutcomeScore(results),
    meanCostPerRun: meanCost,
    costPerResolvedTask: costPerResolvedTask(meanCost, rate),
    failurePareto: pareto(
      results.filter((r) => !r.hardSuccess).map((r) => r.primaryFailureReasonCode ?? 'UNKNOWN_FAILURE'),
    ),
    trajectoryPareto: pareto(results.flatMap((r) => r.trajectoryFailureClasses)),
  };
}
