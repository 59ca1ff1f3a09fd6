// The recorded calls of a recording, as a replay serves them: one per step with an HTTP exchange (and
// one per in-process tool step), each with its request's view and match-key digests, its effects
// and the values drawn when its answer came; a model request's meaning for imported recordings.
import { hash } from 'node:crypto';
import type { Drawn } from '../../sandbox/index.js';
import { type WireBody, wireOf, wireOfText } from '../../sandbox/protocol.js';
import { providerById } from '../providers/index.js';
import { isWellFormedText } from '../recording/body.js';
import type {
  Body,
  DbChangedPayload,
  FsChangedPayload,
  HttpExchangePayload,
  ModelCalledPayload,
  Recording,
  RecordingEvent,
  StateType,
  ToolCalledPayload,
} from '../recording/index.js';
import { isTelemetry, parseUntrusted } from '../recording/index.js';
import { drawnBySteps, drawnFor } from './drawn.js';
import {
  bytesForMatching,
  canonical,
  isModelApi,
  keysOf,
  type LiveRequest,
  type RequestKeys,
  type RequestView,
  viewOf,
} from './normalize.js';

/**
 * A recording imported from traces (tag `imported:<format>`, e.g. OTLP spans) holds model requests
 * rebuilt from what the spans say, not the bytes the agent's SDK sent: its model calls are also
 * matched by meaning (roles, texts, tool calls and results; see conversationKey), after the
 * other layers. Recorded runs never are.
 */
export function isImported(recording: Pick<Recording, 'manifest'>): boolean {
  return recording.manifest.tags?.some((t) => t.startsWith('imported:')) ?? false;
}

/** JSON text parsed when it is JSON: arguments and results compare by value, not by spelling. */
function parsedValue(text: string): unknown {
  const t = text.trim();
  if (t[0] !== '{' && t[0] !== '[') return text;
  try {
    return parseUntrusted(t);
  } catch {
    return text;
  }
}

/**
 * What a model request says, as the providers read it: the model and the turns (roles, texts, tool
 * calls with their arguments, tool results), ids and spelling left out.
 */
function conversationKey(view: RequestView): string | undefined {
  const provider = providerById(view.api);
  const body = view.body;
  if (!provider || body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const json = body as Record<string, unknown>;
  const input = provider.readInput(json, {
    method: view.method,
    url: new URL(`http://request${view.path}`),
    headers: {},
    json,
  });
  const turns = provider.turns({
    provider: provider.provider,
    api: provider.api,
    messages: input.messages,
    ...(input.system !== undefined ? { system: input.system } : {}),
    ...(input.tools !== undefined ? { tools: input.tools } : {}),
  });
  const meaning = turns
    .map((t) => ({
      role: t.role,
      parts: t.parts.flatMap((p): unknown[] => {
        if (p.kind === 'text') return p.text === '' ? [] : [{ text: p.text }];
        if (p.kind === 'tool-call') return [{ call: p.name, args: parsedValue(p.arguments) }];
        if (p.kind === 'tool-result') return [{ result: parsedValue(p.text) }];
        return [{ media: p.text }];
      }),
    }))
    .filter((t) => t.parts.length > 0);
  return canonical({ api: view.api, model: input.model, turns: meaning });
}

export function conversationDigest(view: RequestView): string | undefined {
  const key = conversationKey(view);
  return key === undefined ? undefined : hash('sha256', key, 'base64url');
}

/** One recorded HTTP call (a model call or a tool call) with everything needed to serve it. */
export interface RecordedCall {
  /** Position among the recording's calls, in recorded order. */
  index: number;
  step: number;
  parentStepId?: number;
  stateType: StateType;
  stepName: string;
  kind: 'model' | 'tool';
  /** The agent's telemetry (isTelemetry): answered whatever it carries, in no order, never missed. */
  telemetry?: true;
  /** The recorded HTTP exchange; absent for an in-process tool() call. */
  exchange?: HttpExchangePayload;
  model?: ModelCalledPayload;
  tool?: ToolCalledPayload;
  request: LiveRequest;
  view: RequestView;
  /** Digests of the request's match keys (keyDigests): the keys spell the body out several times over. */
  keys: RequestKeys;
  mutating: boolean;
  effects: { fs: FsChangedPayload[]; db: DbChangedPayload[] };
  stepLatencyMs: number;
  /** Rebuilt from traces (an imported recording): also matched by meaning. */
  imported?: boolean;
  /** The values its process had drawn when the recorded answer reached it (drawn.ts). */
  drawn?: Drawn;
}

/**
 * The match keys as sha256 digests: what the index looks calls up by. The keys themselves hold
 * the request's method, URL and body, canonical JSON of its view and of its structure: three
 * copies of every body, most of a long recording's index (230 MB of 310 at 100k steps).
 */
export function keyDigests(keys: RequestKeys): RequestKeys {
  return {
    exact: hash('sha256', keys.exact, 'base64url'),
    normalised: hash('sha256', keys.normalised, 'base64url'),
    structural: hash('sha256', keys.structural, 'base64url'),
  };
}

/** Resolves a body ref to text (inline text, inline base64, or a blob of the recording). */
export function bodyTextOf(recording: Pick<Recording, 'readBlob'>, body: Body | undefined): string | undefined {
  // Inline text is the text itself, not a copy through bytes (a recording's index holds every body).
  if (body?.text !== undefined) return body.text;
  return bodyBytesOf(recording, body)?.toString('utf8');
}

/** A recorded request's body as matching compares it: a body kept as bytes with its masks read as redactLive reads them. */
function requestBodyText(recording: Pick<Recording, 'readBlob'>, body: Body): string | undefined {
  if (body.text !== undefined) return body.text;
  const bytes = bodyBytesOf(recording, body);
  return bytes === undefined ? undefined : bytesForMatching(bytes);
}

export function bodyBytesOf(recording: Pick<Recording, 'readBlob'>, body: Body | undefined): Buffer | undefined {
  if (!body) return undefined;
  if (body.text !== undefined) return Buffer.from(body.text, 'utf8');
  if (body.base64 !== undefined) return Buffer.from(body.base64, 'base64');
  if (body.blob !== undefined) return recording.readBlob(body.blob);
  return Buffer.alloc(0);
}

/**
 * A recorded body as its text when its bytes decode back to it (no lone surrogate), else as its
 * bytes: a step and a reply take the text as it is, without a round trip through bytes that would
 * only give it back.
 */
export type RecordedBody = { text: string } | { bytes: Buffer };

export function recordedBody(recording: Pick<Recording, 'readBlob'>, body: Body): RecordedBody {
  if (body.text !== undefined && isWellFormedText(body.text)) return { text: body.text };
  return { bytes: bodyBytesOf(recording, body) ?? Buffer.alloc(0) };
}

/** A recorded body as the preload takes it (the fast index's entries, a served reply). */
export function wireBodyOf(body: RecordedBody): WireBody | undefined {
  return 'bytes' in body ? wireOf(body.bytes) : wireOfText(body.text);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** GET, HEAD and OPTIONS read; every other method may change the world. */
export function isSafeMethod(method: string): boolean {
  return SAFE_METHODS.has(method.toUpperCase());
}

/** The request an in-process tool() call is matched as: its name and canonical arguments. */
export function toolRequest(name: string, args: unknown): LiveRequest {
  return { method: 'TOOL', url: `tool:${name}`, headers: {}, bodyText: canonical(args ?? null) };
}

/**
 * Builds the list of recorded calls: one per step that has an http.exchange, or with
 * `inProcess`, one per in-process tool step (served to the preload's tool() hook by name and arguments).
 */
export function indexRecording(recording: Recording, options: { inProcess?: boolean } = {}): RecordedCall[] {
  const lists = indexCalls(recording);
  return options.inProcess ? lists.inProcess : lists.http;
}

/**
 * Both lists of recorded calls in one pass over the events (what a replay needs): the HTTP calls
 * and the in-process tool calls, each numbered from 0.
 */
export function indexCalls(recording: Recording): { http: RecordedCall[]; inProcess: RecordedCall[] } {
  const byStep = new Map<number, RecordingEvent[]>();
  for (const e of recording.events) {
    if (e.stepId === 0) continue;
    let list = byStep.get(e.stepId);
    if (!list) byStep.set(e.stepId, (list = []));
    list.push(e);
  }
  const http: RecordedCall[] = [];
  const inProcess: RecordedCall[] = [];
  const imported = isImported(recording);
  const drawnAt = drawnBySteps(recording.events);
  for (const [step, events] of [...byStep.entries()].sort((a, b) => a[0] - b[0])) {
    let stateType: StateType = 'API_CALL';
    let stepName = '';
    let parentStepId: number | undefined;
    let model: ModelCalledPayload | undefined;
    let tool: ToolCalledPayload | undefined;
    let stepLatencyMs = 0;
    const exchanges: HttpExchangePayload[] = [];
    const fs: FsChangedPayload[] = [];
    const db: DbChangedPayload[] = [];
    for (const e of events) {
      if (e.parentStepId !== undefined) parentStepId ??= e.parentStepId;
      switch (e.type) {
        case 'step.started':
          stateType = e.payload.stateType;
          stepName = e.payload.name;
          break;
        case 'model.called':
          model = e.payload;
          break;
        case 'tool.called':
          tool = e.payload;
          break;
        case 'http.exchange':
          exchanges.push(e.payload);
          break;
        case 'fs.changed':
          fs.push(e.payload);
          break;
        case 'db.changed':
          db.push(e.payload);
          break;
        case 'step.completed':
          stepLatencyMs = e.payload.latencyMs;
          break;
        default:
          break;
      }
    }
    const exchange =
      exchanges.find((x) => x.exchangeId === (model?.exchangeId ?? tool?.exchangeId)) ??
      exchanges[exchanges.length - 1];
    // Local steps (files, pg) run for real in the sandbox; in-process tool() calls are served by name and arguments.
    const calls = exchange ? http : tool?.kind === 'in-process' ? inProcess : undefined;
    if (calls === undefined) continue;
    const request: LiveRequest = exchange
      ? {
          method: exchange.request.method.toUpperCase(),
          url: exchange.request.url,
          headers: exchange.request.headers,
          ...(exchange.request.body ? { bodyText: requestBodyText(recording, exchange.request.body) } : {}),
        }
      : toolRequest(tool?.name ?? '', tool?.args);
    const view = viewOf(request);
    let keys: RequestKeys | undefined;
    const kind = model || (!tool && isModelApi(view.api)) ? 'model' : 'tool';
    const telemetry = exchange !== undefined && kind === 'tool' && isTelemetry(request);
    const streamed = exchange?.response?.chunks !== undefined;
    // Telemetry is answered whatever it carries and whenever it comes: it waits for nothing.
    const drawn = telemetry
      ? undefined
      : drawnFor(
          drawnAt.get(step),
          streamed,
          exchange
            ? streamed
              ? (exchange.ttfbMs ?? exchange.durationMs)
              : exchange.durationMs
            : (tool?.latencyMs ?? 0),
        );
    calls.push({
      index: calls.length,
      step,
      ...(parentStepId !== undefined ? { parentStepId } : {}),
      stateType,
      stepName,
      kind,
      ...(exchange ? { exchange } : {}),
      ...(model ? { model } : {}),
      ...(tool ? { tool } : {}),
      request,
      view,
      // Hashed when the index first matches by key (CallIndex.byKey), not for every replay.
      get keys() {
        keys ??= keyDigests(keysOf(request, view));
        return keys;
      },
      mutating: tool ? tool.mutating : kind === 'tool' && !isSafeMethod(request.method),
      effects: { fs, db },
      stepLatencyMs: stepLatencyMs || exchange?.durationMs || tool?.latencyMs || 0,
      ...(imported && kind === 'model' ? { imported: true } : {}),
      ...(telemetry ? { telemetry: true as const } : {}),
      ...(drawn ? { drawn } : {}),
    });
  }
  return { http, inProcess };
}

/**
 * The thread or process that made a recorded call (its process name, "" for the agent's own main
 * thread), when the recorder said (the exchange's `drawn`); undefined when it did not.
 */
export function originOf(call: RecordedCall): string | undefined {
  const drawn = call.exchange?.drawn;
  return drawn === undefined ? undefined : (drawn.process ?? '');
}

/**
 * Steps are numbered by completion, so a call issued before `next` but completed after it (a
 * long-lived stream, such as the MCP server-notification GET) has a later step than its place in
 * request order: requested now, it is in order.
 */
export function issuedEarly(call: RecordedCall, next: RecordedCall): boolean {
  if (!call.exchange || !next.exchange) return false;
  if (call.step <= next.step) return false;
  // In flight together when recorded: `call` was sent before `next` was answered, so the agent did
  // not wait for `next`'s answer to send it — the two may arrive in either order (a set, not a list).
  const nextStart = Date.parse(next.exchange.startedAt);
  return Date.parse(call.exchange.startedAt) <= nextStart + next.exchange.durationMs;
}

/**
 * The step after which a stream issued early ends in the replay: the step before its own, or,
 * when requests were already on their way as the server ended the stream (an MCP session DELETE
 * that made the server close its notification stream), the last of those — the stream then
 * ends once their answers are on their way, as it did, and not while they are still being
 * answered (a client that sees its stream end with nothing else pending reconnects).
 * Only a request sent a whole millisecond before the stream ended counts (recorded start times
 * are whole milliseconds), so a request sent because the stream ended is never waited for.
 */
export function closesAfter(call: RecordedCall, calls: readonly RecordedCall[]): number {
  let after = call.step - 1;
  const x = call.exchange;
  if (!x) return after;
  const ended = Date.parse(x.startedAt) + x.durationMs;
  for (const c of calls) {
    if (c.step <= call.step || !c.exchange || c.step <= after) continue;
    if (Date.parse(c.exchange.startedAt) + 1 <= ended) after = c.step;
  }
  return after;
}
