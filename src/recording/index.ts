// The Recording contract: what this folder offers to every other module.

export {
  type AccountedWorld,
  ConnectionAccount,
  type SeenConnection,
  type SeenUnhooked,
  type SilentToolCall,
  silentToolCalls,
  silentToolCallWarnings,
  ToolCallAccount,
  UnhookedAccount,
  UnwatchedAccount,
  unhookedWarning,
  unrecordedWarning,
  unwatchedWarning,
} from './accounting.js';
export { blobRelativePath, isSha256, sha256Hex } from './blobs.js';
export { bodyBytes, bodyText, isBinaryType } from './body.js';
export { isBookkeepingTable } from './bookkeeping.js';
export { canonicalJson, canonicalJsonPretty } from './canonical-json.js';
export {
  describeFromDdl,
  parseColumnDefault,
  parseGeneratedExpression,
  parsePartitionBound,
} from './db-description.js';
export { type Domains, heldAsText, rowFacts, rowsInOneForm } from './db-values.js';
export { blockOnDisk } from './disk.js';
export * from './errors.js';
export { type FileContent, fileBytes, fileIdentity, fsIdentity, isInline } from './file-content.js';
export { asArray, isRecord, jsonOrText, MAX_JSON_DEPTH, parseJson, parseUntrusted, whyNotJson } from './json.js';
export { isSafeRelativePath, unsafePathReason } from './paths.js';
export {
  type AnswerProvenance,
  answerProvenance,
  callServedFrom,
  describeProvenance,
  type ExchangeServed,
  emptyProvenanceCounts,
  exchangesServed,
  isHeldBack,
  mergeServed,
  PROVENANCE_LABELS,
  PROVENANCE_MARKS,
  type ProvenanceCounts,
  type ServedFrom,
  stepServedFrom,
  toolServedFrom,
  unsoundAnswers,
  weakerProvenance,
} from './provenance.js';
export { readJsonFile } from './read-files.js';
export { parseDbSnapshot } from './read-snapshots.js';
export {
  formatFieldPath,
  type ListOptions,
  listRecordings,
  MAX_LINE_BYTES,
  type ReadOptions,
  readManifest,
  readRecording,
} from './reader.js';
export { isReadRequest, isReadRpc, READ_METHODS, rpcMethod } from './reads.js';
export {
  createRedactor,
  isPlaceholder,
  masksForMatching,
  PLACEHOLDER_PREFIX,
  type RedactionOptions,
  type Redactor,
  redactionKeyFile,
} from './redact.js';
export { knownLocale, knownTimeZone, LOCALE_VARS, localeOf, regionOf, timeZoneOf } from './region.js';
export * from './schema.js';
export { hasLocalSeal, SEAL_PATTERN, sealKey, sealKeyFile, sealManifest } from './seal.js';
export { isStagingName, removeRecordingFolder, stagingPath, sweepStaging } from './staging.js';
export { stateHome } from './state-home.js';
export { agentToolStep, type StepEvent, type StepRecord, stepEvents } from './step-writer.js';
export { describeStop, formatDuration, stoppedWarning } from './stopped.js';
export { isTelemetry } from './telemetry.js';
export { terminalSafe } from './terminal-safe.js';
export {
  atomsOf,
  type CarriedCalls,
  linkToolSteps,
  pickCall,
  type StepEventLike,
  type StepFacts,
  type StepName,
  StepNamer,
  stepFacts,
  stepNames,
  type ToolAction,
  type ToolLink,
  toolActions,
  urlAtoms,
} from './tool-links.js';
export type * from './types.js';
export { compareKeyValues, cutAt, endWorld, sortRows, worldAt } from './world.js';
export {
  type AppendInput,
  createRecordingWriter,
  INLINE_BODY_MAX,
  INLINE_FILES_BUDGET,
  type RecordingWriter,
  type WriterInit,
} from './writer.js';
