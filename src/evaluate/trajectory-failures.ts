// The five trajectory failure classes of seed 001 (§6.5), detected on the recorded trajectory: wrong tool,
// bad args, hallucinated state, gave up, loop. Each names the step that shows its signature.

import { findContradiction, usedValues } from '../facts/index.js';
import { canonicalJson } from '../recording/index.js';
import type { TrajectoryClass } from './codes.js';
import { type AgentCall, entitiesOf, factsOf, idsUsed, type Trajectory } from './trajectory.js';

export interface TrajectoryFailure {
  failureClass: TrajectoryClass;
  stepId: number;
  message: string;
}

const GAVE_UP =
  /\b(I (?:cannot|can't|can not|am unable|was unable|could not|couldn't|won't be able)|unable to|I'm sorry|I am sorry|give up|not possible)\b/i;
const UNKNOWN_TOOL = /\b(unknown|no such|unsupported|invalid) tool\b|tool .* not found/i;
const BAD_ARGS = /(invalid|bad[_ ]?request|validation|missing|required|malformed|unprocessable)/i;

function signature(c: AgentCall): string {
  return `${c.name} ${canonicalJson(c.args)}`;
}

function errorOf(c: AgentCall): string | undefined {
  if (c.error) return `${c.error.code} ${c.error.message}`;
  if (c.status !== undefined && c.status >= 400) return `HTTP ${c.status} ${c.resultText ?? ''}`;
  if (c.resultText && /"error"\s*:/.test(c.resultText)) return c.resultText;
  return undefined;
}

/** Classifies the trajectory's failures; `maxSteps` is the step budget (for "gave up with budget remaining"). */
export function detectTrajectoryFailures(t: Trajectory, options: { maxSteps?: number } = {}): TrajectoryFailure[] {
  const out: TrajectoryFailure[] = [];
  const offeredAt = new Map(t.modelSteps.map((m) => [m.stepId, m]));
  for (const c of t.calls) {
    const m = offeredAt.get(c.thinkStepId);
    const err = errorOf(c);
    if ((m && m.offeredTools.length > 0 && !m.offeredTools.includes(c.name)) || (err && UNKNOWN_TOOL.test(err))) {
      out.push({
        failureClass: 'wrong_tool',
        stepId: c.stepId,
        message: `step ${c.stepId}: ${c.name} is not one of the tools offered`,
      });
      continue;
    }
    const missing = (m?.requiredArgs.get(c.name) ?? []).filter(
      (k) => !(c.args && typeof c.args === 'object' && k in (c.args as Record<string, unknown>)),
    );
    if (!c.argsValid || missing.length > 0 || (err && (c.status === 400 || c.status === 422 || BAD_ARGS.test(err)))) {
      const why = !c.argsValid
        ? 'arguments are not valid JSON'
        : missing.length > 0
          ? `missing required ${missing.join(', ')}`
          : `rejected: ${err!.slice(0, 120)}`;
      out.push({ failureClass: 'bad_args', stepId: c.stepId, message: `step ${c.stepId}: ${c.name} ${why}` });
    }
    const facts = factsOf(t);
    const invented = idsUsed(c.args).filter((id) => facts.groundId(id, c.seq) === undefined);
    if (invented.length > 0) {
      out.push({
        failureClass: 'hallucinated_state',
        stepId: c.stepId,
        message: `step ${c.stepId}: ${c.name} acts on ${invented.join(', ')}, which no observation returned and the user never gave`,
      });
      continue;
    }
    // Acting on an entity whose own observed attributes contradict the task (another customer's order):
    // the belief that it is the user's was never observed either.
    if (!c.mutating) continue;
    const found = findContradiction(
      { step: c.thinkStepId, what: `THINK decided ${c.name}`, args: c.args, bound: c.seq },
      entitiesOf(t),
      t.userText,
      usedValues,
    );
    if (found !== undefined)
      out.push({ failureClass: 'hallucinated_state', stepId: c.stepId, message: `contradiction: ${found.message}` });
  }
  const answer = t.finalAnswer ?? '';
  if (GAVE_UP.test(answer) && (options.maxSteps === undefined || t.stepCount < options.maxSteps)) {
    const last = t.modelSteps.at(-1)?.stepId ?? 0;
    out.push({
      failureClass: 'gave_up',
      stepId: last,
      message: `step ${last}: the agent stopped ("${answer.slice(0, 80)}") with budget and tools remaining`,
    });
  }
  const sigs = t.calls.map(signature);
  // A loop of `length` calls from the i-th, reported at the call that made it one (`at`).
  const loop = (i: number, length: number, at: number, what: string) =>
    out.push({
      failureClass: 'loop',
      stepId: t.calls[i + at]!.stepId,
      message: `steps ${t.calls
        .slice(i, i + length)
        .map((c) => c.stepId)
        .join(', ')}: ${what}`,
    });
  for (let i = 0; i < sigs.length; i++) {
    let same = 1;
    while (sigs[i + same] === sigs[i]) same++;
    if (same >= 3) {
      loop(i, same, 2, `${t.calls[i]!.name} repeated ${same} times with the same arguments`);
      break;
    }
    let span = 2;
    while (sigs[i + span] === sigs[i + span - 2] && sigs[i] !== sigs[i + 1]) span++;
    if (span >= 5) {
      loop(i, span, 4, `${t.calls[i]!.name} -> ${t.calls[i + 1]!.name} cycle`);
      break;
    }
  }
  return out;
}
