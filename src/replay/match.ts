// The replay index: every recorded HTTP call of a recording, and layered matching of live
// requests against it (exact, normalised, structural; repeats in recorded order). A miss
// explains itself: the layers tried, the nearest recorded request and a field diff.

import { hash } from 'node:crypto';
import { type Drawn, FILE_STEP_NAMES } from '../../sandbox/index.js';
import { providerById } from '../providers/index.js';
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
import { canonicalJson, isTelemetry } from '../recording/index.js';
import { drawnBySteps, drawnFor } from './drawn.js';
import {
  canonical,
  distance,
  type FieldDiff,
  fieldDiff,
  isModelApi,
  keysOf,
  type LiveRequest,
  type RequestKeys,
  type RequestView,
  viewOf,
} from './normalize.js';

export type MatchLayer = 'exact' | 'normalised' | 'structural' | 'conversation';
/** The layers every recorded call is indexed under. */
export const LAYERS: readonly ('exact' | 'normalised' | 'structural')[] = ['exact', 'normalised', 'structural'];

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
    return JSON.parse(t);
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

function conversationDigest(view: RequestView): string | undefined {
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

export interface LayerResult {
  layer: MatchLayer;
  passed: boolean;
  /** Recorded calls with the same key under this layer (used or not). */
  candidates: number;
}

export interface MatchResult {
  call?: RecordedCall;
  layer?: MatchLayer;
  /** The call had been served before and is served again (non-mutating repeats only). */
  reused: boolean;
  layers: LayerResult[];
  /** When nothing matched: the closest recorded request, and how it differs. */
  nearest?: RecordedCall;
  fieldDiff: FieldDiff[];
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

export function bodyBytesOf(recording: Pick<Recording, 'readBlob'>, body: Body | undefined): Buffer | undefined {
  if (!body) return undefined;
  if (body.text !== undefined) return Buffer.from(body.text, 'utf8');
  if (body.base64 !== undefined) return Buffer.from(body.base64, 'base64');
  if (body.blob !== undefined) return recording.readBlob(body.blob);
  return Buffer.alloc(0);
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
          ...(exchange.request.body ? { bodyText: bodyTextOf(recording, exchange.request.body) } : {}),
        }
      : toolRequest(tool?.name ?? '', tool?.args);
    const view = viewOf(request);
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
      keys: keyDigests(keysOf(request, view)),
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

/** The events of a recorded local step (files, pg: run for real in the sandbox) that a replay copies to keep step numbers aligned. */
export type LocalStepEvent = Extract<RecordingEvent, { type: 'step.started' | 'tool.called' | 'step.completed' }>;

/**
 * The recorded local steps: steps without a call in `calls`, by step id, each with its
 * step.started, tool.called and step.completed events. Built once; `between` answers a gap in
 * time proportional to what it returns, not to the length of the recording.
 */
export class LocalSteps {
  private readonly byStep = new Map<number, LocalStepEvent[]>();
  /** Step ids with local events, ascending. */
  private readonly steps: number[];
  /** The file steps among them (isFileStep). */
  private readonly files = new Set<number>();

  constructor(recording: Recording, calls: readonly RecordedCall[]) {
    const isCall = new Set(calls.map((c) => c.step));
    // Requests over a child's stdio are made again by the replay's agent (RpcSteps), and so are the
    // turns of a WebSocket conversation (written as the replay's answerer serves them: websocket.ts).
    for (const e of recording.events) if (isRpcStep(e) || e.type === 'websocket.exchange') isCall.add(e.stepId);
    for (const e of recording.events) {
      if (isCall.has(e.stepId)) continue;
      if (e.type !== 'step.started' && e.type !== 'tool.called' && e.type !== 'step.completed') continue;
      let list = this.byStep.get(e.stepId);
      if (!list) this.byStep.set(e.stepId, (list = []));
      list.push(e);
      if (isFileStep(e)) this.files.add(e.stepId);
    }
    this.steps = [...this.byStep.keys()].sort((a, b) => a - b);
  }

  /**
   * The local steps' events with after < stepId < before, in recorded order; with `files: false`
   * not the file steps (the replay writes the agent's own as they happen).
   */
  between(after: number, before: number, options: { files?: boolean } = {}): LocalStepEvent[] {
    const out: LocalStepEvent[] = [];
    let many = false;
    for (let i = firstAbove(this.steps, after); i < this.steps.length && (this.steps[i] as number) < before; i++) {
      const step = this.steps[i] as number;
      if (options.files === false && this.files.has(step)) continue;
      if (out.length > 0) many = true;
      for (const e of this.byStep.get(step) ?? []) out.push(e);
    }
    // Steps may interleave (parallel local steps): recorded order is seq order.
    return many ? out.sort((a, b) => a.seq - b.seq) : out;
  }
}

/**
 * The recorded steps a replay's agent begins without asking the replayer, ascending: its file
 * reads and writes under the fs root (made steps by sandbox/preload/shared-file-ops.mjs) and its requests over a
 * child's stdio. `until K` counts them: the preload's budget stops the agent before the one past K.
 */
export class SelfBegunSteps {
  private readonly all: number[] = [];
  private readonly files: number[] = [];

  constructor(recording: Recording) {
    for (const e of recording.events) {
      const file = isFileStep(e);
      if (!file && !isRpcStep(e)) continue;
      if (this.all.at(-1) !== e.stepId) this.all.push(e.stepId);
      if (file) this.files.push(e.stepId);
    }
    this.all.sort((a, b) => a - b);
    this.files.sort((a, b) => a - b);
  }

  /** How many lie in (after, upTo]. */
  count(after: number, upTo: number): number {
    return Math.max(0, firstAbove(this.all, upTo) - firstAbove(this.all, after));
  }

  /** The first file step after `after`. */
  nextFile(after: number): number | undefined {
    return this.files[firstAbove(this.files, after)];
  }
}

/** The index of the first element of ascending `list` above `value`. */
function firstAbove(list: readonly number[], value: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as number) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A step the recorder made of a file read or write under the fs root (sandbox/preload/shared-file-ops.mjs): no exchange, the path alone. */
export function isFileStep(e: RecordingEvent): boolean {
  if (e.type !== 'tool.called') return false;
  const p = e.payload;
  const args = p.args;
  return (
    p.kind === 'in-process' &&
    p.exchangeId === undefined &&
    (p.stateType === 'FILE_READ' || p.stateType === 'FILE_WRITE') &&
    FILE_STEP_NAMES.includes(p.name) &&
    args !== null &&
    typeof args === 'object' &&
    Object.keys(args).length === 1 &&
    typeof (args as { path?: unknown }).path === 'string'
  );
}

/** A step's tool call made over a child's stdio (MCP over stdio): kind `mcp`, no exchange. */
export function isRpcStep(e: RecordingEvent): boolean {
  return e.type === 'tool.called' && e.payload.kind === 'mcp' && e.payload.exchangeId === undefined;
}

/** A recorded request over a child's stdio, as a replay's same request takes its step. */
export interface RpcStep {
  step: number;
  parentStepId?: number;
  toolCallId?: string;
  route?: string;
}

/**
 * The recorded requests over a child's stdio (MCP over stdio), in step order. The replay's agent
 * talks to the server again; each of its requests takes the first recorded one not yet taken with
 * the same tool name and (redacted) arguments, whose step number and link it keeps.
 */
export class RpcSteps {
  private readonly steps: Array<RpcStep & { key: string }> = [];
  private readonly taken = new Set<number>();

  constructor(recording: Recording) {
    const started = new Map<number, Extract<RecordingEvent, { type: 'step.started' }>>();
    for (const e of recording.events) {
      if (e.type === 'step.started') started.set(e.stepId, e);
      else if (isRpcStep(e) && e.type === 'tool.called') {
        const head = started.get(e.stepId);
        const parentStepId = e.parentStepId ?? head?.parentStepId;
        this.steps.push({
          step: e.stepId,
          key: rpcKey(e.payload.name, e.payload.args),
          ...(parentStepId === undefined ? {} : { parentStepId }),
          ...(head?.payload.toolCallId === undefined ? {} : { toolCallId: head.payload.toolCallId }),
          ...(head?.payload.route === undefined ? {} : { route: head.payload.route }),
        });
      }
    }
    this.steps.sort((a, b) => a.step - b.step);
  }

  /** The first recorded step not yet taken of this request (its tool call as the recording keeps it: redacted). */
  take(call: Pick<ToolCalledPayload, 'name' | 'args'>): RpcStep | undefined {
    const key = rpcKey(call.name, call.args);
    const found = this.steps.find((s) => !this.taken.has(s.step) && s.key === key);
    if (found !== undefined) this.taken.add(found.step);
    return found;
  }
}

function rpcKey(name: string, args: unknown): string {
  return `${name}\u0000${canonicalJson(args ?? null)}`;
}

/**
 * The matcher over one recording's calls; it remembers which calls were served. A call once served
 * stays served, so every list it keeps (all calls, each kind, each key's candidates) has a cursor
 * at its first call not yet served: finding the next one never rescans the served ones, and a run
 * of n calls is matched in O(n) instead of O(n²).
 */
export class CallIndex {
  readonly calls: RecordedCall[];
  private readonly used = new Set<number>();
  private readonly byKey: Record<MatchLayer, Map<string, RecordedCall[]>> = {
    exact: new Map(),
    normalised: new Map(),
    structural: new Map(),
    conversation: new Map(),
  };
  private readonly byKind: Record<'model' | 'tool', RecordedCall[]> = { model: [], tool: [] };
  /** Per list: the position before which every call is served. */
  private readonly cursors = new WeakMap<RecordedCall[], number>();
  /** Per list and filter: how many candidates pass it (for a miss's explanation). */
  private readonly counts = new WeakMap<RecordedCall[], Map<string, number>>();

  /** The calls in the agent's order: all but its telemetry. */
  private readonly ordered: RecordedCall[];
  /** The telemetry calls by method and path. */
  private readonly telemetry = new Map<string, RecordedCall[]>();

  constructor(calls: RecordedCall[]) {
    this.calls = calls;
    this.ordered = calls.filter((c) => c.telemetry !== true);
    for (const call of calls) {
      if (call.telemetry) {
        const key = `${call.view.method} ${call.view.path}`;
        const list = this.telemetry.get(key);
        if (list) list.push(call);
        else this.telemetry.set(key, [call]);
      } else this.byKind[call.kind].push(call);
      for (const layer of LAYERS) {
        const key = call.keys[layer];
        const list = this.byKey[layer].get(key);
        if (list) list.push(call);
        else this.byKey[layer].set(key, [call]);
      }
      const meaning = call.imported ? conversationDigest(call.view) : undefined;
      if (meaning !== undefined) {
        const list = this.byKey.conversation.get(meaning);
        if (list) list.push(call);
        else this.byKey.conversation.set(meaning, [call]);
      }
    }
  }

  isUsed(call: RecordedCall): boolean {
    return this.used.has(call.index);
  }

  markUsed(call: RecordedCall): void {
    this.used.add(call.index);
  }

  /** The calls not served (telemetry aside: an export the replay did not make is not missed). */
  unused(): RecordedCall[] {
    return this.ordered.filter((c) => !this.used.has(c.index));
  }

  /**
   * The recorded telemetry call that answers a live one to the same method and path, whatever it
   * carries: the first not yet served, else (more exports than recorded) the last, again.
   */
  telemetryFor(live: LiveRequest): { call: RecordedCall; reused: boolean } | undefined {
    const view = viewOf(live);
    const list = this.telemetry.get(`${view.method} ${view.path}`);
    if (list === undefined || list.length === 0) return undefined;
    const free = this.firstFree(list);
    return free ? { call: free, reused: false } : { call: list[list.length - 1] as RecordedCall, reused: true };
  }

  /** The first unused call of `list` (in recorded order) that `accept` takes; moves the list's cursor past served calls. */
  private firstFree(list: RecordedCall[], accept?: (c: RecordedCall) => boolean): RecordedCall | undefined {
    let start = this.cursors.get(list) ?? 0;
    while (start < list.length && this.used.has((list[start] as RecordedCall).index)) start++;
    this.cursors.set(list, start);
    for (let i = start; i < list.length; i++) {
      const c = list[i] as RecordedCall;
      if (!this.used.has(c.index) && (accept === undefined || accept(c))) return c;
    }
    return undefined;
  }

  /** How many calls of `list` pass the filter named `name` (counted once per list). */
  private count(list: RecordedCall[], name: string, accept: (c: RecordedCall) => boolean): number {
    let byName = this.counts.get(list);
    if (!byName) this.counts.set(list, (byName = new Map()));
    let n = byName.get(name);
    if (n === undefined) {
      n = 0;
      for (const c of list) if (accept(c)) n++;
      byName.set(name, n);
    }
    return n;
  }

  /** The first call not yet served, optionally of one kind. */
  nextExpected(kind?: 'model' | 'tool'): RecordedCall | undefined {
    return this.firstFree(kind === undefined ? this.ordered : this.byKind[kind]);
  }

  /**
   * Matches a live request, loosest layer last; among equal candidates the first unused one
   * in recorded order wins. `maxLayer` stops before looser layers (e.g. 'normalised' for a
   * model call that must be identical to be served). Does not mark the call used.
   */
  match(
    live: LiveRequest,
    options: { kind?: 'model' | 'tool'; maxLayer?: MatchLayer; allowReuse?: boolean } = {},
  ): MatchResult {
    const view = viewOf(live);
    const keys = keyDigests(keysOf(live, view));
    const layers: LayerResult[] = [];
    let reusable: { call: RecordedCall; layer: MatchLayer } | undefined;
    const tried: MatchLayer[] = this.byKey.conversation.size > 0 ? [...LAYERS, 'conversation'] : [...LAYERS];
    for (const layer of tried) {
      const key = layer === 'conversation' ? (conversationDigest(view) ?? '') : keys[layer];
      const list = this.byKey[layer].get(key) ?? [];
      // An imported call agrees in structure only by what it was rebuilt from: its layer is the conversation.
      const accept = (c: RecordedCall) =>
        (options.kind === undefined || c.kind === options.kind) && !(layer === 'structural' && c.imported);
      const free = this.firstFree(list, accept);
      const candidates = this.count(list, `${options.kind ?? ''}:${layer === 'structural'}`, accept);
      layers.push({ layer, passed: free !== undefined, candidates });
      if (free) return { call: free, layer, reused: false, layers, fieldDiff: fieldDiff(free.view, view) };
      const again = list.find((c) => accept(c) && !c.mutating);
      if (again && !reusable) reusable = { call: again, layer };
      if (layer === options.maxLayer) break;
    }
    if (options.allowReuse && reusable) {
      return { ...reusable, reused: true, layers, fieldDiff: fieldDiff(reusable.call.view, view) };
    }
    const nearest = this.nearest(view, options.kind);
    return {
      reused: false,
      layers,
      ...(nearest ? { nearest } : {}),
      fieldDiff: nearest ? fieldDiff(nearest.view, view) : [],
    };
  }

  /**
   * The closest recorded request: fewest differing fields, unused first, then recorded order.
   * `as` shows each recorded request as `view` is shown (its system prompt blanked, say).
   */
  nearest(
    view: RequestView,
    kind?: 'model' | 'tool',
    as: (v: RequestView) => RequestView = (v) => v,
  ): RecordedCall | undefined {
    let best: { call: RecordedCall; score: number } | undefined;
    for (const call of this.calls) {
      if (kind !== undefined && call.kind !== kind) continue;
      // Same method and path weigh most; then the number of differing leaves.
      let score = distance(as(call.view), view);
      if (call.view.method !== view.method) score += 1000;
      if (call.view.path !== view.path) score += 100;
      if (this.used.has(call.index)) score += 0.5;
      if (!best || score < best.score) best = { call, score };
    }
    return best?.call;
  }
}

/** A one-paragraph explanation of a miss, for messages and the CLI. */
export function explainMiss(live: LiveRequest, result: MatchResult): string {
  const tried = result.layers
    .map(
      (l) =>
        `${l.layer}: ${l.passed ? 'passed' : l.candidates > 0 ? 'only already-served candidates' : 'no candidate'}`,
    )
    .join('; ');
  const head = `${live.method.toUpperCase()} ${live.url} matches no recorded request (${tried}).`;
  if (!result.nearest) return `${head} The recording has no request to compare with.`;
  const n = result.nearest;
  const fields = result.fieldDiff.length
    ? result.fieldDiff
        .slice(0, 8)
        .map((d) => `${d.path}: expected ${JSON.stringify(d.expected)}, got ${JSON.stringify(d.actual)}`)
        .join('; ')
    : 'no field differs after normalisation (it was already served)';
  return `${head} Nearest recorded request: step ${n.step} ${n.request.method} ${n.request.url}; differing fields: ${fields}.`;
}
