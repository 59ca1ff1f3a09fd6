// The recorder: capture a real agent run (HTTP + LLM calls, tools, world, nondeterminism)
// without changing its code, as a child process (recordCommand) or in-process (record).
export {
  type AgentCall,
  agentToolCall,
  classifyHttp,
  classifyToolName,
  stdioRpcCall,
  type ToolClassification,
  type ToolRule,
} from './classify.js';
export { RECORD_PRELOAD, type RecordCommandOptions, type RecordCommandResult, recordCommand } from './command.js';
export {
  activeRuns,
  currentRecording,
  type RecordContext,
  type RecordResult,
  record,
  runInput,
} from './in-process.js';
export { newRecordingId, type RecordOptions, shipRecording } from './recorder.js';
export { loadToolRules } from './rules-file.js';
export { type RunOutcome, type SampleOption, type Sampling, SamplingRulesSchema, samplingOf } from './sampling.js';
export { agentSdkVersions, findSdkVersions, KNOWN_SDKS } from './sdk-versions.js';
export {
  RECORDING_HEADER,
  type RecordedRun,
  recordFetchHandler,
  recordHandler,
  recordMiddleware,
  type ServerRecordOptions,
  type ServerRunInfo,
} from './server.js';
export { type RecordedEvent, RecordSession, type SessionOptions, type WorldSource } from './session.js';
export { type ToolOptions, tool } from './tool.js';
export { messageValue, stepOfTurn, type Turn, type TurnMessage, websocketStep } from './websocket.js';
export { createDbTracker, createFsTracker, openWorld, type WorldCapture, type WorldOptions } from './world/index.js';
