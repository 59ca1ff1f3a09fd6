// OpenTelemetry GenAI import: GenAI spans — as the semantic conventions define them (attributes or
// one event per message), as OpenLLMetry writes them, as SDK processors emit them, with message
// content captured — into a recording of model calls and tool results that replay serves to the
// unchanged agent (matched by what the conversation says: see replay/match.ts, isImported). Over
// 500 lines because the three span dialects and the two providers' response shapes are one mapping.
import { readFileSync, statSync } from 'node:fs';
import { bucketsFromOtel } from '../ledger/tokens.js';
import { decodeModelCall, providerById } from '../providers/index.js';
import { classifyToolName } from '../record/classify.js';
import { TapedeckError } from '../recording/errors.js';
import { createRecordingWriter } from '../recording/index.js';
import { jsonOrText } from '../recording/json.js';
import type { Usage } from '../recording/types.js';
import {
  type GenAiConversation,
  type GenAiMessage,
  type GenAiPart,
  type GenAiToolDefinition,
  providerRequest,
} from './genai.js';
import { attributesOf, hexId, type OtlpSpan, type OtlpTraces, TracesSchema } from './otlp-schema.js';

/** The tag an imported recording carries: its calls are matched by what they say (see replay/match.ts). */
export const IMPORTED_TAG = 'imported:otlp';
/** OTLP files larger than this are refused. */
export const MAX_OTLP_BYTES = 512 * 1024 * 1024;

type Json = Record<string, unknown>;

/** Reads an OTLP/JSON traces file (or JSON lines of them, as the collector's file exporter writes). */
export function readOtlpFile(file: string): OtlpTraces {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new TapedeckError('NOT_FOUND', `${file}: no such file`);
  }
  if (size > MAX_OTLP_BYTES)
    throw new TapedeckError('OTLP_TOO_LARGE', `${file} is ${size} bytes, more than the ${MAX_OTLP_BYTES} allowed`);
  const text = readFileSync(file, 'utf8');
  const docs: unknown[] = [];
  try {
    docs.push(JSON.parse(text));
  } catch {
    for (const [i, line] of text.split('\n').entries()) {
      if (line.trim() === '') continue;
      try {
        docs.push(JSON.parse(line));
      } catch (error) {
        throw new TapedeckError('BAD_OTLP', `${file}:${i + 1}: not JSON: ${(error as Error).message}`);
      }
    }
  }
  const out: OtlpTraces = { resourceSpans: [] };
  for (const [i, doc] of docs.entries()) {
    const parsed = TracesSchema.safeParse(doc);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TapedeckError(
        'BAD_OTLP',
        `${file}${docs.length > 1 ? `:${i + 1}` : ''}: field ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'} (expected OTLP/JSON traces: {resourceSpans: [...]})`,
      );
    }
    out.resourceSpans.push(...parsed.data.resourceSpans);
  }
  return out;
}

interface FlatSpan {
  span: OtlpSpan;
  traceId: string;
  attrs: Record<string, unknown>;
  resource: Record<string, unknown>;
  start: number;
  end: number;
}

function flatten(traces: OtlpTraces): FlatSpan[] {
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
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number =>
  typeof v === 'number' && Number.isFinite(v)
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : 0;

function isModelSpan(s: FlatSpan): boolean {
  const op = str(s.attrs['gen_ai.operation.name']) ?? str(s.attrs['llm.request.type']);
  if (op !== undefined) return MODEL_OPERATIONS.has(op);
  return str(s.attrs['gen_ai.request.model']) !== undefined && s.attrs['gen_ai.tool.name'] === undefined;
}
const isToolSpan = (s: FlatSpan): boolean =>
  s.attrs['gen_ai.operation.name'] === 'execute_tool' || str(s.attrs['gen_ai.tool.name']) !== undefined;

function parseJsonAttr(value: unknown): unknown {
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

/** OpenLLMetry's flattened attributes: gen_ai.prompt.N.role / .content / .tool_calls.M.* / .tool_call_id. */
function indexedMessages(attrs: Record<string, unknown>, prefix: string): GenAiMessage[] {
  const rows = new Map<number, Json>();
  const re = new RegExp(`^${prefix.replace(/\./g, '\\.')}\\.(\\d+)\\.(.+)$`);
  for (const [k, v] of Object.entries(attrs)) {
    const m = re.exec(k);
    if (!m) continue;
    const row = rows.get(Number(m[1])) ?? {};
    row[m[2] as string] = v;
    rows.set(Number(m[1]), row);
  }
  return [...rows.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, row]) => {
      const parts: GenAiPart[] = [];
      const role = String(row.role ?? 'user');
      if (role === 'tool')
        parts.push({
          type: 'tool_call_response',
          ...(str(row.tool_call_id) ? { id: String(row.tool_call_id) } : {}),
          response: row.content ?? '',
        });
      else if (str(row.content)) parts.push({ type: 'text', content: String(row.content) });
      const calls = new Map<number, Json>();
      for (const [k, v] of Object.entries(row)) {
        const m = /^tool_calls\.(\d+)\.(.+)$/.exec(k);
        if (!m) continue;
        const c = calls.get(Number(m[1])) ?? {};
        c[m[2] as string] = v;
        calls.set(Number(m[1]), c);
      }
      for (const [, c] of [...calls.entries()].sort((a, b) => a[0] - b[0]))
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
      for (const c of Array.isArray(body.tool_calls) ? (body.tool_calls as Json[]) : []) {
        const fn = (c.function ?? {}) as Json;
        parts.push({
          type: 'tool_call',
          ...(str(c.id) ? { id: String(c.id) } : {}),
          name: String(fn.name ?? ''),
          arguments: jsonOrText(fn.arguments ?? '{}'),
        });
      }
      input.push({ role, parts });
    } else if (e.name === 'gen_ai.choice') {
      const message = (body.message ?? {}) as Json;
      const parts: GenAiPart[] =
        typeof message.content === 'string' ? [{ type: 'text', content: message.content }] : [];
      for (const c of Array.isArray(message.tool_calls) ? (message.tool_calls as Json[]) : []) {
        const fn = (c.function ?? {}) as Json;
        parts.push({
          type: 'tool_call',
          ...(str(c.id) ? { id: String(c.id) } : {}),
          name: String(fn.name ?? ''),
          arguments: jsonOrText(fn.arguments ?? '{}'),
        });
      }
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
  const rows = new Map<number, Json>();
  for (const [k, v] of Object.entries(attrs)) {
    const m = /^llm\.request\.functions\.(\d+)\.(name|description|parameters|arguments)$/.exec(k);
    if (!m) continue;
    const row = rows.get(Number(m[1])) ?? {};
    row[m[2] as string] = v;
    rows.set(Number(m[1]), row);
  }
  return [...rows.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, r]) => ({
      type: 'function',
      name: String(r.name ?? ''),
      ...(str(r.description) ? { description: String(r.description) } : {}),
      ...(r.parameters !== undefined || r.arguments !== undefined
        ? { parameters: jsonOrText(r.parameters ?? r.arguments) }
        : {}),
    }));
}

interface ImportedCall {
  s: FlatSpan;
  provider: string;
  api: string;
  model: string;
  conversation: GenAiConversation;
  output: GenAiMessage;
  tools: GenAiToolDefinition[];
  usage: Usage;
}

function modelCallOf(s: FlatSpan): ImportedCall {
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
  const otel = {
    'gen_ai.usage.input_tokens': num(a['gen_ai.usage.input_tokens'] ?? a['gen_ai.usage.prompt_tokens']),
    'gen_ai.usage.cache_read.input_tokens': num(
      a['gen_ai.usage.cache_read.input_tokens'] ?? a['gen_ai.usage.cache_read_input_tokens'],
    ),
    'gen_ai.usage.cache_creation.input_tokens': num(
      a['gen_ai.usage.cache_creation.input_tokens'] ?? a['gen_ai.usage.cache_creation_input_tokens'],
    ),
    'gen_ai.usage.output_tokens': num(a['gen_ai.usage.output_tokens'] ?? a['gen_ai.usage.completion_tokens']),
    'gen_ai.usage.reasoning.output_tokens': num(
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

/** The provider's response body for an imported call (what the agent's SDK parses in replay). */
function providerResponse(call: ImportedCall, ids: string[]): Json {
  const text = call.output.parts
    .filter((p) => p.type === 'text')
    .map((p) => String(p.content))
    .join('');
  const calls = call.output.parts.filter((p) => p.type === 'tool_call');
  const responseId = str(call.s.attrs['gen_ai.response.id']);
  const finish = call.output.finish_reason;
  const u = call.usage;
  if (call.api === 'messages') {
    return {
      id: responseId ?? `msg_${call.s.span.spanId}`,
      type: 'message',
      role: 'assistant',
      model: str(call.s.attrs['gen_ai.response.model']) ?? call.model,
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
    id: responseId ?? `chatcmpl-${call.s.span.spanId}`,
    object: 'chat.completion',
    created: Math.floor(call.s.start / 1000),
    model: str(call.s.attrs['gen_ai.response.model']) ?? call.model,
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

export interface ImportOptions {
  /** The recording folder to write. */
  out: string;
  /** Which trace (hex id) when the file holds several; default the one with the most model calls. */
  traceId?: string;
  name?: string;
}

export interface ImportResult {
  dir: string;
  traceId: string;
  modelCalls: number;
  toolCalls: number;
  /** Tool results taken from the model inputs of later calls (no execute_tool span for them). */
  derivedToolCalls: number;
}

/** Writes a recording of the model calls and tool results in the GenAI spans of one trace. */
export async function otlpToRecording(traces: OtlpTraces, options: ImportOptions): Promise<ImportResult> {
  const all = flatten(traces);
  const byTrace = new Map<string, FlatSpan[]>();
  for (const s of all) byTrace.set(s.traceId, [...(byTrace.get(s.traceId) ?? []), s]);
  let traceId = options.traceId?.toLowerCase();
  if (traceId === undefined) {
    traceId = [...byTrace.entries()].sort(
      (a, b) => b[1].filter(isModelSpan).length - a[1].filter(isModelSpan).length,
    )[0]?.[0];
  }
  const spans = traceId ? byTrace.get(traceId) : undefined;
  if (!traceId || !spans) {
    throw new TapedeckError(
      'OTLP_NO_TRACE',
      options.traceId
        ? `no trace ${options.traceId} in the spans (have: ${[...byTrace.keys()].join(', ')})`
        : 'the file holds no spans',
    );
  }
  const modelSpans = spans.filter(isModelSpan).sort((a, b) => a.start - b.start || a.end - b.end);
  if (modelSpans.length === 0) {
    throw new TapedeckError(
      'OTLP_NO_GENAI',
      `trace ${traceId} has no GenAI model spans (gen_ai.operation.name chat, or gen_ai.request.model)`,
    );
  }
  const toolSpans = spans.filter((s) => isToolSpan(s) && !isModelSpan(s));
  const agent = spans.find((s) => s.attrs['gen_ai.operation.name'] === 'invoke_agent');
  const resource = modelSpans[0]?.resource ?? {};
  const name = options.name ?? str(agent?.attrs['gen_ai.agent.name']) ?? str(resource['service.name']) ?? 'imported';
  const command = Array.isArray(resource['process.command_args'])
    ? (resource['process.command_args'] as unknown[]).map(String)
    : [];
  const calls = modelSpans.map(modelCallOf);

  // Tool steps: execute_tool spans, plus the results later model inputs carry for calls no span covers.
  type ToolStep = { start: number; end: number; name: string; args: unknown; result: unknown; id?: string };
  const tools: ToolStep[] = toolSpans.map((s) => ({
    start: s.start,
    end: s.end,
    name: String(s.attrs['gen_ai.tool.name'] ?? s.span.name.replace(/^execute_tool /, '')),
    args: jsonOrText(s.attrs['gen_ai.tool.call.arguments'] ?? '{}'),
    result: jsonOrText(s.attrs['gen_ai.tool.call.result']),
    ...(str(s.attrs['gen_ai.tool.call.id']) ? { id: String(s.attrs['gen_ai.tool.call.id']) } : {}),
  }));
  let derived = 0;
  const idsByCall = calls.map((c) =>
    c.output.parts
      .filter((p) => p.type === 'tool_call')
      .map((p, j) => p.id ?? (c.api === 'messages' ? `toolu_${c.s.span.spanId}${j}` : `call_${c.s.span.spanId}${j}`)),
  );
  for (const [i, c] of calls.entries()) {
    const later = calls[i + 1];
    if (!later) continue;
    // Tool spans between the two calls say what ran: only without them are results taken from the next input.
    if (tools.some((t) => t.start >= c.s.start && t.start <= later.s.start)) continue;
    const responses = later.conversation.messages
      .flatMap((m) => m.parts)
      .filter((p) => p.type === 'tool_call_response');
    for (const [j, p] of c.output.parts.filter((q) => q.type === 'tool_call').entries()) {
      const id = idsByCall[i]?.[j];
      const response = responses.find((r) => r.id !== undefined && r.id === id) ?? responses[j];
      if (!response) continue;
      tools.push({
        start: c.s.end,
        end: later.s.start,
        name: String(p.name),
        args: jsonOrText(p.arguments),
        result: jsonOrText(response.response),
        ...(id ? { id } : {}),
      });
      derived++;
    }
  }

  const writer = await createRecordingWriter(options.out, {
    name,
    agent: { command, cwd: str(resource['process.cwd']) ?? '' },
    traceId,
    createdAt: new Date(Math.min(...spans.map((s) => s.start))).toISOString(),
  });
  writer.setManifest({ tags: [IMPORTED_TAG] });
  const iso = (ms: number) => new Date(ms).toISOString();
  const runStart = Math.min(...spans.map((s) => s.start));
  writer.append({ type: 'run.started', stepId: 0, time: iso(runStart), payload: { command, cwd: '' } });
  type Item = { start: number; model?: { call: ImportedCall; index: number }; tool?: ToolStep };
  const items: Item[] = [
    ...calls.map((call, index): Item => ({ start: call.s.start, model: { call, index } })),
    ...tools.map((tool): Item => ({ start: tool.start, tool })),
  ].sort((a, b) => a.start - b.start || (a.model ? 0 : 1) - (b.model ? 0 : 1));
  let step = 0;
  let finalOutput: string | undefined;
  for (const item of items) {
    step++;
    if (item.model) {
      const { call, index } = item.model;
      const provider = providerById(call.api === 'messages' ? 'anthropic.messages' : 'openai.chat.completions');
      if (!provider) throw new Error(`no provider for ${call.api}`);
      const params: Json = {};
      for (const [attr, field] of [
        ['gen_ai.request.temperature', 'temperature'],
        ['gen_ai.request.top_p', 'top_p'],
        ['gen_ai.request.max_tokens', 'max_tokens'],
      ] as const)
        if (typeof call.s.attrs[attr] === 'number') params[field] = call.s.attrs[attr];
      if (call.api === 'messages' && params.max_tokens === undefined) params.max_tokens = 1024;
      const body = providerRequest(call.api, call.model, call.conversation, call.tools, params);
      const response = providerResponse(call, idsByCall[index] ?? []);
      const host =
        str(call.s.attrs['server.address']) ?? (call.api === 'messages' ? 'api.anthropic.com' : 'api.openai.com');
      const port = call.s.attrs['server.port'];
      const url = new URL(`https://${host}${call.api === 'messages' ? '/v1/messages' : '/v1/chat/completions'}`);
      if (typeof port === 'number' && port !== 443) url.port = String(port);
      const decoded = decodeModelCall(
        provider,
        { method: 'POST', url, headers: {}, json: body },
        { status: 200, headers: {}, json: response },
      );
      const exchangeId = `otlp-${call.s.span.spanId}`;
      const latencyMs = Math.max(0, call.s.end - call.s.start);
      writer.append({
        type: 'step.started',
        stepId: step,
        time: iso(call.s.start),
        payload: { stateType: 'THINK', name: call.model },
      });
      writer.append({
        type: 'http.exchange',
        stepId: step,
        time: iso(call.s.start),
        payload: {
          exchangeId,
          request: {
            method: 'POST',
            url: url.href,
            headers: { 'content-type': 'application/json' },
            body: writer.body(JSON.stringify(body), 'application/json'),
          },
          response: {
            status: 200,
            headers: { 'content-type': 'application/json' },
            body: writer.body(JSON.stringify(response), 'application/json'),
          },
          startedAt: iso(call.s.start),
          durationMs: latencyMs,
        },
      });
      const { firstTokenOffsetMs: _first, ...model } = decoded;
      writer.append({
        type: 'model.called',
        stepId: step,
        time: iso(call.s.end),
        payload: { ...model, exchangeId, usage: call.usage, latencyMs },
      });
      writer.append({
        type: 'step.completed',
        stepId: step,
        time: iso(call.s.end),
        payload: { status: call.s.span.status?.code === 2 ? 'error' : 'success', latencyMs },
      });
      if (model.output.text) finalOutput = model.output.text;
    } else if (item.tool) {
      const t = item.tool;
      const stateType = classifyToolName(t.name);
      const latencyMs = Math.max(0, t.end - t.start);
      writer.append({ type: 'step.started', stepId: step, time: iso(t.start), payload: { stateType, name: t.name } });
      writer.append({
        type: 'tool.called',
        stepId: step,
        time: iso(t.end),
        payload: {
          kind: 'in-process',
          name: t.name,
          stateType,
          args: t.args ?? null,
          ...(t.result !== undefined ? { result: t.result } : {}),
          mutating: false,
          latencyMs,
        },
      });
      writer.append({
        type: 'step.completed',
        stepId: step,
        time: iso(t.end),
        payload: { status: 'success', latencyMs },
      });
    }
  }
  const runEnd = Math.max(...spans.map((s) => s.end));
  writer.append({
    type: 'run.completed',
    stepId: 0,
    time: iso(runEnd),
    payload: { status: 'complete', exitCode: 0, ...(finalOutput !== undefined ? { finalOutput } : {}) },
  });
  await writer.close('complete');
  return { dir: writer.dir, traceId, modelCalls: calls.length, toolCalls: tools.length, derivedToolCalls: derived };
}
