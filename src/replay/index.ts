// The replayer: re-runs an agent against a recording in the sandbox, with no live side effects.
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
  VOLATILE_RULES,
  viewOf,
} from './normalize.js';
export { applyOverride, overrideRequestBody, type PromptOverride, systemPromptOf, withSystemPrompt } from './prompt.js';
export { compareWorlds, materializeWorld, replay, retarget } from './session.js';
export type * from './types.js';
