// Providers: one module per model wire API behind one interface (types.ts), listed in
// registry.ts. Everything outside this folder asks these functions about model calls.

export { ConversationCalls, type WireMessage } from './conversation.js';
export {
  chunkBytes,
  eventJson,
  type Framing,
  framingOfType,
  type StreamEvent,
  streamBytes,
  streamEvents,
  TEXT_STREAM_TYPES,
} from './framing.js';
export {
  answerOf,
  answerText,
  carriedToolCalls,
  decodeModelCall,
  detectProvider,
  modelStepType,
  partText,
  promptSimilarity,
  providerById,
  providerOf,
  SAME_AGENT,
  systemPromptOf,
  toolsOf,
  turnsOf,
  turnText,
  withSystemPrompt,
} from './model-call.js';
export { num as tokenCount } from './read.js';
export { CONVERSATION_PROVIDERS, PROVIDERS } from './registry.js';
export { parseSse, type SseEvent } from './sse.js';
export type {
  ConversationDecoder,
  ConversationMessage,
  ConversationModelCall,
  ConversationProvider,
  DecodedModelCall,
  Json,
  ModelInput,
  ModelOutput,
  Provider,
  ProviderRequest,
  ProviderResponse,
  RecordedModelCall,
  ToolSpec,
  Turn,
  TurnPart,
} from './types.js';
