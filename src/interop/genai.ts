// The OpenTelemetry GenAI message shape (gen_ai.input.messages, gen_ai.output.messages,
// gen_ai.system_instructions, gen_ai.tool.definitions) from a model call's turns and tools as the
// providers read them (src/providers), and back to a request and response body for the two wire
// APIs spans most often describe (OpenAI Chat Completions, Anthropic Messages).
import { toolsOf, turnsOf } from '../providers/index.js';
import type { RecordedModelCall } from '../providers/types.js';
import { jsonOrText } from '../recording/json.js';
import type { ToolCall, Usage } from '../recording/types.js';

type Json = Record<string, unknown>;

/** One part of a message: text, reasoning, tool_call (id, name, arguments), tool_call_response (id, response), or another kind. */
export interface GenAiPart {
  type: string;
  content?: string;
  id?: string;
  name?: string;
  arguments?: unknown;
  response?: unknown;
  [key: string]: unknown;
}

export interface GenAiMessage {
  role: string;
  parts: GenAiPart[];
  finish_reason?: string;
}

export interface GenAiConversation {
  /** System or developer instructions (gen_ai.system_instructions). */
  system: GenAiPart[];
  /** The chat history without them (gen_ai.input.messages). */
  messages: GenAiMessage[];
}

export interface GenAiToolDefinition {
  type: string;
  name: string;
  description?: string;
  parameters?: unknown;
}

/** A recorded model call's conversation in the GenAI shape. */
/**
 * gen_ai.provider.name as the GenAI semantic conventions name it (`aws.bedrock`, `gcp.gemini`,
 * `gcp.vertex_ai`, `azure.ai.openai`, …), from a model call's provider and the URL it was sent to:
 * Gemini's API and Vertex AI share one wire API, as OpenAI's and Azure OpenAI's do. A provider the
 * conventions do not list (Ollama) keeps its own name, as they allow.
 */
export function genAiProviderName(provider: string, url?: URL): string {
  const host = url?.hostname ?? '';
  const path = url?.pathname ?? '';
  switch (provider) {
    case 'bedrock':
      return 'aws.bedrock';
    case 'vertex':
      return 'gcp.vertex_ai';
    case 'google':
      return host.endsWith('aiplatform.googleapis.com') || /\/projects\/[^/]+\/locations\//.test(path)
        ? 'gcp.vertex_ai'
        : 'gcp.gemini';
    case 'openai':
      return host.endsWith('.openai.azure.com') || path.includes('/openai/deployments/') ? 'azure.ai.openai' : 'openai';
    default:
      return provider;
  }
}

/** gen_ai.operation.name of a model call: `embeddings`, `generate_content` (Gemini), `text_completion` (a prompt, not a chat), else `chat`. */
export function genAiOperation(call: { provider: string; api: string; output: { embeddings?: unknown } }): string {
  if (call.output.embeddings !== undefined) return 'embeddings';
  if (call.provider === 'google') return 'generate_content';
  if (call.api === 'generate' || call.api === 'completions') return 'text_completion';
  return 'chat';
}

export function genAiConversation(call: RecordedModelCall): GenAiConversation {
  const out: GenAiConversation = { system: [], messages: [] };
  for (const turn of turnsOf(call)) {
    const parts: GenAiPart[] = turn.parts.map((p) => {
      switch (p.kind) {
        case 'text':
          return { type: 'text', content: p.text };
        case 'tool-call':
          return { type: 'tool_call', id: p.id, name: p.name, arguments: jsonOrText(p.arguments) };
        case 'tool-result':
          return { type: 'tool_call_response', ...(p.callId !== undefined ? { id: p.callId } : {}), response: p.text };
        default:
          return { type: 'blob', content: p.text };
      }
    });
    if (turn.role === 'system') out.system.push(...parts);
    else out.messages.push({ role: turn.role === 'other' ? 'user' : turn.role, parts });
  }
  return out;
}

/** The model's answer in the GenAI shape (gen_ai.output.messages). */
export function genAiOutput(output: { text?: string; toolCalls: ToolCall[] }, stopReason?: string): GenAiMessage[] {
  const parts: GenAiPart[] = [];
  if (output.text !== undefined && output.text !== '') parts.push({ type: 'text', content: output.text });
  for (const c of output.toolCalls)
    parts.push({ type: 'tool_call', id: c.id, name: c.name, arguments: jsonOrText(c.arguments) });
  return [{ role: 'assistant', parts, ...(stopReason !== undefined ? { finish_reason: stopReason } : {}) }];
}

/** The tools a call offered, in the GenAI shape (gen_ai.tool.definitions). */
export function genAiTools(call: RecordedModelCall): GenAiToolDefinition[] {
  return toolsOf(call).map((t) => ({
    type: 'function',
    name: t.name,
    ...(t.description !== undefined ? { description: t.description } : {}),
    ...(t.parameters !== undefined ? { parameters: t.parameters } : {}),
  }));
}

const argsText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value ?? {}));
const responseText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * A request body of `api` ('messages': Anthropic, else OpenAI Chat Completions) saying what a GenAI
 * conversation says: the messages, tools and the sampling fields in `extra`.
 */
export function providerRequest(
  api: string,
  model: string,
  conversation: GenAiConversation,
  tools: readonly GenAiToolDefinition[],
  extra: Json = {},
): Json {
  const systemText = conversation.system
    .map((p) => (p.type === 'text' ? String(p.content) : ''))
    .filter(Boolean)
    .join('\n');
  if (api === 'messages') {
    const messages = conversation.messages.map((m) => ({
      role: m.role === 'tool' ? 'user' : m.role,
      content: m.parts.flatMap((p): Json[] => {
        if (p.type === 'text') return [{ type: 'text', text: String(p.content) }];
        if (p.type === 'tool_call')
          return [{ type: 'tool_use', id: p.id ?? '', name: p.name, input: p.arguments ?? {} }];
        if (p.type === 'tool_call_response')
          return [{ type: 'tool_result', tool_use_id: p.id ?? '', content: responseText(p.response) }];
        return [];
      }),
    }));
    return {
      model,
      ...(systemText ? { system: systemText } : {}),
      messages,
      ...(tools.length > 0
        ? {
            tools: tools.map((t) => ({
              name: t.name,
              ...(t.description ? { description: t.description } : {}),
              input_schema: t.parameters ?? { type: 'object' },
            })),
          }
        : {}),
      ...extra,
    };
  }
  const messages: Json[] = systemText ? [{ role: 'system', content: systemText }] : [];
  for (const m of conversation.messages) {
    if (m.role === 'tool') {
      for (const p of m.parts)
        if (p.type === 'tool_call_response')
          messages.push({ role: 'tool', tool_call_id: p.id ?? '', content: responseText(p.response) });
      continue;
    }
    const calls = m.parts.filter((p) => p.type === 'tool_call');
    const text = m.parts
      .filter((p) => p.type === 'text')
      .map((p) => String(p.content))
      .join('');
    messages.push({
      role: m.role,
      content: calls.length > 0 && text === '' ? null : text,
      ...(calls.length > 0
        ? {
            tool_calls: calls.map((c) => ({
              id: c.id ?? '',
              type: 'function',
              function: { name: c.name, arguments: argsText(c.arguments) },
            })),
          }
        : {}),
    });
  }
  return {
    model,
    messages,
    ...(tools.length > 0
      ? {
          tools: tools.map((t) => ({
            type: 'function',
            function: {
              name: t.name,
              ...(t.description ? { description: t.description } : {}),
              parameters: t.parameters ?? { type: 'object' },
            },
          })),
        }
      : {}),
    ...extra,
  };
}

/** What a response body carries besides the output: ids, model, time. */
export interface ResponseMeta {
  /** The response's id, if known; else one is made from `idSuffix`. */
  id?: string;
  model: string;
  idSuffix: string;
  createdMs: number;
}

/**
 * A response body for one of the two wire APIs (`messages`, else Chat Completions) from an output
 * message, its usage and the ids of its tool calls: what the agent's SDK parses in replay.
 */
export function providerResponse(
  api: string,
  output: GenAiMessage,
  usage: Usage,
  ids: string[],
  meta: ResponseMeta,
): Json {
  const text = output.parts
    .filter((p) => p.type === 'text')
    .map((p) => String(p.content))
    .join('');
  const calls = output.parts.filter((p) => p.type === 'tool_call');
  const finish = output.finish_reason;
  const u = usage;
  if (api === 'messages') {
    return {
      id: meta.id ?? `msg_${meta.idSuffix}`,
      type: 'message',
      role: 'assistant',
      model: meta.model,
      content: [
        ...(text !== '' ? [{ type: 'text', text }] : []),
        ...calls.map((c, i) => ({ type: 'tool_use', id: ids[i], name: c.name, input: c.arguments ?? {} })),
      ],
      stop_reason: finish ?? (calls.length > 0 ? 'tool_use' : 'end_turn'),
      stop_sequence: null,
      usage: {
        input_tokens: u.inputUncached,
        output_tokens: u.output + u.reasoning,
        cache_read_input_tokens: u.cacheRead,
        cache_creation_input_tokens: u.cacheWrite,
      },
    };
  }
  return {
    id: meta.id ?? `chatcmpl-${meta.idSuffix}`,
    object: 'chat.completion',
    created: Math.floor(meta.createdMs / 1000),
    model: meta.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text === '' && calls.length > 0 ? null : text,
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((c, i) => ({
                  id: ids[i],
                  type: 'function',
                  function: {
                    name: c.name,
                    arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
                  },
                })),
              }
            : {}),
          refusal: null,
        },
        finish_reason: finish ?? (calls.length > 0 ? 'tool_calls' : 'stop'),
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: u.inputUncached + u.cacheRead + u.cacheWrite,
      completion_tokens: u.output + u.reasoning,
      total_tokens: u.inputUncached + u.cacheRead + u.cacheWrite + u.output + u.reasoning,
      prompt_tokens_details: { cached_tokens: u.cacheRead },
      completion_tokens_details: { reasoning_tokens: u.reasoning },
    },
  };
}
