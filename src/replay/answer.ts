// The replay's decisions: who answers each call the agent makes. Every call (HTTP through the
// preload, in-process tool(), or one the preload already served itself) goes through ONE
// function, answerCall, whose result says where the answer came from (`servedFrom`, written on
// the step's http.exchange and counted in ReplayResult.served):
//
//   1. the recording  — recordedVerdict(): a match (layered, in order), or in the prefix (exact
//                       mode, before fork-at K) the expected recorded call with a divergence;
//                       served by serveRecorded() (serve.ts) with its recorded world effects.
//   2. the answerers  — for an HTTP call the recording cannot serve, an ordered list of
//                       `Answerer`s (ReplayOptions.answerers, then the built-in live model
//                       answerer in counterfactual mode, live.ts); the first that accepts the call
//                       answers it and settleAnswer() writes the step with its provenance.
//   3. held back      — holdBack() (held-back.ts): nobody may answer; the call is never sent, it
//                       is a divergence, and the agent gets the miss policy's error.
//
// To add a source of answers (a sandbox service, a mock, a simulator) implement `Answerer` and
// put it in the list; nothing else changes. An `until K` stop is checked before any answerer
// runs, so a stopped replay never makes a live call.
import {
  type QuestionOf,
  type ReplayNotice,
  type ReplayReply,
  type WireBody,
  wireBytes,
} from '../../sandbox/protocol.js';
import { withSystemPrompt } from '../providers/index.js';
import {
  type DivergencePayload,
  isTelemetry,
  type StreamChunk,
  TapedeckError,
  type Usage,
} from '../recording/index.js';
import { holdBack } from './held-back.js';
import { CallIndex, type MatchResult, type RecordedCall, toolRequest } from './match.js';
import {
  apiOf,
  canonical,
  type FieldDiff,
  fieldDiff,
  isModelApi,
  type LiveRequest,
  parseJson,
  type RequestView,
  summaryOf,
  viewOf,
} from './normalize.js';
import { overrideRequestBody } from './prompt.js';
import { serveRecorded } from './serve.js';
import type { ReplaySession } from './session.js';
import { settleAnswer } from './settle.js';
import type { ReplayMode, ServedFrom } from './types.js';

/** A call the agent made, as the decisions see it. */
export interface Ask {
  /** An HTTP request (through the preload's interceptors) or an in-process tool() call. */
  kind: 'http' | 'tool';
  /** The request as the agent sent it (after a prompt override); a tool call as `TOOL tool:<name>`. */
  request: LiveRequest;
  bytes?: Buffer;
  /** The request with its secrets redacted, as recordings store requests: what matching compares. */
  redacted: LiveRequest;
  /** A call to a model API (decoded as model.called). */
  isModel: boolean;
  /** In-process tools: whether the tool was declared mutating (a mutating call is never served twice). */
  mutating?: boolean;
}

/** The response an answerer produced, or the error it met. Times are epoch milliseconds. */
export interface HttpAnswer {
  /**
   * Where the request went (a live endpoint, a sandbox service, a mock). The replay writes a model
   * call at it, and any other call at the URL the agent asked (settle.ts).
   */
  url: string;
  started: number;
  durationMs: number;
  ttfbMs?: number;
  response?: {
    status: number;
    statusText: string;
    headers: Record<string, string>;
    bytes: Buffer;
    /** A streamed (SSE) response, event by event. */
    chunks?: StreamChunk[];
  };
  error?: { code: string; message: string };
  /** A simulated answer: the model call that wrote it (written on the exchange, costed by the ledger). */
  simulatedBy?: { provider: string; model: string; usage?: Usage };
}

/** A source of answers for HTTP calls the recording cannot serve, tried in list order. */
export interface Answerer {
  readonly name: string;
  /** Provenance of its answers: written on the exchange, counted in ReplayResult.served. */
  readonly servedFrom: Exclude<ServedFrom, 'recording' | 'blocked'>;
  /** Whether it answers this call; `prefix` is true where every call must come from the recording. */
  accepts(ask: Ask, context: { mode: ReplayMode; prefix: boolean }): boolean;
  /** Its answer; undefined when it turns out to have none (no mock handler matched): the next answerer is asked. */
  answer(ask: Ask): Promise<HttpAnswer | undefined>;
}

/** The outcome of one call: its provenance, the step it became, and the reply for the preload. */
export interface Answer {
  /** 'stopped': until K stopped the agent before this call. */
  servedFrom: ServedFrom | 'stopped';
  step: number;
  reply: ReplayReply;
}

/** What the recording says about a call. */
export type RecordedVerdict =
  | {
      kind: 'serve';
      call: RecordedCall;
      step?: number;
      divergence?: DivergencePayload;
      /** A model call served in counterfactual mode: its cost is not paid again (ReplayResult.savedCost). */
      saved?: boolean;
      /** Written at `step` without moving the replay's step on (the agent's telemetry). */
      aside?: boolean;
    }
  | { kind: 'stop'; step: number }
  | { kind: 'miss'; match: MatchResult };

/** The one decision: the recording, else the first accepting answerer, else held back. */
export async function answerCall(session: ReplaySession, ask: Ask): Promise<Answer> {
  const prefix = session.isPrefix();
  const verdict = recordedVerdict(session, ask, prefix);
  if (verdict.kind === 'stop') return stopped(session, verdict.step);
  if (verdict.kind === 'serve') return serveRecorded(session, ask, verdict);
  if (ask.kind === 'http') {
    const context = { mode: session.options.mode, prefix };
    for (const answerer of session.parts.answerers) {
      if (!answerer.accepts(ask, context)) continue;
      const answer = await settleAnswer(session, ask, answerer, verdict.match);
      // undefined: it had no answer after all (no mock handler matched); the next one is asked.
      if (!answer) continue;
      // What a sandbox service or a mock wrote to the sandbox database is this step's db.changed.
      if (answer.servedFrom !== 'live') await session.collect([]);
      return answer;
    }
  }
  return holdBack(session, ask, verdict.match);
}

export function stopped(session: ReplaySession, step: number): Answer {
  return { servedFrom: 'stopped', step, reply: session.stop(step) };
}

/** An HTTP call from the preload. */
export async function answerHttp(session: ReplaySession, message: QuestionOf<'http'>): Promise<ReplayReply> {
  let { request, bytes } = requestOf(message);
  const parsed = parseJson(request.bodyText);
  const api = apiOf(request.method, request.url, parsed.ok ? parsed.value : undefined, request.headers);
  const isModel = isModelApi(api);
  const override = session.parts.override;
  let unpatched: string | undefined;
  if (isModel && override && request.bodyText !== undefined) {
    try {
      const text = overrideRequestBody(api, request.bodyText, override);
      request = { ...request, bodyText: text };
      bytes = Buffer.from(text, 'utf8');
    } catch (error) {
      // A patch that does not fit this call's prompt: the call goes on as the agent made it, and
      // the replay says so at its step (never an error the agent would take for a network failure).
      if (!(error instanceof TapedeckError && error.code === 'PROMPT_PATCH_FAILED')) throw error;
      unpatched = error.message;
    }
  }
  const ask: Ask = {
    kind: 'http',
    request,
    redacted: session.redacted(request, bytes),
    isModel,
    ...(bytes ? { bytes } : {}),
  };
  const answer = await answerCall(session, ask);
  if (unpatched !== undefined && answer.servedFrom !== 'stopped') {
    const event = session.diverge(answer.step, {
      kind: 'different-request',
      actual: summaryOf(viewOf(ask.redacted)),
      message: `Step ${answer.step}: the prompt patch does not apply to this model call's system prompt; sent it unpatched, as the agent made it.`,
    });
    session.writer.append({ ...event, stepId: answer.step });
  }
  return answer.reply;
}

/** An in-process tool() call from the preload. */
export async function answerTool(session: ReplaySession, message: QuestionOf<'tool'>): Promise<ReplayReply> {
  const request = toolRequest(message.name, message.args ?? null);
  const ask: Ask = {
    kind: 'tool',
    request,
    bytes: Buffer.from(request.bodyText ?? ''),
    redacted: session.redacted(request),
    isModel: false,
    mutating: message.mutating === true,
  };
  return (await answerCall(session, ask)).reply;
}

/** A call the preload served itself from its fast index (exact mode): written as served from the recording. */
export async function serveReported(
  session: ReplaySession,
  message: Extract<ReplayNotice, { t: 'served' }>,
): Promise<void> {
  const call = session.index.calls[message.i];
  if (!call || session.index.isUsed(call)) return;
  const { request, bytes } = requestOf(message);
  const ask: Ask = {
    kind: 'http',
    request,
    redacted: request,
    isModel: call.kind === 'model',
    ...(bytes ? { bytes } : {}),
  };
  await serveRecorded(session, ask, { kind: 'serve', call }, true);
}

function requestOf(message: { method: string; url: string; headers: Record<string, string>; body?: WireBody }): {
  request: LiveRequest;
  bytes?: Buffer;
} {
  const body = message.body;
  const bytes = body ? wireBytes(body) : undefined;
  const request: LiveRequest = {
    method: message.method.toUpperCase(),
    url: message.url,
    headers: message.headers,
    ...(body?.text !== undefined ? { bodyText: body.text } : {}),
  };
  return bytes ? { request, bytes } : { request };
}

/** The recording's answer to a call, layer by layer; in the prefix, what departs from it is a divergence. */
export function recordedVerdict(session: ReplaySession, ask: Ask, prefix: boolean): RecordedVerdict {
  const live = ask.redacted;
  if (ask.kind === 'tool') {
    const m = session.parts.tools.match(live, { kind: 'tool', allowReuse: ask.mutating !== true });
    if (!m.call?.tool) return { kind: 'miss', match: m };
    const step = session.stepFor(m.call);
    return session.shouldStop(step) ? { kind: 'stop', step } : { kind: 'serve', call: m.call, step };
  }
  const index = session.index;
  if (ask.isModel && prefix) {
    const m = index.match(live, { kind: 'model' });
    // Exact or normalised, or (an imported recording) the same conversation: the recorded answer, no divergence.
    if (m.call && m.layer !== 'structural' && session.inOrder(m.call)) return { kind: 'serve', call: m.call };
    // Under a prompt override the recorded prefix before a fork differs by the prompt alone, on
    // purpose. An exact replay has no fork: a call whose prompt was changed is not the recorded one.
    const aligned =
      session.parts.override && session.options.mode !== 'exact' ? alignedModelCall(session, live) : undefined;
    if (aligned) return { kind: 'serve', call: aligned };
    const expected = m.call ?? index.nextExpected('model');
    if (!expected) return { kind: 'miss', match: m };
    const step = session.stepFor(expected);
    if (session.shouldStop(step)) return { kind: 'stop', step };
    return {
      kind: 'serve',
      call: expected,
      step,
      divergence: {
        kind: 'different-request',
        expected: { step: expected.step, request: summaryOf(expected.view) },
        actual: summaryOf(viewOf(live)),
        fieldDiff: m.call ? m.fieldDiff : fieldDiffOf(expected, live),
        message: `Step ${step}: the model request differs from the recorded step ${expected.step}; served the recorded answer.`,
      },
    };
  }
  if (ask.isModel) {
    // Counterfactual: a model call is served from the recording only when it is the same request.
    const m = index.match(live, { kind: 'model', maxLayer: 'normalised' });
    if (!m.call) return { kind: 'miss', match: session.parts.override ? missBesidesPrompt(index, m, live) : m };
    const step = session.stepFor(m.call);
    return session.shouldStop(step) ? { kind: 'stop', step } : { kind: 'serve', call: m.call, step, saved: true };
  }
  if (isTelemetry(live)) {
    // The agent's telemetry: what it carries and how often it comes depend on when its batches
    // flush, so any recorded export to the same place answers it, at the side of the run's steps.
    const t = index.telemetryFor(live);
    if (t !== undefined)
      return { kind: 'serve', call: t.call, step: session.asideStep(t.reused ? undefined : t.call), aside: true };
  }
  const m = index.match(live, { kind: 'tool', allowReuse: true });
  if (!m.call) return { kind: 'miss', match: m };
  const step = session.stepFor(m.call);
  if (session.shouldStop(step)) return { kind: 'stop', step };
  const loose = m.layer === 'structural' || m.reused || !session.inOrder(m.call);
  if (!prefix || !loose) return { kind: 'serve', call: m.call, step };
  const how = m.reused ? 'as a repeat' : m.layer === 'structural' ? 'structurally' : 'out of order';
  return {
    kind: 'serve',
    call: m.call,
    step,
    divergence: {
      kind: 'different-request',
      expected: { step: m.call.step, request: summaryOf(m.call.view) },
      actual: summaryOf(viewOf(live)),
      fieldDiff: m.fieldDiff,
      message: `Step ${step}: ${live.method} ${viewOf(live).path} matched recorded step ${m.call.step} only ${how}; served it.`,
    },
  };
}

/**
 * The recorded model call a live one stands in for: the next recorded model call when the
 * requests are equal apart from the system prompt (which an override changes on purpose) and the
 * tool-call ids a live model minted for the decisions it made as recorded (read as the recorded ones).
 */
export function alignedModelCall(session: ReplaySession, live: LiveRequest): RecordedCall | undefined {
  const expected = session.index.nextExpected('model');
  if (!expected) return undefined;
  const view = viewOf(live);
  const asRecorded = { ...view, body: withAliases(view.body, session.toolCallAliases) };
  return canonical(withoutSystem(expected.view)) === canonical(withoutSystem(asRecorded)) ? expected : undefined;
}

/** A JSON value with every string that is an aliased id replaced by the id it stands for. */
function withAliases(value: unknown, aliases: ReadonlyMap<string, string>): unknown {
  if (aliases.size === 0) return value;
  if (typeof value === 'string') return aliases.get(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => withAliases(v, aliases));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withAliases(v, aliases)]));
}

/** A model request's view with its system prompt blanked, for comparing runs under a prompt override. */
function withoutSystem(view: RequestView): RequestView {
  if (!isModelApi(view.api) || view.body === null || typeof view.body !== 'object' || Array.isArray(view.body))
    return view;
  return { ...view, body: withSystemPrompt(view.api, view.body as Record<string, unknown>, '') };
}

/**
 * A model request not in the recording under a prompt override, set beside the nearest recorded
 * one without the prompt: the override changed it on purpose, so it is no difference to report.
 */
function missBesidesPrompt(index: CallIndex, m: MatchResult, live: LiveRequest): MatchResult {
  const view = withoutSystem(viewOf(live));
  const nearest = index.nearest(view, 'model', withoutSystem);
  if (nearest === undefined) return m;
  return { ...m, nearest, fieldDiff: fieldDiff(withoutSystem(nearest.view), view) };
}

function fieldDiffOf(expected: RecordedCall, live: LiveRequest): FieldDiff[] {
  return new CallIndex([expected]).match(live).fieldDiff;
}
