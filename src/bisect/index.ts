// Bisect: where did the agent's belief part from the world, where do two runs part, which prompt change did it.
export {
  type AlignmentOp,
  alignActions,
  alignRuns,
  type DivergenceKind,
  type NormalisedAction,
  normaliseActions,
  type RunAlignment,
  sideBySide,
} from './align.js';
export {
  type Belief,
  type BeliefAction,
  beliefAt,
  type Claim,
  type Decision,
  type Observation,
} from './belief.js';
export {
  type BisectBeliefOptions,
  type BisectBeliefResult,
  type BisectProgress,
  bisectBelief,
  checkMonotone,
  describeAction,
  type MonotonicityReport,
  type PathEntry,
  type StepSummary,
  summarizeStep,
} from './bisect-belief.js';
export {
  type BisectPromptsOptions,
  type BisectPromptsResult,
  bisectPrompts,
  type PromptProbeEntry,
  type PromptVersion,
} from './bisect-prompts.js';
export {
  applyHunks,
  type DdminOptions,
  type DdminProbe,
  type DdminResult,
  ddminPromptHunks,
  type PromptHunk,
  promptHunks,
} from './ddmin.js';
export { compareDivergence, type DivergenceShift, type ShiftVerdict } from './divergence-shift.js';
export {
  formatAlignment,
  formatBisect,
  formatDdmin,
  formatDdminProbe,
  formatProgress,
  formatPromptBisect,
  formatPromptProbe,
  formatShift,
} from './format.js';
export type { PredicateInput, PredicateResult, StepPredicate, Verdict } from './predicate.js';
export { toResult } from './predicate.js';
export * from './predicates/index.js';
export {
  cachedProbe,
  memoryStore,
  type ProbeFn,
  type ProbeOutcome,
  type ProbeStats,
  type ProbeStore,
  probeKey,
} from './probe-cache.js';
export { commandProbe, diskStore, type ReplayProbeOptions, replayProbe } from './replay-probe.js';
export { bisectRange, evaluationBound, type SearchResult } from './search.js';
export * from './user/index.js';
export { assertStep, bodyToText, listSteps, type StepView, stepCount, type World, worldAtStep } from './view.js';
