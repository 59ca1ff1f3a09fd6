// The `tapedeck` package: what `import { … } from 'tapedeck'` offers. Record and replay agent
// runs, score them (evaluate), cost them (ledger), find where they went wrong (bisect), and read
// recordings. The CLI (`tapedeck …`) is built on exactly these.
export {
  type AlignmentOp,
  alignRuns,
  allOf,
  type BisectBeliefOptions,
  type BisectBeliefResult,
  type BisectPromptsOptions,
  type BisectPromptsResult,
  beliefAt,
  bisectBelief,
  bisectPrompts,
  builtinPredicate,
  checkMonotone,
  compareDivergence,
  ddminPromptHunks,
  functionPredicate,
  loadJsPredicate,
  type ReplayProbeOptions,
  type RunAlignment,
  replayProbe,
  type StepPredicate,
  shellPredicate,
  sqlPredicate,
  worldAtStep,
} from './bisect/index.js';
export { type StateDiff, type StateDiffOptions, stateDiff } from './diff/index.js';
export {
  type Aggregate,
  aggregate,
  type Contract,
  costPerResolvedTask,
  type EvalTaskResult,
  type EvaluateOptions,
  type Evaluation,
  evaluateRecording,
  loadContract,
  parseContract,
  passAtK,
  passHatK,
} from './evaluate/index.js';
export {
  buildLedger,
  compareLedgers,
  formatLedger,
  type LedgerOptions,
  loadPrices,
  type PriceTable,
} from './ledger/index.js';
export type { Ledger } from './ledger/types.js';
export {
  currentRecording,
  RECORDING_HEADER,
  type RecordCommandOptions,
  type RecordCommandResult,
  type RecordContext,
  type RecordedRun,
  type RecordOptions,
  type RecordResult,
  record,
  recordCommand,
  recordFetchHandler,
  recordHandler,
  recordMiddleware,
  runInput,
  type SampleOption,
  type ServerRecordOptions,
  type ToolOptions,
  tool,
} from './record/index.js';
export {
  fileBytes,
  isTapedeckError,
  listRecordings,
  type Manifest,
  type Recording,
  RecordingError,
  type RecordingEvent,
  readManifest,
  readRecording,
  TapedeckError,
  worldAt,
} from './recording/index.js';
export {
  type InProcessDivergence,
  type InProcessReplayOptions,
  type InProcessReplayResult,
  replay,
  replayInProcess,
} from './replay/index.js';
export type { ReplayMode, ReplayOptions, ReplayResult } from './replay/types.js';
export { openWarehouse, type Warehouse, type WarehouseOptions } from './store/index.js';
