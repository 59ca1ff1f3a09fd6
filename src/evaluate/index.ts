// The outcome engine: eval contracts, the validator mesh, hard gate + soft score, failure codes, aggregates.
export {
  type Aggregate,
  aggregate,
  averageOutcomeScore,
  costPerResolvedTask,
  type ParetoBar,
  pareto,
  passAtK,
  passHatK,
  type TaskAggregate,
  taskSuccessRate,
} from './aggregate.js';
export * from './codes.js';
export { type Contract, ContractSchema, loadContract, parseContract, type Rule } from './contract.js';
export {
  DEFAULT_THRESHOLD,
  DEFAULT_WEIGHTS,
  EVALUATOR_VERSION,
  type EvalTaskResult,
  type EvaluateOptions,
  type Evaluation,
  type EvalValidatorResult,
  evaluateRecording,
  toSqlRow,
} from './evaluate.js';
export { type AgentCall, type Trajectory, trajectoryOf } from './trajectory.js';
export { detectTrajectoryFailures, type TrajectoryFailure } from './trajectory-failures.js';
export { type JudgeOptions, type JudgeVerdict, judgeRecording } from './validators/llm-judge.js';
export type { EvidenceRef, Finding } from './validators/types.js';
