// Belief vs world: the first step at which a predicate over (belief, world) turns bad.
import type { Recording, StateType } from '../recording/index.js';
import { canonicalJson, TapedeckError } from '../recording/index.js';
import { beliefAt } from './belief.js';
import type { PredicateInput, PredicateResult, StepPredicate } from './predicate.js';
import { bisectRange, evaluationBound } from './search.js';
import { assertStep, listSteps, type StepView, stepCount, type World, worldAtStep } from './view.js';

/** One predicate evaluation, as shown on the search path. */
export interface PathEntry {
  step: number;
  verdict: PredicateResult['verdict'];
  reason?: string;
}

/** Progress of a bisection, as it goes. */
export interface BisectProgress {
  evaluation: number;
  step: number;
  verdict: PredicateResult['verdict'];
  reason?: string;
  good: number;
  bad: number | undefined;
  maxEvaluations: number;
}

export interface BisectBeliefOptions {
  /** A step known good (default 0: before the first step). */
  good?: number;
  /** A step known bad (default: the last step, evaluated first). */
  bad?: number;
  onProgress?: (progress: BisectProgress) => void;
  /** Time travel; defaults to worldAt(recording, k). */
  worldAt?: (recording: Recording, step: number) => World;
}

/** What the first bad step did. */
export interface StepSummary {
  step: number;
  stateType: StateType;
  name: string;
  /** A one-line description of the action: the tool and its arguments, or the model's decision. */
  action: string;
}

export interface BisectBeliefResult {
  recording: string;
  predicate: string;
  steps: number;
  /** The first step at which the predicate is bad; absent when the run is good to the end. */
  firstBad?: StepSummary & { reason: string; violationStep?: number; evidence?: Record<string, unknown> };
  /** When skipped steps hide the boundary: the steps that may be the first bad one. */
  candidates: number[];
  lastGood: number;
  evaluations: number;
  maxEvaluations: number;
  path: PathEntry[];
}

/**
 * Bisects the steps of a recording for the first one at which `predicate` turns bad. The predicate at
 * step k sees the prefix 1..k (belief and world at k), so a violation stays a violation: monotone.
 */
export async function bisectBelief(
  recording: Recording,
  predicate: StepPredicate,
  options: BisectBeliefOptions = {},
): Promise<BisectBeliefResult> {
  const n = stepCount(recording);
  const good = options.good ?? 0;
  assertStep(recording, good, '--good step');
  if (options.bad !== undefined) {
    assertStep(recording, options.bad, '--bad step');
    if (options.bad <= good) {
      throw new TapedeckError('BISECT_STEP_RANGE', `--bad step ${options.bad} must come after --good step ${good}`);
    }
  }
  const steps = listSteps(recording);
  const timeTravel = options.worldAt ?? worldAtStep;
  const worlds = new Map<number, World>();
  const worldAt = (k: number): World => {
    let world = worlds.get(k);
    if (!world) {
      world = timeTravel(recording, k);
      worlds.set(k, world);
    }
    return world;
  };
  const maxEvaluations = evaluationBound((options.bad ?? n) - good);
  const evaluate = async (step: number): Promise<{ verdict: PredicateResult['verdict']; result: PredicateResult }> => {
    const input: PredicateInput = {
      step,
      belief: beliefAt(recording, step, steps),
      world: worldAt(step),
      recording,
      worldAt,
    };
    const result = await evaluateSafely(predicate, input);
    return { verdict: result.verdict, result };
  };
  try {
    if (n === 0 || (options.bad === undefined && n <= good)) {
      return {
        recording: recording.dir,
        predicate: predicate.name,
        steps: n,
        candidates: [],
        lastGood: good,
        evaluations: 0,
        maxEvaluations,
        path: [],
      };
    }
    const search = await bisectRange(1, options.bad ?? n, evaluate, {
      good,
      ...(options.bad === undefined ? {} : { bad: options.bad }),
      onProbe: (probe, state) =>
        options.onProgress?.({
          evaluation: state.evaluations,
          step: probe.at,
          verdict: probe.verdict,
          ...(probe.result.reason === undefined ? {} : { reason: probe.result.reason }),
          good: state.good,
          bad: state.bad,
          maxEvaluations,
        }),
    });
    const path: PathEntry[] = search.path.map((p) =>
      p.result.reason === undefined
        ? { step: p.at, verdict: p.verdict }
        : { step: p.at, verdict: p.verdict, reason: p.result.reason },
    );
    const result: BisectBeliefResult = {
      recording: recording.dir,
      predicate: predicate.name,
      steps: n,
      candidates: search.candidates,
      lastGood: search.lastGood,
      evaluations: search.evaluations,
      maxEvaluations,
      path,
    };
    if (search.firstBad !== undefined) {
      const at = search.firstBad;
      // The reason comes from the probe that proved this step bad; a known-bad --bad step is evaluated for it.
      let proof = search.path.find((p) => p.at === at)?.result;
      if (!proof) proof = (await evaluate(at)).result;
      const summary = summarizeStep(steps, at);
      result.firstBad = { ...summary, reason: proof.reason ?? `predicate ${predicate.name} is bad at step ${at}` };
      if (proof.violationStep !== undefined) result.firstBad.violationStep = proof.violationStep;
      if (proof.evidence !== undefined) result.firstBad.evidence = proof.evidence;
    }
    return result;
  } finally {
    await predicate.close?.();
  }
}

async function evaluateSafely(predicate: StepPredicate, input: PredicateInput): Promise<PredicateResult> {
  try {
    return await predicate.evaluate(input);
  } catch (error) {
    if (error instanceof TapedeckError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new TapedeckError(
      'BISECT_PREDICATE_FAILED',
      `predicate ${predicate.name} threw at step ${input.step}: ${message}. Fix the predicate (or return 'skip' for steps it cannot judge).`,
      { cause: error },
    );
  }
}

/** The step's state type, name and action in one line. */
export function summarizeStep(steps: StepView[], step: number): StepSummary {
  const view = steps.find((s) => s.step === step);
  if (!view) return { step, stateType: 'OBSERVE', name: '(no events)', action: '(no events)' };
  return { step, stateType: view.stateType, name: view.name, action: describeAction(view) };
}

/** One line for what a step did. */
export function describeAction(view: StepView): string {
  if (view.tool) {
    const http = view.exchange ? ` ${view.exchange.request.method} ${view.exchange.request.url}` : '';
    const status = view.exchange?.response
      ? ` -> ${view.exchange.response.status}`
      : view.tool.error
        ? ` -> ${view.tool.error.code}`
        : '';
    return `${view.name}(${clip(canonicalJson(view.tool.args))})${http}${status}`;
  }
  if (view.model) {
    const calls = view.model.output.toolCalls.map((c) => `${c.name}(${clip(c.arguments, 80)})`);
    if (calls.length > 0) return `${view.model.model} decided: ${calls.join(', ')}`;
    return `${view.model.model} answered: ${clip(JSON.stringify(view.model.output.text ?? ''), 120)}`;
  }
  return view.name;
}

function clip(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export interface MonotonicityReport {
  /** Verdict of every step 1..N. */
  verdicts: PathEntry[];
  monotone: boolean;
  /** Steps that are good although an earlier step was bad: binary search may have missed a boundary. */
  reversals: number[];
}

/**
 * Evaluates the predicate at every step (N evaluations, not log N) to check the assumption the
 * search rests on: once bad, bad. Prefix predicates are monotone by construction; user predicates
 * that look only at the world at k may not be (a row inserted at 4 and deleted at 6).
 */
export async function checkMonotone(
  recording: Recording,
  predicate: StepPredicate,
  options: Pick<BisectBeliefOptions, 'worldAt'> = {},
): Promise<MonotonicityReport> {
  const n = stepCount(recording);
  const steps = listSteps(recording);
  const timeTravel = options.worldAt ?? worldAtStep;
  const verdicts: PathEntry[] = [];
  try {
    for (let step = 1; step <= n; step++) {
      const input: PredicateInput = {
        step,
        belief: beliefAt(recording, step, steps),
        world: timeTravel(recording, step),
        recording,
        worldAt: (k) => timeTravel(recording, k),
      };
      const result = await evaluateSafely(predicate, input);
      verdicts.push(
        result.reason === undefined
          ? { step, verdict: result.verdict }
          : { step, verdict: result.verdict, reason: result.reason },
      );
    }
  } finally {
    await predicate.close?.();
  }
  const reversals: number[] = [];
  let seenBad = false;
  for (const v of verdicts) {
    if (v.verdict === 'bad') seenBad = true;
    else if (v.verdict === 'good' && seenBad) reversals.push(v.step);
  }
  return { verdicts, monotone: reversals.length === 0, reversals };
}
