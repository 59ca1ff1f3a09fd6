// Gemini Live (a WebSocket at …BidiGenerateContent…): one model call per model turn. The agent's
// `setup` gives the model, the system instruction and the tools; its `clientContent` turns and
// `toolResponse`s are the conversation (read as a generateContent call's contents: gemini.ts), and
// the first of them (or of its `realtimeInput`) after the last model turn starts the next call. The
// server's `serverContent` (its model turn's text parts, else the transcript of its audio) and
// `toolCall` (function calls: the model waits for their answers) are the output; the call ends at
// `turnComplete` or at the `toolCall`, with the `usageMetadata` seen until then (audio tokens
// counted in prompt and response, as the seed's buckets have no audio one). Keys are read in
// camelCase and snake_case alike.
import type { ToolCall } from '../recording/types.js';
import { geminiUsage, gemini as reads, systemText } from './gemini.js';
import { asArray, isRecord, str } from './read.js';
import type {
  ConversationDecoder,
  ConversationMessage,
  ConversationModelCall,
  ConversationProvider,
  Json,
} from './types.js';

/** A field by its camelCase name, or its snake_case one. */
function field(json: Json, name: string): unknown {
  return json[name] ?? json[name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
}

const record = (value: unknown): Json => (isRecord(value) ? value : {});

interface Call {
  startMs: number;
  firstMs?: number;
  text: string;
  transcript: string;
  toolCalls: ToolCall[];
  parts: unknown[];
  usage?: Json;
  interrupted?: boolean;
}

class LiveDecoder implements ConversationDecoder {
  private model = '';
  private system: string | undefined;
  private tools: unknown[] | undefined;
  private readonly contents: Json[] = [];
  private call: Call | undefined;

  message({ from, json, atMs }: ConversationMessage): ConversationModelCall[] {
    if (from === 'agent') {
      const setup = field(json, 'setup');
      if (isRecord(setup)) {
        this.model = (str(setup.model) ?? '').replace(/^models\//, '');
        this.system = systemText(field(setup, 'systemInstruction'));
        const tools = setup.tools;
        this.tools = Array.isArray(tools) ? tools : undefined;
      }
      const content = record(field(json, 'clientContent'));
      for (const turn of asArray(content.turns)) if (isRecord(turn)) this.contents.push(turn);
      const answers = asArray(field(record(field(json, 'toolResponse')), 'functionResponses'));
      if (answers.length > 0)
        this.contents.push({
          role: 'user',
          parts: answers.filter(isRecord).map((functionResponse) => ({ functionResponse })),
        });
      if (field(content, 'turnComplete') === true || answers.length > 0 || field(json, 'realtimeInput') !== undefined)
        this.call ??= { startMs: atMs, text: '', transcript: '', toolCalls: [], parts: [] };
      return [];
    }
    const server = record(field(json, 'serverContent'));
    const toolCall = record(field(json, 'toolCall'));
    const usage = field(json, 'usageMetadata');
    const parts = asArray(record(field(server, 'modelTurn')).parts);
    const calls = asArray(field(toolCall, 'functionCalls')).filter(isRecord);
    const transcript = str(record(field(server, 'outputTranscription')).text);
    if (parts.length === 0 && calls.length === 0 && transcript === undefined && !isRecord(usage)) {
      if (field(server, 'turnComplete') !== true) return [];
    }
    // The server may speak first (a greeting): its turn starts at its first message.
    this.call ??= { startMs: atMs, text: '', transcript: '', toolCalls: [], parts: [] };
    const call = this.call;
    for (const part of parts) {
      if (!isRecord(part) || part.thought === true) continue;
      call.parts.push(part);
      if (typeof part.text === 'string') call.text += part.text;
      call.firstMs ??= atMs;
    }
    if (transcript !== undefined) {
      call.transcript += transcript;
      call.firstMs ??= atMs;
    }
    for (const fn of calls) {
      call.toolCalls.push({
        id: str(fn.id) ?? str(fn.name) ?? '',
        name: str(fn.name) ?? '',
        arguments: JSON.stringify(fn.args ?? {}),
      });
      call.parts.push({ functionCall: fn });
      call.firstMs ??= atMs;
    }
    if (isRecord(usage)) call.usage = usage;
    if (field(server, 'interrupted') === true) call.interrupted = true;
    return field(server, 'turnComplete') === true || calls.length > 0 ? [this.end(call, atMs)] : [];
  }

  private end(call: Call, atMs: number): ConversationModelCall {
    this.call = undefined;
    const messages = [...this.contents];
    const said = call.parts.length > 0 ? call.parts : call.transcript !== '' ? [{ text: call.transcript }] : [];
    if (said.length > 0) this.contents.push({ role: 'model', parts: said });
    const text = call.text !== '' ? call.text : call.transcript !== '' ? call.transcript : undefined;
    const usage =
      call.usage === undefined
        ? undefined
        : geminiUsage({
            ...call.usage,
            candidatesTokenCount: field(call.usage, 'candidatesTokenCount') ?? field(call.usage, 'responseTokenCount'),
            promptTokenCount: field(call.usage, 'promptTokenCount'),
            cachedContentTokenCount: field(call.usage, 'cachedContentTokenCount'),
            thoughtsTokenCount: field(call.usage, 'thoughtsTokenCount'),
            toolUsePromptTokenCount: field(call.usage, 'toolUsePromptTokenCount'),
          });
    const stopReason = call.interrupted ? 'interrupted' : call.toolCalls.length > 0 ? 'tool_calls' : 'turn_complete';
    return {
      provider: 'google',
      api: 'live',
      model: this.model,
      streamed: true,
      ...(this.system === undefined || this.system === '' ? {} : { system: this.system }),
      messages,
      ...(this.tools === undefined ? {} : { tools: this.tools }),
      output: { ...(text === undefined ? {} : { text }), toolCalls: call.toolCalls },
      stopReason,
      ...(usage === undefined ? {} : { usage }),
      latencyMs: Math.max(0, atMs - call.startMs),
      ...(call.firstMs === undefined ? {} : { ttftMs: Math.max(0, call.firstMs - call.startMs) }),
    };
  }
}

export const geminiLive: ConversationProvider = {
  id: 'google.live',
  provider: 'google',
  api: 'live',
  detect: (url, json) => {
    const setup = field(json, 'setup');
    return /BidiGenerateContent/.test(url.pathname) || (isRecord(setup) && typeof setup.model === 'string');
  },
  decoder: () => new LiveDecoder(),
  reads,
};
