// The providers tapedeck understands, one line each, tried in this order (the first whose
// `detect` accepts a request decodes it). To add a provider: write its module (see types.ts,
// and docs/sdks.md "Adding a provider"), import it here and add its line to the list.
import { anthropicMessages } from './anthropic-messages.js';
import { bedrockInvoke, vertexAnthropic } from './anthropic-platforms.js';
import { bedrockConverse } from './bedrock-converse.js';
import { gemini } from './gemini.js';
import { geminiEmbeddings } from './gemini-embeddings.js';
import { geminiLive } from './gemini-live.js';
import { ollamaChat } from './ollama.js';
import { ollamaEmbeddings } from './ollama-embeddings.js';
import { ollamaGenerate } from './ollama-generate.js';
import { openaiChat } from './openai-chat.js';
import { openaiEmbeddings } from './openai-embeddings.js';
import { openaiRealtime } from './openai-realtime.js';
import { openaiResponses } from './openai-responses.js';
import type { ConversationProvider, Provider } from './types.js';

export const PROVIDERS: readonly Provider[] = [
  openaiChat, // POST …/chat/completions
  openaiResponses, // POST …/responses
  anthropicMessages, // POST …/messages
  gemini, // POST …/models/{model}:generateContent | :streamGenerateContent
  openaiEmbeddings, // POST …/embeddings (also Azure's …/deployments/{deployment}/embeddings)
  geminiEmbeddings, // POST …/models/{model}:embedContent | :batchEmbedContents
  ollamaChat, // POST …/api/chat (Ollama's native API; NDJSON streams)
  ollamaEmbeddings, // POST …/api/embed | …/api/embeddings
  ollamaGenerate, // POST …/api/generate (a prompt, `system`, `context`; NDJSON streams)
  bedrockConverse, // POST …/model/{modelId}/converse | /converse-stream (AWS event stream)
  bedrockInvoke, // POST …/model/{modelId}/invoke | /invoke-with-response-stream: Claude's Messages body (AWS event stream of chunks)
  vertexAnthropic, // POST …/publishers/anthropic/models/{model}:rawPredict | :streamRawPredict: Claude's Messages body (SSE)
];

/**
 * The model APIs spoken over a WebSocket conversation, tried in this order on each message of a
 * conversation until one detects it (conversation.ts).
 */
export const CONVERSATION_PROVIDERS: readonly ConversationProvider[] = [
  openaiRealtime, // …/realtime: session.update, response.create, response.done (Azure's too)
  geminiLive, // …BidiGenerateContent: setup, clientContent, serverContent, toolCall
];
