// Prompt change: did the belief-divergence step move, disappear or stay between a baseline and its replay?
import type { Recording } from '../recording/index.js';
import { alignRuns } from './align.js';
import { type BisectBeliefOptions, type BisectBeliefResult, bisectBelief } from './bisect-belief.js';
import type { StepPredicate } from './predicate.js';

/**
 * `unfinished`: the baseline diverges, the replay does not, but the replay stopped (failed, timed
 * out, interrupted, cut) before the baseline's divergence step: it shows nothing about that step.
 */
export type ShiftVerdict = 'stayed' | 'moved' | 'disappeared' | 'unfinished' | 'appeared' | 'none';

export interface DivergenceShift {
  verdict: ShiftVerdict;
  /** One sentence for people. */
  summary: string;
  baseline: BisectBeliefResult;
  replay: BisectBeliefResult;
  /** How similar the two trajectories are (1 - edit distance / longest). */
  similarity: number;
}

/**
 * Bisects the baseline and the replay with the same predicate and compares where each turns bad.
 * `makePredicate` is called once per run so each search owns (and closes) its predicate.
 * `replayResult`: the replay's search, made already with the same predicate (`tapedeck bisect` on a
 * replay searches it first): it is not searched again.
 */
export async function compareDivergence(
  baseline: Recording,
  replay: Recording,
  makePredicate: () => StepPredicate,
  options: Pick<BisectBeliefOptions, 'onProgress' | 'worldAt'> & { replayResult?: BisectBeliefResult } = {},
): Promise<DivergenceShift> {
  const { replayResult, ...search } = options;
  const before = await bisectBelief(baseline, makePredicate(), search);
  const after = replayResult ?? (await bisectBelief(replay, makePredicate(), search));
  const similarity = alignRuns(baseline, replay).similarity;
  const b = before.firstBad;
  const r = after.firstBad;
  let verdict: ShiftVerdict;
  let summary: string;
  const reached = lastStep(replay);
  if (b && !r && replay.manifest.status !== 'complete' && reached < b.step) {
    verdict = 'unfinished';
    summary = `the replay stopped (${replay.manifest.status}) after ${reached === 0 ? 'no step' : `step ${reached}`}, before baseline step ${b.step} (${b.stateType} ${b.name}) diverges: whether the divergence is gone is not known`;
  } else if (b && !r) {
    verdict = 'disappeared';
    summary = `the divergence at baseline step ${b.step} (${b.stateType} ${b.name}) is gone in the replay`;
  } else if (!b && r) {
    verdict = 'appeared';
    summary = `the replay diverges at step ${r.step} (${r.stateType} ${r.name}); the baseline did not`;
  } else if (b && r) {
    const same = b.step === r.step && b.name === r.name;
    verdict = same ? 'stayed' : 'moved';
    summary = same
      ? `the divergence stayed at step ${b.step} (${b.stateType} ${b.name})`
      : `the divergence moved from step ${b.step} (${b.stateType} ${b.name}) to step ${r.step} (${r.stateType} ${r.name})`;
  } else {
    verdict = 'none';
    summary = 'neither run diverges';
  }
  return { verdict, summary, baseline: before, replay: after, similarity };
}

/** The highest step a run wrote (0: none). */
function lastStep(run: Recording): number {
  let last = 0;
  for (const e of run.events) if (e.type === 'step.started' && e.stepId > last) last = e.stepId;
  return last;
}
