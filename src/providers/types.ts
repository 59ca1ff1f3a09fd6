// What a provider is: one wire API of a model (OpenAI Chat Completions, Anthropic Messages, …)
// and everything tapedeck knows about its shapes, behind one interface. Nothing outside
// src/providers reads a provider's request or response shapes; it asks the registry.
import type { ModelCalledPayload, StreamChunk, ToolCall, Usage } from '../recording/types.js';
import type { Framing, StreamEvent } from './framing.js';

/** A request as a provider sees it (one recorded or live HTTP call, its body parsed). */
export interface ProviderRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: unknown;
}

/** A response as a provider sees it: a JSON body, or the raw chunks of a stream. */
export interface ProviderResponse {
  status: number;
  headers: Record<string, string>;
  json?: unknown;
  chunks?: StreamChunk[];
  /** The body's bytes when it is not JSON: a stream recorded whole (an AWS event stream is binary). */
  bytes?: Uint8Array;
}

export type Json = Record<string, unknown>;

/** The request side of a model call, provider-independent. */
export interface ModelInput {
  model: string;
  /** The system prompt text the model saw (joined when there are several), if any. */
  system?: string;
  /** The input messages as the API shaped them (stored as they are). */
  messages: unknown[];
  tools?: unknown[];
}

/** The response side of a model call, provider-independent. */
export interface ModelOutput {
  /** The model that answered, when the response says. */
  model?: string;
  text?: string;
  toolCalls: ToolCall[];
  /** An embeddings call's vectors: how many, of how many dimensions (model.called output.embeddings). */
  embeddings?: { count: number; dimensions: number };
  stopReason?: string;
  usage?: Usage;
  /** Offset (ms from the response start) of the first output token of a stream. */
  firstTokenOffsetMs?: number;
}

/** model.called without the timing and exchange fields the recorder fills in. */
export type DecodedModelCall = Omit<ModelCalledPayload, 'exchangeId' | 'latencyMs' | 'ttftMs'> & {
  firstTokenOffsetMs?: number;
};

/** The part of a recorded model call a provider reads turns and tools from. */
export type RecordedModelCall = Pick<ModelCalledPayload, 'provider' | 'api' | 'messages'> &
  Partial<Pick<ModelCalledPayload, 'system' | 'tools'>>;

/** One piece of a conversation turn. */
export type TurnPart =
  | { kind: 'text'; text: string }
  /** A tool call the model made; `arguments` is JSON text. */
  | { kind: 'tool-call'; id: string; name: string; arguments: string }
  /** A tool's result handed back to the model, with the id of the call it answers when the API says. */
  | { kind: 'tool-result'; callId?: string; name?: string; text: string }
  /** An image, audio or document input; `text` is its JSON, for size estimates. */
  | { kind: 'media'; text: string };

/** One turn of a model call's conversation, roles unified across APIs. */
export interface Turn {
  role: 'system' | 'user' | 'assistant' | 'tool' | 'other';
  parts: TurnPart[];
}

/** A tool offered to the model. */
export interface ToolSpec {
  name: string;
  description?: string;
  /** The JSON schema of its arguments, as the request gave it. */
  parameters?: unknown;
}

/**
 * One wire API. Adding a provider is one file implementing this, plus one line in registry.ts.
 * Detection is by path and body shape, never by host (a proxy or a local server speaking the API
 * is decoded the same way). Everything here is pure: no I/O, no state.
 */
export interface Provider {
  /** `<provider>.<api>`: the name matching, divergences and the registry use. */
  readonly id: string;
  /** model.called `provider` and `api`. */
  readonly provider: string;
  readonly api: string;
  /**
   * What a call answers: `chat`, a model's turn (text, tool calls: a decision), or `embeddings`,
   * vectors for its input (no system prompt, no conversation, no decision; the output's `embeddings`).
   */
  readonly kind: 'chat' | 'embeddings';
  /** Whether a request speaks this API. Cheap: it runs on every recorded request. */
  detect(request: ProviderRequest): boolean;
  /** The request side: model, system prompt, messages, tools. */
  readInput(body: Json, request: ProviderRequest): ModelInput;
  /** A non-streamed response body. */
  decodeBody(body: unknown, input: ModelInput): ModelOutput;
  /** How its streamed answers are framed (framing.ts decodes each): server-sent events unless it says. */
  readonly framing?: Framing;
  /** A streamed response, assembled from its events (decoded from the provider's framing). */
  assembleStream(events: StreamEvent[], input: ModelInput): ModelOutput;
  /** The turns of a recorded call, in order, its system prompt first. */
  turns(call: RecordedModelCall): Turn[];
  /** The tools a recorded call offered. */
  tools(call: RecordedModelCall): ToolSpec[];
  /** The system prompt of a request body (joined when there are several), if any. */
  systemPrompt(body: Json): string | undefined;
  /** A copy of a request body that has a system prompt with that prompt set to `prompt` (a body without one is never given one: model-call.ts). */
  withSystemPrompt(body: Json, prompt: string): Json;
  /** Top-level request fields that differ between otherwise identical calls: the normalised match drops them. */
  readonly volatile: readonly string[];
  /** The request body without sampling and transport knobs: what the structural match compares. */
  structural(body: Json): Json;
}

/** One message of a WebSocket conversation, JSON, as a conversation decoder reads it. */
export interface ConversationMessage {
  from: 'agent' | 'server';
  json: Json;
  /** ms since the epoch: when it was sent or came. */
  atMs: number;
}

/** A model call decoded from a conversation: model.called without its exchange id. */
export type ConversationModelCall = Omit<ModelCalledPayload, 'exchangeId'>;

/** The state of one conversation: fed its messages in order, it says which model calls each one ends. */
export interface ConversationDecoder {
  message(message: ConversationMessage): ConversationModelCall[];
}

/**
 * A model API spoken over a WebSocket (OpenAI Realtime, Gemini Live): its model calls are decoded
 * from a whole conversation, one message at a time, rather than from one request and its answer.
 * Detection is by path and message shape, never by host. A conversation's recorded calls are read
 * (turns, tools, system prompt) by the HTTP provider whose shapes its items share, `reads`.
 */
export interface ConversationProvider {
  /** `<provider>.<api>`, as a Provider's. */
  readonly id: string;
  readonly provider: string;
  readonly api: string;
  /** Whether a conversation at `url` whose message is `json` speaks this API. */
  detect(url: URL, json: Json): boolean;
  /** A decoder for one conversation at `url`. */
  decoder(url: URL): ConversationDecoder;
  readonly reads: Provider;
}
