// OpenTelemetry GenAI export: a recording (or replay) as OTLP/JSON spans with the current gen_ai.*
// attributes — an invoke_agent span over the run, a chat span per model call (messages, tool
// calls, usage with cache read, cache creation and reasoning tokens), an execute_tool span per
// tool call — written to a file or sent to a collector (OTLP/HTTP, JSON).
import { createHash } from 'node:crypto';
import { bucketsFromUsage, otelView } from '../ledger/tokens.js';
import { packageVersion } from '../package.js';
import { TapedeckError } from '../recording/errors.js';
import { bodyText } from '../recording/index.js';
import { jsonOrText } from '../recording/json.js';
import type { ModelCalledPayload, Recording, RecordingEvent, ToolCalledPayload } from '../recording/types.js';
import { genAiConversation, genAiOperation, genAiOutput, genAiProviderName, genAiTools } from './genai.js';
import { keyValue, type OtlpKeyValue, type OtlpSpan, type OtlpTraces } from './otlp-schema.js';

const SPAN_KIND = { INTERNAL: 1, CLIENT: 3 } as const;
const nanos = (iso: string | number): string =>
  (BigInt(typeof iso === 'number' ? Math.round(iso) : Date.parse(iso)) * 1_000_000n).toString();
const spanIdOf = (traceId: string, key: string): string =>
  createHash('sha256').update(`${traceId}:${key}`).digest('hex').slice(0, 16);
const traceIdOf = (id: string): string =>
  /^[0-9a-f]{32}$/.test(id) ? id : createHash('sha256').update(id).digest('hex').slice(0, 32);

type Json = Record<string, unknown>;

interface Step {
  id: number;
  parentStepId?: number;
  stateType: string;
  name: string;
  start: string;
  latencyMs: number;
  status: string;
  events: RecordingEvent[];
}

function stepsOf(recording: Recording): Step[] {
  const steps = new Map<number, Step>();
  for (const e of recording.events) {
    if (e.stepId === 0) continue;
    let step = steps.get(e.stepId);
    if (!step) {
      step = {
        id: e.stepId,
        stateType: 'OBSERVE',
        name: '',
        start: e.time,
        latencyMs: 0,
        status: 'success',
        events: [],
      };
      steps.set(e.stepId, step);
    }
    if (e.parentStepId !== undefined) step.parentStepId ??= e.parentStepId;
    if (e.type === 'step.started') {
      step.stateType = e.payload.stateType;
      step.name = e.payload.name;
      step.start = e.time;
    }
    if (e.type === 'step.completed') {
      step.latencyMs = e.payload.latencyMs;
      step.status = e.payload.status;
    }
    step.events.push(e);
  }
  return [...steps.values()].sort((a, b) => a.id - b.id);
}

function modelAttributes(recording: Recording, m: ModelCalledPayload, exchange: Json | undefined): OtlpKeyValue[] {
  const api = m.api;
  const request = exchange?.request as { url?: string; body?: never } | undefined;
  const url = request?.url ? new URL(request.url) : undefined;
  const body = (() => {
    const text = request?.body ? bodyText(recording, request.body) : undefined;
    try {
      return text ? (JSON.parse(text) as Json) : undefined;
    } catch {
      return undefined;
    }
  })();
  const conversation = genAiConversation(m);
  const response = (exchange?.response as { body?: never } | undefined)?.body;
  const responseJson = (() => {
    const text = response ? bodyText(recording, response) : undefined;
    try {
      return text ? (JSON.parse(text) as Json) : undefined;
    } catch {
      return undefined;
    }
  })();
  const attrs: OtlpKeyValue[] = [
    keyValue('gen_ai.operation.name', genAiOperation(m)),
    keyValue('gen_ai.provider.name', genAiProviderName(m.provider, url)),
    keyValue('gen_ai.request.model', m.model),
    keyValue('gen_ai.response.model', typeof responseJson?.model === 'string' ? responseJson.model : m.model),
  ];
  if (typeof responseJson?.id === 'string') attrs.push(keyValue('gen_ai.response.id', responseJson.id));
  if (m.stopReason !== undefined) attrs.push(keyValue('gen_ai.response.finish_reasons', [m.stopReason]));
  if (m.usage) for (const [k, v] of Object.entries(otelView(bucketsFromUsage(m.usage)))) attrs.push(keyValue(k, v));
  for (const [attr, field] of [
    ['gen_ai.request.temperature', 'temperature'],
    ['gen_ai.request.top_p', 'top_p'],
    ['gen_ai.request.max_tokens', body?.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens'],
  ] as const) {
    if (typeof body?.[field] === 'number') attrs.push(keyValue(attr, body[field]));
  }
  if (conversation.system.length > 0)
    attrs.push(keyValue('gen_ai.system_instructions', JSON.stringify(conversation.system)));
  attrs.push(keyValue('gen_ai.input.messages', JSON.stringify(conversation.messages)));
  attrs.push(keyValue('gen_ai.output.messages', JSON.stringify(genAiOutput(m.output, m.stopReason))));
  const tools = genAiTools(m);
  if (tools.length > 0) attrs.push(keyValue('gen_ai.tool.definitions', JSON.stringify(tools)));
  if (url) {
    attrs.push(keyValue('server.address', url.hostname));
    if (url.port) attrs.push(keyValue('server.port', Number(url.port)));
  }
  if (m.streamed) attrs.push(keyValue('gen_ai.request.stream', true));
  attrs.push(keyValue('tapedeck.api', api));
  return attrs;
}

/**
 * A recording (or a replay) as OTLP/JSON traces: one trace, the recording's, with an invoke_agent
 * span over the run and a span per step.
 */
export function recordingToOtlp(recording: Recording): OtlpTraces {
  const { manifest } = recording;
  const traceId = traceIdOf(recording.events[0]?.traceId ?? manifest.id);
  const rootId = spanIdOf(traceId, 'run');
  const started = recording.events.find((e) => e.type === 'run.started');
  const completed = recording.events.find((e) => e.type === 'run.completed');
  const steps = stepsOf(recording);
  const lastEnd = Math.max(
    Date.parse(completed?.time ?? manifest.createdAt),
    ...steps.map((s) => Date.parse(s.start) + s.latencyMs),
  );
  const toolCallIds = new Map<string, string[]>();
  const spans: OtlpSpan[] = [
    {
      traceId,
      spanId: rootId,
      name: `invoke_agent ${manifest.name}`,
      kind: SPAN_KIND.INTERNAL,
      startTimeUnixNano: nanos(started?.time ?? manifest.createdAt),
      endTimeUnixNano: nanos(lastEnd),
      attributes: [
        keyValue('gen_ai.operation.name', 'invoke_agent'),
        keyValue('gen_ai.agent.name', manifest.name),
        keyValue('tapedeck.recording.id', manifest.id),
        ...(manifest.replayOf ? [keyValue('tapedeck.replay_of', manifest.replayOf)] : []),
        ...(completed?.type === 'run.completed' && completed.payload.finalOutput !== undefined
          ? [
              keyValue(
                'gen_ai.output.messages',
                JSON.stringify([
                  { role: 'assistant', parts: [{ type: 'text', content: completed.payload.finalOutput }] },
                ]),
              ),
            ]
          : []),
      ],
      status: { code: completed?.type === 'run.completed' && completed.payload.status === 'failed' ? 2 : 1 },
    },
  ];
  for (const step of steps) {
    const model = step.events.find((e) => e.type === 'model.called');
    const tool = step.events.find((e) => e.type === 'tool.called');
    const exchange = step.events.find((e) => e.type === 'http.exchange');
    const base = {
      traceId,
      spanId: spanIdOf(traceId, `step:${step.id}`),
      parentSpanId: step.parentStepId !== undefined ? spanIdOf(traceId, `step:${step.parentStepId}`) : rootId,
      startTimeUnixNano: nanos(step.start),
      endTimeUnixNano: nanos(Date.parse(step.start) + step.latencyMs),
      status: { code: step.status === 'success' ? 0 : 2 },
    };
    const tapedeck = [keyValue('tapedeck.step.id', step.id), keyValue('tapedeck.step.state_type', step.stateType)];
    if (model?.type === 'model.called') {
      const m = model.payload;
      for (const c of m.output.toolCalls)
        toolCallIds.set(`${c.name}\n${c.arguments}`, [...(toolCallIds.get(`${c.name}\n${c.arguments}`) ?? []), c.id]);
      spans.push({
        ...base,
        name: `${genAiOperation(m)} ${m.model}`,
        kind: SPAN_KIND.CLIENT,
        attributes: [...modelAttributes(recording, m, exchange?.payload as Json | undefined), ...tapedeck],
      });
    } else if (tool?.type === 'tool.called') {
      const t: ToolCalledPayload = tool.payload;
      const argsText = JSON.stringify(t.args ?? null);
      const id = [...toolCallIds.entries()]
        .find(
          ([k]) => k.startsWith(`${t.name}\n`) && JSON.stringify(jsonOrText(k.slice(t.name.length + 1))) === argsText,
        )?.[1]
        ?.shift();
      const request = (exchange?.payload as { request?: { method?: string; url?: string } } | undefined)?.request;
      const result = t.result ?? (t.resultBody ? bodyText(recording, t.resultBody) : undefined);
      spans.push({
        ...base,
        name: `execute_tool ${t.name}`,
        kind: SPAN_KIND.INTERNAL,
        attributes: [
          keyValue('gen_ai.operation.name', 'execute_tool'),
          keyValue('gen_ai.tool.name', t.name),
          keyValue('gen_ai.tool.type', t.kind === 'in-process' ? 'function' : 'extension'),
          ...(id ? [keyValue('gen_ai.tool.call.id', id)] : []),
          keyValue('gen_ai.tool.call.arguments', argsText),
          ...(result !== undefined
            ? [keyValue('gen_ai.tool.call.result', typeof result === 'string' ? result : JSON.stringify(result))]
            : []),
          ...(request?.method ? [keyValue('http.request.method', request.method)] : []),
          ...(request?.url ? [keyValue('url.full', request.url)] : []),
          ...(t.error ? [keyValue('error.type', t.error.code)] : []),
          ...tapedeck,
        ],
      });
    } else {
      spans.push({
        ...base,
        name: `${step.stateType} ${step.name}`.trim(),
        kind: SPAN_KIND.INTERNAL,
        attributes: tapedeck,
      });
    }
  }
  return {
    resourceSpans: [
      {
        resource: {
          attributes: [
            keyValue('service.name', manifest.name),
            keyValue('telemetry.sdk.name', 'tapedeck'),
            keyValue('telemetry.sdk.language', 'nodejs'),
            keyValue('telemetry.sdk.version', packageVersion()),
          ],
        },
        scopeSpans: [{ scope: { name: 'tapedeck', version: packageVersion() }, spans }],
      },
    ],
  };
}

/** Sends traces to an OTLP/HTTP collector (JSON encoding); `endpoint` without a path gets /v1/traces. */
export async function sendOtlp(
  traces: OtlpTraces,
  endpoint: string,
  headers: Record<string, string> = {},
): Promise<void> {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new TapedeckError('BAD_OPTION', `--otlp-endpoint ${endpoint} is not a URL (e.g. http://localhost:4318)`);
  }
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1/traces';
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(traces),
    });
  } catch (error) {
    throw new TapedeckError('OTLP_UNREACHABLE', `cannot send spans to ${url.href}: ${(error as Error).message}`, {
      exitCode: 1,
    });
  }
  if (!response.ok) {
    // one line: a collector's error page (HTML, JSON) folded and cut
    const detail = (await response.text().catch(() => '')).replace(/\s+/g, ' ').trim().slice(0, 200);
    throw new TapedeckError('OTLP_REFUSED', `${url.href} refused the spans: HTTP ${response.status} ${detail}`.trim(), {
      exitCode: 1,
    });
  }
}
