// GenAI spans read into model calls and tool spans, in the three dialects they come in: the
// semantic conventions' attributes (gen_ai.input.messages, …), their older one event per message,
// and OpenLLMetry's indexed attributes (gen_ai.prompt.N.*, llm.request.functions.N.*).
import { bucketsFromOtel } from '../ledger/tokens.js';
import { tokenCount } from '../providers/index.js';
import { TapedeckError } from '../recording/errors.js';
import { jsonOrText } from '../recording/json.js';
import type { Usage } from '../recording/types.js';
import type { GenAiConversation, GenAiMessage, GenAiPart, GenAiToolDefinition } from './genai.js';
import { attributesOf, hexId, type OtlpSpan, type OtlpTraces } from './otlp-schema.js';

type Json = Record<string, unknown>;

export interface FlatSpan {
  span: OtlpSpan;
  traceId: string;
  attrs: Record<string, unknown>;
  resource: Record<string, unknown>;
  start: number;
  end: number;
}

export function flatten(traces: OtlpTraces): FlatSpan[] {
  const out: FlatSpan[] = [];
  for (const rs of traces.resourceSpans) {
    const resource = attributesOf(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        out.push({
          span,
          traceId: hexId(span.traceId),
          attrs: attributesOf(span.attributes),
          resource,
          start: Number(BigInt(span.startTimeUnixNano) / 1_000_000n),
          end: Number(BigInt(span.endTimeUnixNano) / 1_000_000n),
        });
      }
    }
  }
  return out;
}

const MODEL_OPERATIONS = new Set(['chat', 'text_completion', 'generate_content', 'completion']);
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
export const num = (v: unknown): number =>
  typeof v === 'number' && Number.isFinite(v)
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : 0;

export function isModelSpan(s: FlatSpan): boolean {
  const op = str(s.attrs['gen_ai.operation.name']) ?? str(s.attrs['llm.request.type']);
  if (op !== undefined) return MODEL_OPERATIONS.has(op);
  return str(s.attrs['gen_ai.request.model']) !== undefined && s.attrs['gen_ai.tool.name'] === undefined;
}
export const isToolSpan = (s: FlatSpan): boolean =>
  s.attrs['gen_ai.operation.name'] === 'execute_tool' || str(s.attrs['gen_ai.tool.name']) !== undefined;

export function parseJsonAttr(value: unknown): unknown {
  return typeof value === 'string' ? jsonOrText(value) : value;
}

/** Messages of the semconv JSON attribute (a string of JSON, or already an array). */
function messagesAttr(value: unknown): GenAiMessage[] | undefined {
  const v = parseJsonAttr(value);
  if (!Array.isArray(v)) return undefined;
  return v.flatMap((m) => {
    if (m === null || typeof m !== 'object') return [];
    const o = m as Json;
    const parts = Array.isArray(o.parts)
      ? (o.parts as GenAiPart[])
      : typeof o.content === 'string'
        ? [{ type: 'text', content: o.content }]
        : [];
    return [
      {
        role: String(o.role ?? 'user'),
        parts,
        ...(typeof o.finish_reason === 'string' ? { finish_reason: o.finish_reason } : {}),
      },
    ];
  });
}

/**
 * Rows of flattened attributes (`<prefix>.N.<field>` matched by `re` as N and field), in N order:
 * OpenLLMetry's messages, their tool calls and its functions.
 */
function indexedRows(attrs: Record<string, unknown>, re: RegExp): Json[] {
  const rows = new Map<number, Json>();
  for (const [k, v] of Object.entries(attrs)) {
    const m = re.exec(k);
    if (!m) continue;
    const row = rows.get(Number(m[1])) ?? {};
    row[m[2] as string] = v;
    rows.set(Number(m[1]), row);
  }
  return [...rows.entries()].sort((a, b) => a[0] - b[0]).map(([, row]) => row);
}

/** Chat Completions-style tool calls ({id, function: {name, arguments}}) of a message event as parts. */
function toolCallParts(list: unknown): GenAiPart[] {
  return (Array.isArray(list) ? (list as Json[]) : []).map((c) => {
    const fn = (c.function ?? {}) as Json;
    return {
      type: 'tool_call',
      ...(str(c.id) ? { id: String(c.id) } : {}),
      name: String(fn.name ?? ''),
      arguments: jsonOrText(fn.arguments ?? '{}'),
    };
  });
}

/** OpenLLMetry's flattened attributes: gen_ai.prompt.N.role / .content / .tool_calls.M.* / .tool_call_id. */
function indexedMessages(attrs: Record<string, unknown>, prefix: string): GenAiMessage[] {
  const re = new RegExp(`^${prefix.replace(/\./g, '\\.')}\\.(\\d+)\\.(.+)$`);
  return indexedRows(attrs, re).map((row) => {
    const parts: GenAiPart[] = [];
    const role = String(row.role ?? 'user');
    if (role === 'tool')
      parts.push({
        type: 'tool_call_response',
        ...(str(row.tool_call_id) ? { id: String(row.tool_call_id) } : {}),
        response: row.content ?? '',
      });
    else if (str(row.content)) parts.push({ type: 'text', content: String(row.content) });
    for (const c of indexedRows(row, /^tool_calls\.(\d+)\.(.+)$/))
      parts.push({
        type: 'tool_call',
        ...(str(c.id) ? { id: String(c.id) } : {}),
        name: String(c.name ?? ''),
        arguments: jsonOrText(c.arguments ?? '{}'),
      });
    return { role, parts, ...(str(row.finish_reason) ? { finish_reason: String(row.finish_reason) } : {}) };
  });
}

/** Older semconv: one span event per message (gen_ai.system.message, gen_ai.user.message, …, gen_ai.choice). */
function eventMessages(s: FlatSpan): { input: GenAiMessage[]; output: GenAiMessage[] } {
  const input: GenAiMessage[] = [];
  const output: GenAiMessage[] = [];
  for (const e of s.span.events ?? []) {
    const m = /^gen_ai\.(system|user|assistant|tool)\.message$/.exec(e.name);
    const a = attributesOf(e.attributes);
    const body = (parseJsonAttr(a['event.body'] ?? a.body) ?? {}) as Json;
    const content = body.content ?? a.content;
    if (m) {
      const role = m[1] as string;
      const parts: GenAiPart[] =
        role === 'tool'
          ? [
              {
                type: 'tool_call_response',
                ...(str(body.id ?? a.id) ? { id: String(body.id ?? a.id) } : {}),
                response: content ?? '',
              },
            ]
          : typeof content === 'string'
            ? [{ type: 'text', content }]
            : [];
      parts.push(...toolCallParts(body.tool_calls));
      input.push({ role, parts });
    } else if (e.name === 'gen_ai.choice') {
      const message = (body.message ?? {}) as Json;
      const parts: GenAiPart[] =
        typeof message.content === 'string' ? [{ type: 'text', content: message.content }] : [];
      parts.push(...toolCallParts(message.tool_calls));
      output.push({
        role: 'assistant',
        parts,
        ...(str(body.finish_reason) ? { finish_reason: String(body.finish_reason) } : {}),
      });
    }
  }
  return { input, output };
}

/** OpenLLMetry's llm.request.functions.N.{name,description,parameters}. */
function indexedTools(attrs: Record<string, unknown>): GenAiToolDefinition[] {
  return indexedRows(attrs, /^llm\.request\.functions\.(\d+)\.(name|description|parameters|arguments)$/).map((r) => ({
    type: 'function',
    name: String(r.name ?? ''),
    ...(str(r.description) ? { description: String(r.description) } : {}),
    ...(r.parameters !== undefined || r.arguments !== undefined
      ? { parameters: jsonOrText(r.parameters ?? r.arguments) }
      : {}),
  }));
}

export interface ImportedCall {
  s: FlatSpan;
  provider: string;
  api: string;
  model: string;
  conversation: GenAiConversation;
  output: GenAiMessage;
  tools: GenAiToolDefinition[];
  usage: Usage;
}

export function modelCallOf(s: FlatSpan): ImportedCall {
  const a = s.attrs;
  const provider = (str(a['gen_ai.provider.name']) ?? str(a['gen_ai.system']) ?? 'openai').toLowerCase();
  const api = provider.includes('anthropic') ? 'messages' : 'chat.completions';
  const model = str(a['gen_ai.request.model']) ?? str(a['gen_ai.response.model']) ?? 'unknown';
  const events = eventMessages(s);
  let input = messagesAttr(a['gen_ai.input.messages']);
  if (!input) input = indexedMessages(a, 'gen_ai.prompt');
  if (input.length === 0) input = events.input;
  const system: GenAiPart[] = [];
  const sys = parseJsonAttr(a['gen_ai.system_instructions']);
  if (Array.isArray(sys)) system.push(...(sys as GenAiPart[]));
  else if (typeof sys === 'string' && sys !== '') system.push({ type: 'text', content: sys });
  const messages = input.filter((m) => {
    if (m.role !== 'system' && m.role !== 'developer') return true;
    system.push(...m.parts);
    return false;
  });
  let output = messagesAttr(a['gen_ai.output.messages']);
  if (!output || output.length === 0) output = indexedMessages(a, 'gen_ai.completion');
  if (output.length === 0) output = events.output;
  const finish = Array.isArray(a['gen_ai.response.finish_reasons'])
    ? String((a['gen_ai.response.finish_reasons'] as unknown[])[0])
    : undefined;
  const out: GenAiMessage = {
    role: 'assistant',
    parts: output.flatMap((m) => m.parts),
    ...((output[0]?.finish_reason ?? finish) ? { finish_reason: output[0]?.finish_reason ?? finish } : {}),
  };
  if (input.length === 0 && output.length === 0) {
    throw new TapedeckError(
      'OTLP_NO_CONTENT',
      `span ${s.span.name} (${s.span.spanId}) carries no message content: turn content capture on in the instrumentation (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, or traceloop's traceContent) and trace again`,
    );
  }
  const toolDefs = parseJsonAttr(a['gen_ai.tool.definitions']);
  const tools = Array.isArray(toolDefs) ? (toolDefs as GenAiToolDefinition[]) : indexedTools(a);
  // A count as a provider's body gives it: what is not a non-negative integer the format can hold is 0.
  const count = (v: unknown) => tokenCount(num(v));
  const otel = {
    'gen_ai.usage.input_tokens': count(a['gen_ai.usage.input_tokens'] ?? a['gen_ai.usage.prompt_tokens']),
    'gen_ai.usage.cache_read.input_tokens': count(
      a['gen_ai.usage.cache_read.input_tokens'] ?? a['gen_ai.usage.cache_read_input_tokens'],
    ),
    'gen_ai.usage.cache_creation.input_tokens': count(
      a['gen_ai.usage.cache_creation.input_tokens'] ?? a['gen_ai.usage.cache_creation_input_tokens'],
    ),
    'gen_ai.usage.output_tokens': count(a['gen_ai.usage.output_tokens'] ?? a['gen_ai.usage.completion_tokens']),
    'gen_ai.usage.reasoning.output_tokens': count(
      a['gen_ai.usage.reasoning.output_tokens'] ?? a['gen_ai.usage.reasoning_tokens'],
    ),
  };
  const buckets = bucketsFromOtel(otel);
  const usage: Usage = {
    inputUncached: Math.max(0, buckets.uncachedInput),
    cacheRead: buckets.cacheRead,
    cacheWrite: buckets.cacheWrite,
    output: Math.max(0, buckets.output),
    reasoning: buckets.reasoning,
  };
  return { s, provider, api, model, conversation: { system, messages }, output: out, tools, usage };
}
