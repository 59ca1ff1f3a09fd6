// The replayer: re-runs an agent against a recording in the sandbox, with no live side effects.

export type { Answer, Answerer, Ask, HttpAnswer } from './answer.js';
export {
  type AnswerChain,
  type ChainSession,
  type ChainWorld,
  createAnswerChain,
  recordedDbAddress,
  SIMULATOR_PROMPT,
} from './chain/index.js';
export {
  type InProcessDivergence,
  type InProcessReplayOptions,
  type InProcessReplayResult,
  replayInProcess,
} from './in-process.js';
export { liveModelAnswerer, retarget } from './live.js';
export {
  bodyBytesOf,
  bodyTextOf,
  CallIndex,
  explainMiss,
  indexRecording,
  LAYERS,
  type LayerResult,
  type MatchLayer,
  type MatchResult,
  type RecordedCall,
} from './match.js';
export {
  apiOf,
  canonical,
  type FieldDiff,
  fieldDiff,
  isModelApi,
  keysOf,
  type LiveRequest,
  type RequestApi,
  type RequestKeys,
  type RequestView,
  structuralOf,
  viewOf,
} from './normalize.js';
export { applyOverride, overrideRequestBody, type PromptOverride } from './prompt.js';
export { replay } from './replay.js';
export type * from './types.js';
export { describeVersionChanges, type VersionChange, versionChanges } from './version-changes.js';
export { materializeWorld } from './world.js';
