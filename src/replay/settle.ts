// Writes the answer of an `Answerer` (answer.ts) as a step of the replay: a model call is decoded
// as the recorder decodes one and compared with the recorded call it stands in for (same decision:
// the run stays on the recording; else a divergence), any other call becomes a tool step. The
// step's http.exchange carries the answerer's provenance (servedFrom).
import { wireOf } from '../../sandbox/protocol.js';
import { type DecodedModelCall, decodeModelCall, detectProvider, modelStepType } from '../providers/index.js';
import { classifyHttp } from '../record/classify.js';
import { jsonOrText, type ModelCalledPayload, type StateType, type StepEvent } from '../recording/index.js';
import { type Answer, type Answerer, type Ask, alignedModelCall, type HttpAnswer, stopped } from './answer.js';
import type { MatchResult } from './match.js';
import { canonical, fieldDiff, type LiveRequest, parseJson, summaryOf, viewOf } from './normalize.js';
import type { ReplaySession } from './session.js';

/**
 * Asks `answerer` and writes its answer as a step: a model step (decoded) or a tool step.
 * Undefined (nothing written) when the answerer had no answer after all.
 */
export async function settleAnswer(
  session: ReplaySession,
  ask: Ask,
  answerer: Answerer,
  miss: MatchResult,
): Promise<Answer | undefined> {
  const aligned = ask.isModel ? alignedModelCall(session, ask.redacted) : undefined;
  const step = session.stepFor(aligned);
  if (session.shouldStop(step)) return stopped(session, step);
  const a = await answerer.answer(ask);
  if (!a) return undefined;
  const { request, bytes } = ask;
  // A tool call is written at the URL the agent asked, as the recording and a mock's answer have it:
  // a sandboxed service's own port is gone with the replay, and a contract, `diff` and the TUI compare
  // the call with the recorded one. A model call is written where it went (the live endpoint decided).
  const url = ask.isModel ? a.url : request.url;
  const exchangeRequest = {
    method: request.method,
    url,
    headers: request.headers,
    ...(bytes ? { body: session.writer.body(bytes, request.headers['content-type']) } : {}),
  };
  const end = a.started + a.durationMs;
  const response = a.response;
  if (!response) {
    const error = a.error ?? { code: 'NO_RESPONSE', message: `${answerer.name} gave no response` };
    session.answerFailures.push(`step ${step}: ${error.message}`);
    session.beginStep(step, undefined);
    session.writeStep({
      stepId: step,
      ...session.parentOfOwn(ask.isModel),
      stateType: ask.isModel ? 'THINK' : 'API_CALL',
      name: ask.isModel ? 'model' : `${request.method} ${viewOf(request).path}`,
      start: a.started,
      end,
      events: [
        {
          type: 'http.exchange',
          payload: {
            exchangeId: session.nextExchangeId(),
            request: exchangeRequest,
            error,
            startedAt: new Date(a.started).toISOString(),
            durationMs: a.durationMs,
            servedFrom: answerer.servedFrom,
          },
        },
      ],
      status: 'error',
    });
    return {
      servedFrom: answerer.servedFrom,
      step,
      reply: { error: { code: 'ECONNREFUSED', message: error.message } },
    };
  }
  if (aligned) session.index.markUsed(aligned);
  session.beginStep(step, aligned?.step);
  const exchangeId = session.nextExchangeId();
  const exchange: StepEvent = {
    type: 'http.exchange',
    payload: {
      exchangeId,
      request: exchangeRequest,
      response: {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
        ...(response.bytes.length > 0
          ? { body: session.writer.body(response.bytes, response.headers['content-type']) }
          : {}),
        ...(response.chunks ? { chunks: response.chunks } : {}),
      },
      startedAt: new Date(a.started).toISOString(),
      durationMs: a.durationMs,
      ...(a.ttfbMs !== undefined ? { ttfbMs: a.ttfbMs } : {}),
      servedFrom: answerer.servedFrom,
      ...(a.simulatedBy ? { simulatedBy: a.simulatedBy } : {}),
    },
  };
  const origin = new URL(a.url).origin;
  const decoded = ask.isModel ? decodeModel(request, a.url, response) : undefined;
  const events: StepEvent[] = [];
  let stateType: StateType;
  let name: string;
  if (ask.isModel) {
    stateType = decoded ? modelStepType(decoded, response.status >= 400) : 'THINK';
    name = decoded?.model ?? 'model';
    if (decoded) {
      events.push({
        type: 'model.called',
        payload: {
          ...decoded,
          exchangeId,
          latencyMs: a.durationMs,
          ...(a.ttfbMs !== undefined ? { ttftMs: a.ttfbMs } : {}),
        },
      });
      if (decoded.output.toolCalls.length === 0 && decoded.output.text !== undefined)
        session.finalOutput = decoded.output.text;
    }
    events.push(exchange);
    // A model that asked the same (bar the prompt) and decided the same keeps the run on the
    // recording; otherwise this is where the run leaves it.
    const outputOf = (o: ModelCalledPayload['output'] | undefined) =>
      canonical({ text: o?.text ?? '', tools: (o?.toolCalls ?? []).map((t) => [t.name, jsonOrText(t.arguments)]) });
    if (aligned && decoded && aligned.model && outputOf(aligned.model.output) === outputOf(decoded.output)) {
      for (const [i, call] of decoded.output.toolCalls.entries()) {
        const recorded = aligned.model.output.toolCalls[i]?.id;
        if (call.id && recorded && call.id !== recorded) session.toolCallAliases.set(call.id, recorded);
      }
      session.progress(
        step,
        answerer.servedFrom === 'live' ? 'live' : 'served',
        `model answered as recorded at step ${aligned.step}`,
      );
    } else if (aligned) {
      events.push(
        session.diverge(step, {
          kind: 'different-request',
          expected: { step: aligned.step, output: aligned.model?.output },
          actual: { output: decoded?.output },
          fieldDiff: fieldDiff(aligned.model?.output ?? {}, decoded?.output ?? {}).map((d) => ({
            ...d,
            path: `output.${d.path}`,
          })),
          message: `Step ${step}: the model decided differently from recorded step ${aligned.step} (${answerer.name} answer from ${origin}).`,
        }),
      );
    } else {
      events.push(
        session.diverge(step, {
          kind: 'different-request',
          ...(miss.nearest ? { expected: { step: miss.nearest.step, request: summaryOf(miss.nearest.view) } } : {}),
          actual: summaryOf(viewOf(ask.redacted)),
          fieldDiff: miss.fieldDiff,
          message: `Step ${step}: the model request is not in the recording${miss.nearest ? ` (nearest: step ${miss.nearest.step})` : ''}; sent it ${answerer.servedFrom === 'live' ? 'live' : `to ${answerer.name}`} at ${origin}.`,
        }),
      );
    }
  } else {
    const parsed = parseJson(request.bodyText);
    const tool = classifyHttp(
      {
        method: request.method,
        url: new URL(request.url),
        json: parsed.ok ? parsed.value : undefined,
        headers: request.headers,
      },
      session.parts.rules,
    );
    const text = response.chunks ? response.chunks.map((c) => c.data).join('') : response.bytes.toString('utf8');
    const result = parseJson(text);
    stateType = tool.stateType;
    name = tool.name;
    events.push(
      {
        type: 'tool.called',
        payload: {
          exchangeId,
          ...tool,
          ...(text === '' ? {} : { result: result.ok ? result.value : text }),
          ...(response.status >= 400
            ? { error: { code: `HTTP_${response.status}`, message: response.statusText || 'request failed' } }
            : {}),
          latencyMs: a.durationMs,
        },
      },
      exchange,
      session.diverge(step, {
        kind: 'unmatched-request',
        ...(miss.nearest ? { expected: { step: miss.nearest.step, request: summaryOf(miss.nearest.view) } } : {}),
        actual: summaryOf(viewOf(ask.redacted)),
        fieldDiff: miss.fieldDiff,
        message: `Step ${step}: ${request.method} ${viewOf(ask.redacted).path} is not in the recording; answered by ${answerer.name}.`,
      }),
    );
  }
  session.writeStep({
    stepId: step,
    ...session.parentOfOwn(ask.isModel),
    stateType,
    name,
    start: a.started,
    end,
    events,
    status: response.status < 400 ? 'success' : 'error',
  });
  session.served[answerer.servedFrom]++;
  session.progress(
    step,
    answerer.servedFrom === 'live' ? 'live' : 'served',
    `${request.method} ${url} -> ${response.status}`,
  );
  return {
    servedFrom: answerer.servedFrom,
    step,
    reply: {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
      timing: { kind: 'none' },
      ...(response.chunks ? { chunks: response.chunks } : { body: wireOf(response.bytes) }),
    },
  };
}

/** Decodes an answered model call as the recorder would (model, output, usage); undefined when it cannot. */
function decodeModel(
  request: LiveRequest,
  url: string,
  response: NonNullable<HttpAnswer['response']>,
): Omit<DecodedModelCall, 'firstTokenOffsetMs'> | undefined {
  const json = parseJson(request.bodyText);
  const call = {
    method: request.method,
    url: new URL(url),
    headers: request.headers,
    json: json.ok ? json.value : undefined,
  };
  const provider = detectProvider(call);
  if (!provider) return undefined;
  try {
    const body = parseJson(response.bytes.toString('utf8'));
    const { firstTokenOffsetMs: _ignored, ...decoded } = decodeModelCall(provider, call, {
      status: response.status,
      headers: response.headers,
      ...(response.chunks ? { chunks: response.chunks } : body.ok ? { json: body.value } : { bytes: response.bytes }),
    });
    return decoded;
  } catch {
    return undefined;
  }
}
