// The state-diff engine: pure functions from recordings (or snapshots) to world changes and eval_state_result rows.
export { compareWorlds, type World, type WorldComparison } from './compare-worlds.js';
export { changedColumns, diffDb, rowRef, sameValue } from './db-diff.js';
export {
  changeObjectId,
  checkExpectations,
  type ExpectationResult,
  type ExpectedState,
  ExpectedStateSchema,
  isRequestedChange,
  objectId,
  requestSelected,
} from './expected.js';
export {
  type BlobSource,
  changedTexts,
  decodeText,
  fileText,
  MAX_TEXT_BYTES,
  type WorldTexts,
} from './file-text.js';
export { diffFs } from './fs-diff.js';
export { bodyText, collectHttpEffects, effectParameters, requestSucceeded, targetPath } from './http-effects.js';
export {
  containsToken,
  findKey,
  findKeyLike,
  globToRegExp,
  isOrdered,
  type ListOrder,
  looseEqual,
  mismatchedKeys,
  subsetMatch,
} from './match.js';
export {
  type AgainstDiff,
  changeAttribution,
  postWorld,
  type StateDiff,
  type StateDiffOptions,
  stateDiff,
} from './state-diff.js';
export { type ToolFailure, toolCallFailure } from './tool-failure.js';
export * from './types.js';
