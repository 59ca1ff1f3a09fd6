// OpenAI Realtime (a WebSocket at …/realtime, GA and beta events alike; Azure's too): one model call
// per `response.done`. The session (`session.update` the agent sends, `session.created` /
// `session.updated` the server answers) gives the model (else the URL's `model` or `deployment`),
// the instructions (the system prompt) and the tools; the conversation's items (`conversation.item.create`
// the agent sends, the server's `conversation.item.created` / `.added` / `.done`, which replace the
// agent's item they confirm) are the call's messages, as a Responses call's input items are read
// (openai-responses.ts). A `response.create` may set its own instructions, tools and input
// (`conversation: "none"`). The output is the response's items (text, an audio part's transcript,
// function calls), else its deltas; the usage is `response.usage`, audio tokens counted in input
// and output (the seed's buckets have no audio one). Latency runs from the agent's
// `response.create` (or, for a response the server began itself, the server's `response.created`)
// to `response.done`; time to first token to the first output delta.
import type { ToolCall } from '../recording/types.js';
import { openaiUsage } from './openai-chat.js';
import { openaiResponses } from './openai-responses.js';
import { asArray, isRecord, str } from './read.js';
import type {
  ConversationDecoder,
  ConversationMessage,
  ConversationModelCall,
  ConversationProvider,
  Json,
} from './types.js';

/** The server events that carry an output token (text, audio, its transcript, a function's arguments). */
const OUTPUT_DELTAS = new Set([
  'response.output_text.delta',
  'response.text.delta',
  'response.output_audio.delta',
  'response.audio.delta',
  'response.output_audio_transcript.delta',
  'response.audio_transcript.delta',
  'response.function_call_arguments.delta',
]);
const TEXT_DELTAS = new Set(['response.output_text.delta', 'response.text.delta']);
const TRANSCRIPT_DELTAS = new Set(['response.output_audio_transcript.delta', 'response.audio_transcript.delta']);
const ITEM_ECHOES = new Set([
  'conversation.item.created',
  'conversation.item.added',
  'conversation.item.done',
  'conversation.item.retrieved',
]);

/** Realtime usage: Responses-shaped, its details named `input_token_details` / `output_token_details`. */
export function realtimeUsage(usage: unknown): ConversationModelCall['usage'] {
  if (!isRecord(usage)) return undefined;
  return openaiUsage({
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    input_tokens_details: usage.input_token_details,
    output_tokens_details: usage.output_token_details,
  });
}

interface Response {
  startMs: number;
  firstMs?: number;
  text: string;
  transcript: string;
  toolCalls: ToolCall[];
  overrides: Json;
}

/** The conversation's items in order; an item the agent sent without an id waits for the server's copy. */
class Items {
  readonly list: Json[] = [];

  add(item: Json): void {
    const id = str(item.id);
    const at = id === undefined ? -1 : this.list.findIndex((i) => i.id === id);
    if (at >= 0) this.list[at] = { ...this.list[at], ...item };
    else this.list.push(item);
  }

  /** The server's copy of an item: it replaces the agent's unconfirmed one of its kind, or is added. */
  confirm(item: Json): void {
    const id = str(item.id);
    if (id !== undefined && this.list.some((i) => i.id === id)) {
      this.add(item);
      return;
    }
    const sent = this.list.findIndex(
      (i) =>
        i.id === undefined &&
        i.type === item.type &&
        (item.type === 'message' ? i.role === item.role : i.call_id === item.call_id),
    );
    if (sent >= 0) this.list[sent] = item;
    else this.list.push(item);
  }

  remove(id: string | undefined): void {
    const at = this.list.findIndex((i) => i.id === id);
    if (at >= 0) this.list.splice(at, 1);
  }

  /** A user audio item's transcript, once the server has it: set on the content part it transcribes. */
  transcribe(id: string | undefined, index: unknown, transcript: string): void {
    const item = this.list.find((i) => i.id === id);
    if (item === undefined) return;
    const content = asArray(item.content).slice();
    const at = typeof index === 'number' && index >= 0 && index < content.length ? index : 0;
    const part = content[at];
    content[at] = isRecord(part) ? { ...part, transcript } : { type: 'input_audio', transcript };
    item.content = content;
  }
}

/** A content part as text a reader keeps: an audio part's transcript as its text. */
function readablePart(part: unknown): unknown {
  if (!isRecord(part) || typeof part.text === 'string' || typeof part.transcript !== 'string') return part;
  const { audio: _audio, ...rest } = part;
  return { ...rest, text: part.transcript };
}

/** An item as a Responses reader reads it: audio bytes left out, transcripts as text. */
function readableItem(item: Json): Json {
  if (!Array.isArray(item.content)) return item;
  return { ...item, content: item.content.map(readablePart) };
}

class RealtimeDecoder implements ConversationDecoder {
  private model: string;
  private instructions: string | undefined;
  private tools: unknown[] | undefined;
  private readonly items = new Items();
  /** The agent's `response.create`s the server has not begun yet. */
  private readonly asked: Array<{ atMs: number; overrides: Json }> = [];
  private readonly responses = new Map<string, Response>();
  private last: Response | undefined;

  constructor(url: URL) {
    this.model = url.searchParams.get('model') ?? url.searchParams.get('deployment') ?? '';
  }

  message({ from, json, atMs }: ConversationMessage): ConversationModelCall[] {
    const type = str(json.type) ?? '';
    if (type === 'session.update' || type === 'session.created' || type === 'session.updated') {
      this.session(json.session);
      return [];
    }
    if (from === 'agent') {
      if (type === 'conversation.item.create' && isRecord(json.item)) this.items.add({ ...json.item });
      else if (type === 'conversation.item.delete') this.items.remove(str(json.item_id));
      else if (type === 'response.create')
        this.asked.push({ atMs, overrides: isRecord(json.response) ? json.response : {} });
      return [];
    }
    if (ITEM_ECHOES.has(type) && isRecord(json.item)) this.items.confirm({ ...json.item });
    else if (type === 'conversation.item.deleted') this.items.remove(str(json.item_id));
    else if (type === 'conversation.item.input_audio_transcription.completed' && typeof json.transcript === 'string')
      this.items.transcribe(str(json.item_id), json.content_index, json.transcript);
    else if (type === 'response.created') this.begin(json.response, atMs);
    else if (OUTPUT_DELTAS.has(type)) {
      const response = this.responseOf(json.response_id, atMs);
      response.firstMs ??= atMs;
      if (typeof json.delta === 'string') {
        if (TEXT_DELTAS.has(type)) response.text += json.delta;
        else if (TRANSCRIPT_DELTAS.has(type)) response.transcript += json.delta;
      }
    } else if (type === 'response.function_call_arguments.done') {
      const response = this.responseOf(json.response_id, atMs);
      response.toolCalls.push({
        id: str(json.call_id) ?? str(json.item_id) ?? '',
        name: str(json.name) ?? '',
        arguments: str(json.arguments) ?? '',
      });
    } else if (type === 'response.done' && isRecord(json.response)) return [this.done(json.response, atMs)];
    return [];
  }

  private session(session: unknown): void {
    if (!isRecord(session)) return;
    if (typeof session.model === 'string' && session.model !== '') this.model = session.model;
    if (typeof session.instructions === 'string') this.instructions = session.instructions;
    if (Array.isArray(session.tools)) this.tools = session.tools;
  }

  /** The server began a response: at the agent's oldest `response.create`, else now (its own VAD's). */
  private begin(response: unknown, atMs: number): Response {
    const asked = this.asked.shift();
    const started: Response = {
      startMs: asked?.atMs ?? atMs,
      text: '',
      transcript: '',
      toolCalls: [],
      overrides: asked?.overrides ?? {},
    };
    const id = isRecord(response) ? str(response.id) : undefined;
    if (id !== undefined) this.responses.set(id, started);
    this.last = started;
    return started;
  }

  private responseOf(id: unknown, atMs: number): Response {
    return (typeof id === 'string' ? this.responses.get(id) : undefined) ?? this.last ?? this.begin(undefined, atMs);
  }

  private done(response: Json, atMs: number): ConversationModelCall {
    const id = str(response.id);
    const state = (id === undefined ? undefined : this.responses.get(id)) ?? this.last ?? this.begin(response, atMs);
    if (id !== undefined) this.responses.delete(id);
    if (this.last === state) this.last = undefined;
    const output = asArray(response.output).filter(isRecord);
    const outputIds = new Set(output.map((item) => str(item.id)).filter((x) => x !== undefined));
    const { overrides } = state;
    const ownInput = overrides.conversation === 'none' || Array.isArray(overrides.input);
    const context = ownInput
      ? asArray(overrides.input).filter(isRecord)
      : this.items.list.filter((item) => !outputIds.has(str(item.id) ?? ''));
    const system = typeof overrides.instructions === 'string' ? overrides.instructions : this.instructions;
    const tools = Array.isArray(overrides.tools) ? overrides.tools : this.tools;

    const texts: string[] = [];
    const toolCalls: ToolCall[] = [];
    for (const item of output) {
      if (item.type === 'function_call')
        toolCalls.push({
          id: str(item.call_id) ?? str(item.id) ?? '',
          name: str(item.name) ?? '',
          arguments: str(item.arguments) ?? '',
        });
      else
        for (const part of asArray(item.content)) {
          if (!isRecord(part)) continue;
          const text = str(part.text) ?? str(part.transcript);
          if (text !== undefined && text !== '') texts.push(text);
        }
    }
    const text = texts.length > 0 ? texts.join('') : state.text !== '' ? state.text : state.transcript || undefined;
    if (toolCalls.length === 0) toolCalls.push(...state.toolCalls);
    // What the response said joins the conversation, unless it was out of band.
    if (overrides.conversation !== 'none') for (const item of output) this.items.confirm({ ...item });

    const usage = realtimeUsage(response.usage);
    const details = isRecord(response.status_details) ? str(response.status_details.reason) : undefined;
    const status = str(response.status);
    const stopReason = toolCalls.length > 0 && status === 'completed' ? 'tool_calls' : (details ?? status);
    return {
      provider: 'openai',
      api: 'realtime',
      model: this.model,
      streamed: true,
      ...(system === undefined || system === '' ? {} : { system }),
      messages: context.map(readableItem),
      ...(tools === undefined ? {} : { tools }),
      output: { ...(text === undefined ? {} : { text }), toolCalls },
      ...(stopReason === undefined ? {} : { stopReason }),
      ...(usage === undefined ? {} : { usage }),
      latencyMs: Math.max(0, atMs - state.startMs),
      ...(state.firstMs === undefined ? {} : { ttftMs: Math.max(0, state.firstMs - state.startMs) }),
    };
  }
}

export const openaiRealtime: ConversationProvider = {
  id: 'openai.realtime',
  provider: 'openai',
  api: 'realtime',
  detect: (url, json) =>
    /\/realtime\/?$/.test(url.pathname) ||
    ((json.type === 'session.created' || json.type === 'session.update') &&
      isRecord(json.session) &&
      (json.session.object === 'realtime.session' || json.session.type === 'realtime')),
  decoder: (url) => new RealtimeDecoder(url),
  reads: openaiResponses,
};
