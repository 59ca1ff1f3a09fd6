// The outcome engine: one recording + one contract -> the validator mesh -> hard gate + soft score ->
// eval_task_result, eval_validator_result[] and eval_state_result[] (seed 000 §4-§7, §12).
import { createHash } from 'node:crypto';
import { type EvalStateResult, type StateDiff, stateDiff } from '../diff/index.js';
import { buildLedger } from '../ledger/index.js';
import type { Recording } from '../recording/index.js';
import { byPrecedence, HARD_GATE_CODES, isFailureCode, type TrajectoryClass } from './codes.js';
import type { Contract } from './contract.js';
import { trajectoryOf } from './trajectory.js';
import { detectTrajectoryFailures, type TrajectoryFailure } from './trajectory-failures.js';
import { claimFactValidator } from './validators/claim-fact.js';
import { evidenceValidator } from './validators/evidence.js';
import { executionValidator } from './validators/execution.js';
import { type JudgeVerdict, readabilityValidator } from './validators/llm-judge.js';
import { requiredFieldValidator } from './validators/required-field.js';
import { ruleSopValidator } from './validators/rule-sop.js';
import { stateValidator } from './validators/state.js';
import type { EvidenceRef, Finding, ValidatorContext, ValidatorOutcome } from './validators/types.js';

export const EVALUATOR_VERSION = 'tapedeck-evaluate/1';

/** The seed's eval_task_result row (000 §7), camelCased, plus attribution and trajectory extensions. */
export interface EvalTaskResult {
  evalId: string;
  taskId: string;
  traceId: string;
  agentId: string | null;
  skillId: string | null;
  hardSuccess: boolean;
  outcomeScore: number;
  completenessScore: number;
  evidenceValidityScore: number;
  evidenceConsistencyScore: number;
  methodologyScore: number;
  readabilityScore: number;
  executionSuccessScore: number;
  primaryFailureReasonCode: string | null;
  failureReasonCodes: string[];
  evaluatorVersion: string;
  evalContractVersion: string;
  /** Not seed columns: the step the primary failure points at, the trajectory classes, state score, tokens, cost. */
  primaryFailureStepId: number | null;
  primaryFailureMessage: string | null;
  trajectoryFailureClasses: TrajectoryClass[];
  stateChangeScore: number;
  totalTokens: number;
  cost: number;
}

/** The seed's eval_validator_result row (000 §7), camelCased. */
export interface EvalValidatorResult {
  evalId: string;
  validatorName: string;
  validatorType: string;
  passed: boolean;
  score: number;
  confidence: number;
  failureReasonCodes: string[];
  evidenceRefs: EvidenceRef[];
  diagnosticMessage: string;
  latencyMs: number;
  evaluatorModel: string | null;
}

export interface Evaluation {
  task: EvalTaskResult;
  validators: EvalValidatorResult[];
  state: EvalStateResult[];
  /** The full state diff (changes, expectations, side effects, against). */
  diff: StateDiff;
  trajectory: TrajectoryFailure[];
  /** Every finding, hard and soft, with its step. */
  findings: Finding[];
}

export interface EvaluateOptions {
  evalId?: string;
  /** Compare the post-world with this recording's post-world too. */
  against?: Recording;
  /** A verdict from `judgeRecording` (the LLM judge is async and off by default). */
  judge?: JudgeVerdict;
  agentId?: string;
  skillId?: string;
  /** The run's total cost; default: the ledger's total_cost (price snapshot, else the bundled table). */
  cost?: number;
}

function runCost(recording: Recording, fallback: number): number {
  try {
    return buildLedger(recording, { provenance: false }).run.total_cost ?? fallback;
  } catch {
    return fallback;
  }
}

/** Soft score weights of seed 000 §4.2. */
export const DEFAULT_WEIGHTS = {
  completeness: 0.3,
  evidence_validity: 0.2,
  evidence_consistency: 0.2,
  methodology: 0.2,
  readability: 0.1,
};
export const DEFAULT_THRESHOLD = 6;

const LOW_CODE = {
  completeness: 'LOW_COMPLETENESS_SCORE',
  evidence_validity: 'LOW_EVIDENCE_VALIDITY_SCORE',
  evidence_consistency: 'LOW_EVIDENCE_CONSISTENCY_SCORE',
  methodology: 'LOW_METHODOLOGY_SCORE',
  readability: 'LOW_READABILITY_SCORE',
} as const;

function contractVersion(contract: Contract): string {
  if (contract.version !== undefined) return String(contract.version);
  return `sha256:${createHash('sha256').update(JSON.stringify(contract)).digest('hex').slice(0, 12)}`;
}

function timed(
  ctx: ValidatorContext,
  fn: (ctx: ValidatorContext) => ValidatorOutcome,
): ValidatorOutcome & { latencyMs: number } {
  const t0 = performance.now();
  try {
    const out = fn(ctx);
    return { ...out, latencyMs: Math.round(performance.now() - t0) };
  } catch (error) {
    // A validator bug must not sink the whole evaluation: it is the seed's EVALUATOR_FAILURE.
    return {
      validatorName: fn.name.replace(/Validator$/, ''),
      validatorType: 'error',
      score: 0,
      confidence: 0,
      findings: [
        { code: 'EVALUATOR_FAILURE', hard: false, message: error instanceof Error ? error.message : String(error) },
      ],
      evidenceRefs: [],
      message: `validator failed: ${error instanceof Error ? error.message : String(error)}`,
      latencyMs: Math.round(performance.now() - t0),
    };
  }
}

/**
 * Evaluates one recording (or replay) against a contract. Pure: reads only the recording.
 * ```ts
 * const { task } = evaluateRecording(rec, loadContract('examples/contracts/book-flight.yaml'));
 * task.hardSuccess; task.primaryFailureReasonCode; // e.g. false, 'WRONG_EXECUTION_TARGET'
 * ```
 */
export function evaluateRecording(recording: Recording, contract: Contract, options: EvaluateOptions = {}): Evaluation {
  const evalId = options.evalId ?? `${contract.task_id}:${recording.manifest.id}`;
  const sc = contract.success_criteria;
  // A name in must_not_include is a code when it names one (a seed code, or a code the contract's rules
  // report), in any case; any other word is text the answer must not contain (required_field): before,
  // every single word was taken for a code, so `must_not_include: [password]` checked nothing.
  const ruleCodes = new Set((contract.rules ?? []).flatMap((r) => r.failure_reason_code?.toUpperCase() ?? []));
  const forbiddenCodes = new Set(
    [...(sc.must_not_include ?? []), ...(sc.execution_result?.must_not_include ?? [])]
      .map((s) => s.toUpperCase())
      .filter((s) => isFailureCode(s) || ruleCodes.has(s)),
  );
  const sw = contract.state_weights;
  const diff = stateDiff(recording, {
    evalId,
    ...(options.against ? { against: options.against } : {}),
    ...(contract.expected_state ? { expected: contract.expected_state } : {}),
    weights: {
      ...(sw?.target_state_match !== undefined ? { targetStateMatch: sw.target_state_match } : {}),
      ...(sw?.content_usability !== undefined ? { contentUsability: sw.content_usability } : {}),
      ...(sw?.format_quality !== undefined ? { formatQuality: sw.format_quality } : {}),
      ...(sw?.boundary_control !== undefined ? { boundaryControl: sw.boundary_control } : {}),
    },
  });
  const trajectory = trajectoryOf(recording, contract.input?.user_instruction);
  const ctx: ValidatorContext = { recording, contract, trajectory, state: diff, forbiddenCodes };
  const outcomes = [
    timed(ctx, requiredFieldValidator),
    timed(ctx, evidenceValidator),
    timed(ctx, claimFactValidator),
    timed(ctx, ruleSopValidator),
    timed(ctx, (c) => readabilityValidator(c, options.judge)),
    timed(ctx, executionValidator),
    timed(ctx, stateValidator),
  ];
  if (options.judge) outcomes[4]!.latencyMs = options.judge.latencyMs;

  // Sub-scores (0-10) by the metric each validator feeds.
  const sub = (metric: NonNullable<ValidatorOutcome['metric']>) =>
    outcomes.find((o) => o.metric === metric)?.score ?? 10;
  const scores = {
    completeness: sub('completeness'),
    evidence_validity: sub('evidence_validity'),
    evidence_consistency: sub('evidence_consistency'),
    methodology: sub('methodology'),
    readability: sub('readability'),
  };
  const weights = { ...DEFAULT_WEIGHTS, ...contract.weights };
  const wsum = Object.values(weights).reduce((a, b) => a + b, 0) || 1;
  const outcomeScore =
    (weights.completeness * scores.completeness +
      weights.evidence_validity * scores.evidence_validity +
      weights.evidence_consistency * scores.evidence_consistency +
      weights.methodology * scores.methodology +
      weights.readability * scores.readability) /
    wsum;

  const findings: Finding[] = outcomes.flatMap((o) => o.findings);
  for (const [metric, code] of Object.entries(LOW_CODE) as Array<[keyof typeof LOW_CODE, string]>) {
    const threshold = contract.thresholds?.[metric] ?? DEFAULT_THRESHOLD;
    if (scores[metric] < threshold)
      findings.push({ code, hard: false, message: `${metric} ${scores[metric]} below ${threshold}` });
  }
  const traj = detectTrajectoryFailures(
    trajectory,
    contract.budgets?.max_steps !== undefined ? { maxSteps: contract.budgets.max_steps } : {},
  );
  const isHard = (f: Finding) => f.hard || forbiddenCodes.has(f.code);
  const hard = findings.filter(isHard);
  const hardSuccess = hard.length === 0;
  const allCodes = byPrecedence(findings.map((f) => f.code));
  const primary = (hardSuccess ? allCodes : byPrecedence(hard.map((f) => f.code)))[0] ?? null;
  const primaryFinding =
    primary === null
      ? undefined
      : findings
          .filter((f) => f.code === primary && (hardSuccess || isHard(f)))
          .sort((a, b) => (a.stepId ?? Number.MAX_SAFE_INTEGER) - (b.stepId ?? Number.MAX_SAFE_INTEGER))[0];
  const round = (n: number) => Math.round(n * 100) / 100;
  const task: EvalTaskResult = {
    evalId,
    taskId: contract.task_id,
    traceId: diff.traceId,
    agentId: options.agentId ?? contract.agent_id ?? null,
    skillId: options.skillId ?? contract.skill_id ?? null,
    hardSuccess,
    outcomeScore: round(outcomeScore),
    completenessScore: scores.completeness,
    evidenceValidityScore: scores.evidence_validity,
    evidenceConsistencyScore: scores.evidence_consistency,
    methodologyScore: scores.methodology,
    readabilityScore: scores.readability,
    executionSuccessScore: sub('execution_success'),
    primaryFailureReasonCode: primary,
    failureReasonCodes: allCodes,
    evaluatorVersion: EVALUATOR_VERSION,
    evalContractVersion: contractVersion(contract),
    primaryFailureStepId: primaryFinding?.stepId ?? null,
    primaryFailureMessage: primaryFinding?.message ?? null,
    trajectoryFailureClasses: [...new Set(traj.map((f) => f.failureClass))],
    stateChangeScore: diff.stateChangeScore,
    totalTokens: trajectory.totalTokens,
    cost: options.cost ?? runCost(recording, trajectory.cost),
  };
  const validators: EvalValidatorResult[] = outcomes.map((o) => ({
    evalId,
    validatorName: o.validatorName,
    validatorType: o.validatorType,
    passed: o.findings.length === 0,
    score: o.score,
    confidence: o.confidence,
    failureReasonCodes: byPrecedence(o.findings.map((f) => f.code)),
    evidenceRefs: o.evidenceRefs,
    diagnosticMessage: o.message,
    latencyMs: o.latencyMs,
    evaluatorModel: o.evaluatorModel ?? null,
  }));
  validators.push({
    evalId,
    validatorName: 'trajectory',
    validatorType: 'trajectory',
    passed: traj.length === 0,
    score: traj.length === 0 ? 10 : Math.max(0, 10 - 2 * traj.length),
    confidence: 0.7,
    failureReasonCodes: [],
    evidenceRefs: traj.map((f) => ({ kind: f.failureClass, ref: f.message, stepId: f.stepId })),
    diagnosticMessage:
      traj.length === 0
        ? 'no trajectory failure signature'
        : traj.map((f) => `${f.failureClass}: ${f.message}`).join('; '),
    latencyMs: 0,
    evaluatorModel: null,
  });
  return { task, validators, state: diff.rows, diff, trajectory: traj, findings };
}

/** A row object with snake_case keys, as the seed's SQL tables name their columns. */
export function toSqlRow(row: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v;
  return out;
}

export { HARD_GATE_CODES };
