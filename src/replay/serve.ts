// Serving a recorded call: the step is written as recorded (its model.called / tool.called,
// the recorded response), the world changes recorded for a tool call are applied to the sandbox
// (effects follow their calls), and the preload gets the recorded response to hand the agent.

import type { FsReport, ReplayReply } from '../../sandbox/protocol.js';
import { CLIENT_LEFT } from '../../sandbox/proxy/server.js';
import { modelCallCost } from '../ledger/cost.js';
import {
  type Body,
  canonicalJson,
  type DbChangedPayload,
  isBinaryType,
  type RecordingWriter,
  type StepEvent,
} from '../recording/index.js';
import type { Answer, Ask, RecordedVerdict } from './answer.js';
import { stopped } from './answer.js';
import { bodyBytesOf } from './match.js';
import { parseJson } from './normalize.js';
import { closesAfter, issuedEarly, type RecordedBody, recordedBody, wireBodyOf } from './recorded-calls.js';
import type { ReplaySession } from './session.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `replied`: the preload has answered the agent already (serveReported): no reply is made. */
export async function serveRecorded(
  session: ReplaySession,
  ask: Ask,
  verdict: Extract<RecordedVerdict, { kind: 'serve' }>,
  replied = false,
): Promise<Answer> {
  const { call } = verdict;
  const step = verdict.step ?? session.stepFor(call);
  // Telemetry is written aside: `until` counts the run's steps.
  if (!verdict.aside && session.shouldStop(step)) return stopped(session, step);
  const { recording, options, writer } = session;
  if (verdict.saved) {
    const model = call.model;
    session.addSaved(model?.usage, modelCallCost(session.prices, model?.model ?? '', model?.usage));
  }
  // Up to the fork the agent's branches take their values in the recorded order: its answer waits
  // for the values its process had drawn when it was recorded (drawn.ts). After it, nothing waits.
  const drawn = call.drawn && session.isPrefix() ? { drawn: call.drawn } : {};
  const next = session.index.nextExpected();
  // A call issued before the next expected one keeps its (later) recorded step and does not move the replay's step on.
  const early =
    step === call.step &&
    next !== undefined &&
    next.index !== call.index &&
    (issuedEarly(call, next) || session.ownOrder(call, next));
  if (call.exchange) session.index.markUsed(call);
  else session.parts.tools.markUsed(call);
  const started = Date.now();
  if (verdict.aside) {
    session.flushPending(session.lastStep);
    session.mapStep(call.step, step);
  } else if (early) session.mapStep(call.step, step);
  else session.beginStep(step, call.step);
  const divergence = verdict.divergence ? session.diverge(step, verdict.divergence) : undefined;
  const exchangeId = session.nextExchangeId();
  const events: StepEvent[] = [];
  if (call.model) events.push({ type: 'model.called', payload: { ...call.model, exchangeId } });
  if (call.tool) events.push({ type: 'tool.called', payload: { ...call.tool, exchangeId } });
  if (call.model?.output.text !== undefined && call.model.output.toolCalls.length === 0)
    session.finalOutput = call.model.output.text;

  const x = call.exchange;
  const response = x?.response;
  const recorded = response?.body ? recordedBody(recording, response.body) : undefined;
  const timing = options.timing ?? { kind: 'none' };
  const factor = timing.kind === 'none' ? 0 : timing.kind === 'scaled' ? timing.factor : 1;
  if (factor > 0 && x) await sleep((response?.chunks ? (x.ttfbMs ?? 0) : x.durationMs) * factor);

  // Effects follow their calls: the world changes recorded for this call reach the sandbox.
  // (A model step's recorded changes are the agent's own: the agent makes them again.)
  const fsEffects: FsReport[] = [];
  let effectFailure: ReturnType<ReplaySession['diverge']> | undefined;
  if (call.kind === 'tool' && session.files.root) {
    for (const change of call.effects.fs) {
      const applied = session.files.applyRecorded(change, recording.readBlob);
      if (applied) fsEffects.push(applied.report);
      events.push({ type: 'fs.changed', payload: applied?.change ?? change });
    }
  }
  const { db, tracker } = session.parts;
  // The agent's own writes (`own`) are not effects: the agent makes them again in the sandbox.
  const dbEffects = call.kind === 'tool' ? call.effects.db.filter((c) => c.own !== true) : [];
  if (dbEffects.length > 0 && db) {
    let failure: string | undefined;
    try {
      await db.apply(dbEffects);
    } catch (error) {
      failure = (error as Error).message;
    }
    // What the sandbox's triggers saw, not a copy of the recording: equal when the effects replay
    // faithfully; what the agent wrote meanwhile is its own.
    const seen = tracker ? markOwnBesides(await tracker.drain(), dbEffects) : dbEffects;
    for (const change of seen) events.push({ type: 'db.changed', payload: change });
    if (failure !== undefined) {
      effectFailure = session.diverge(step, {
        kind: 'effect-not-applied',
        expected: dbEffects,
        message: `The database changes recorded for step ${call.step} (${call.stateType} ${call.stepName || call.request.url}) could not be applied to the sandbox: ${failure}. The agent got the recorded answer; the sandbox's world is no longer the recorded one.`,
      });
    }
  }

  const end = Date.now();
  if (x) {
    const { request, bytes } = ask;
    events.push({
      type: 'http.exchange',
      payload: {
        exchangeId,
        request: {
          method: request.method,
          url: request.url,
          headers: request.headers,
          ...(bytes ? { body: writer.body(bytes, request.headers['content-type']) } : {}),
        },
        ...(response
          ? {
              response: {
                status: response.status,
                ...(response.statusText !== undefined ? { statusText: response.statusText } : {}),
                headers: response.headers,
                ...(recorded ? { body: storedBody(writer, recorded, response.headers['content-type']) } : {}),
                ...(response.chunks ? { chunks: response.chunks } : {}),
                ...(response.trailers ? { trailers: response.trailers } : {}),
              },
            }
          : {}),
        ...(x.error ? { error: x.error } : {}),
        ...(x.protocol ? { protocol: x.protocol } : {}),
        startedAt: new Date(started).toISOString(),
        durationMs: end - started,
        servedFrom: 'recording',
      },
    });
  }
  if (divergence) events.push(divergence);
  if (effectFailure) events.push(effectFailure);
  session.writeStep({
    stepId: step,
    parentStepId: session.parentOf(call),
    stateType: call.stateType,
    name: call.stepName,
    start: started,
    end,
    events,
    status: x?.error || call.tool?.error ? 'error' : 'success',
  });
  session.served.recording++;
  session.progress(
    step,
    'served',
    `${call.stateType} ${call.stepName || call.request.url} from recorded step ${call.step}`,
  );
  return { servedFrom: 'recording', step, reply: replied ? {} : ask.kind === 'tool' ? toolReply() : httpReply() };

  /** An in-process tool's recorded result (or error). */
  function toolReply(): ReplayReply {
    const t = call.tool;
    if (t?.error) return { effects: fsEffects, error: t.error, ...drawn };
    let result: unknown = t?.result;
    if (result === undefined && t?.resultBody) {
      const text = bodyBytesOf(recording, t.resultBody)?.toString('utf8');
      const parsed = parseJson(text);
      result = parsed.ok ? parsed.value : text;
    }
    return { effects: fsEffects, result, ...drawn };
  }

  function httpReply(): ReplayReply {
    // A stream the agent itself aborted (e.g. MCP's server-notification GET, closed at the end):
    // re-stream what had arrived and leave it open until the agent aborts it again.
    if (!x) return { effects: fsEffects };
    // (Recorded by the --isolate proxy before it said AbortError: its message, under the code 'Error'.)
    const abortedByAgent =
      response?.chunks !== undefined &&
      (x.error?.code === 'AbortError' || (x.error?.code === 'Error' && x.error.message === CLIENT_LEFT));
    if (x.error && !abortedByAgent) return { effects: fsEffects, error: x.error, ...drawn };
    if (!response) return { effects: fsEffects, error: { code: 'ECONNRESET', message: 'recorded without a response' } };
    return {
      effects: fsEffects,
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
      ...(response.chunks ? { chunks: response.chunks } : { body: recorded && wireBodyOf(recorded) }),
      ...(response.trailers ? { trailers: response.trailers } : {}),
      ...(abortedByAgent ? { open: true } : {}),
      // A stream requested before steps it outlived (issued early) ends, as recorded, once the
      // replay has served the steps before it; ending it at once would make clients reconnect.
      ...(early && !abortedByAgent && response.chunks
        ? { open: true, closeAfterStep: closesAfter(call, session.index.calls) }
        : {}),
      step,
      ...drawn,
    };
  }
}

/** The body as the replay's writer stores these bytes (with their redaction). */
function storedBody(writer: RecordingWriter, body: RecordedBody, contentType: string | undefined): Body {
  if ('bytes' in body) return writer.body(body.bytes, contentType);
  return writer.body(isBinaryType(contentType) ? Buffer.from(body.text, 'utf8') : body.text, contentType);
}

/**
 * The changes the sandbox's triggers saw while a call's recorded effects were applied: those that
 * are the effects stay unmarked, the rest (the agent writing meanwhile) are the agent's own.
 */
function markOwnBesides(seen: DbChangedPayload[], effects: readonly DbChangedPayload[]): DbChangedPayload[] {
  const left = new Map<string, number>();
  const id = (c: DbChangedPayload) => canonicalJson([c.schema, c.table, c.op, c.key]);
  for (const e of effects) left.set(id(e), (left.get(id(e)) ?? 0) + 1);
  return seen.map((change) => {
    const n = left.get(id(change)) ?? 0;
    if (n === 0) return { ...change, own: true };
    left.set(id(change), n - 1);
    return change;
  });
}
