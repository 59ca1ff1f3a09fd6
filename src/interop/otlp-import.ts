// OpenTelemetry GenAI import: GenAI spans — as the semantic conventions define them (attributes or
// one event per message), as OpenLLMetry writes them, as SDK processors emit them, with message
// content captured — into a recording of model calls and tool results that replay serves to the
// unchanged agent (matched by what the conversation says: see replay/recorded-calls.ts, isImported).
// The spans are read by otlp-spans.ts, the response bodies made by genai.ts; this file writes the steps.
import { decodeModelCall, providerById } from '../providers/index.js';
import { classifyToolName } from '../record/classify.js';
import { TapedeckError } from '../recording/errors.js';
import { jsonOrText } from '../recording/json.js';
import { providerRequest, providerResponse } from './genai.js';
import { writeImported } from './imported.js';
import type { OtlpTraces } from './otlp-schema.js';
import { type FlatSpan, flatten, type ImportedCall, isModelSpan, isToolSpan, modelCallOf, str } from './otlp-spans.js';

export { MAX_OTLP_BYTES, readOtlpFile } from './otlp-schema.js';

/** The tag an imported recording carries: its calls are matched by what they say (see replay/recorded-calls.ts). */
export const IMPORTED_TAG = 'imported:otlp';
/** A host name or address a URL takes as it is (`server.address`), with no path, port or user in it. */
const HOST = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,251}[A-Za-z0-9_])?|\[[0-9A-Fa-f:.]{2,45}\])$/;

type Json = Record<string, unknown>;

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

  const recording = await writeImported(
    options.out,
    {
      name,
      agent: { command, cwd: str(resource['process.cwd']) ?? '' },
      traceId,
      createdAt: new Date(Math.min(...spans.map((s) => s.start))).toISOString(),
    },
    async (writer) => {
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
          const response = providerResponse(call.api, call.output, call.usage, idsByCall[index] ?? [], {
            ...(str(call.s.attrs['gen_ai.response.id']) ? { id: str(call.s.attrs['gen_ai.response.id']) } : {}),
            model: str(call.s.attrs['gen_ai.response.model']) ?? call.model,
            idSuffix: call.s.span.spanId,
            createdMs: call.s.start,
          });
          const host =
            str(call.s.attrs['server.address']) ?? (call.api === 'messages' ? 'api.anthropic.com' : 'api.openai.com');
          const port = call.s.attrs['server.port'];
          if (!HOST.test(host))
            throw new TapedeckError(
              'BAD_OTLP',
              `span ${call.s.span.name} (${call.s.span.spanId}): attribute server.address ${JSON.stringify(host.slice(0, 100))} is not a host name`,
            );
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
          writer.append({
            type: 'step.started',
            stepId: step,
            time: iso(t.start),
            payload: { stateType, name: t.name },
          });
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
    },
  );
  return { dir: recording.dir, traceId, modelCalls: calls.length, toolCalls: tools.length, derivedToolCalls: derived };
}
