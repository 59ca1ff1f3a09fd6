// Layered matching of live requests against a recording's calls (recorded-calls.ts): exact,
// normalised, structural, and by meaning for imported recordings; repeats in recorded order. A
// miss explains itself: the layers tried, the nearest recorded request and a field diff. The
// steps a replay does not answer as calls: local-steps.ts.

import {
  distance,
  type FieldDiff,
  fieldDiff,
  keysOf,
  type LiveRequest,
  type RequestView,
  viewOf,
} from './normalize.js';
import { conversationDigest, keyDigests, originOf, type RecordedCall } from './recorded-calls.js';

export {
  isFileStep,
  isRpcStep,
  type LocalStepEvent,
  LocalSteps,
  outcomeKey,
  RecordedFileSteps,
  type RpcStep,
  RpcSteps,
  SelfBegunSteps,
} from './local-steps.js';
export {
  bodyBytesOf,
  bodyTextOf,
  indexCalls,
  indexRecording,
  isImported,
  isSafeMethod,
  keyDigests,
  type RecordedCall,
  toolRequest,
} from './recorded-calls.js';

export type MatchLayer = 'exact' | 'normalised' | 'structural' | 'conversation';
/** The layers every recorded call is indexed under. */
export const LAYERS: readonly ('exact' | 'normalised' | 'structural')[] = ['exact', 'normalised', 'structural'];

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
 * The matcher over one recording's calls; it remembers which calls were served. A call once served
 * stays served, so every list it keeps (all calls, each kind, each key's candidates) has a cursor
 * at its first call not yet served: finding the next one never rescans the served ones, and a run
 * of n calls is matched in O(n) instead of O(n²).
 */
export class CallIndex {
  readonly calls: RecordedCall[];
  private readonly used = new Set<number>();
  /**
   * The calls by each layer's key, built at the first match: a replay whose every call the preload
   * answers from its fast index (served by index) never hashes a key.
   */
  private keyed: Record<MatchLayer, Map<string, RecordedCall[]>> | undefined;
  private readonly byKind: Record<'model' | 'tool', RecordedCall[]> = { model: [], tool: [] };
  /** Per list: the position before which every call is served. */
  private readonly cursors = new WeakMap<RecordedCall[], number>();
  /** Per list and filter: how many candidates pass it (for a miss's explanation). */
  private readonly counts = new WeakMap<RecordedCall[], Map<string, number>>();

  /** The calls in the agent's order: all but its telemetry. */
  private readonly ordered: RecordedCall[];
  /** The telemetry calls by method and path. */
  private readonly telemetry = new Map<string, RecordedCall[]>();
  /** The agent's calls by the thread or process that made them (originOf), where the recording says. */
  private readonly byOrigin = new Map<string, RecordedCall[]>();

  constructor(calls: RecordedCall[]) {
    this.calls = calls;
    this.ordered = calls.filter((c) => c.telemetry !== true);
    for (const call of calls) {
      if (call.telemetry) {
        const key = `${call.view.method} ${call.view.path}`;
        const list = this.telemetry.get(key);
        if (list) list.push(call);
        else this.telemetry.set(key, [call]);
      } else {
        this.byKind[call.kind].push(call);
        const origin = originOf(call);
        if (origin === undefined) continue;
        const list = this.byOrigin.get(origin);
        if (list) list.push(call);
        else this.byOrigin.set(origin, [call]);
      }
    }
  }

  private get byKey(): Record<MatchLayer, Map<string, RecordedCall[]>> {
    if (this.keyed) return this.keyed;
    const byKey: Record<MatchLayer, Map<string, RecordedCall[]>> = {
      exact: new Map(),
      normalised: new Map(),
      structural: new Map(),
      conversation: new Map(),
    };
    const add = (layer: MatchLayer, key: string, call: RecordedCall) => {
      const list = byKey[layer].get(key);
      if (list) list.push(call);
      else byKey[layer].set(key, [call]);
    };
    for (const call of this.calls) {
      for (const layer of LAYERS) add(layer, call.keys[layer], call);
      const meaning = call.imported ? conversationDigest(call.view) : undefined;
      if (meaning !== undefined) add('conversation', meaning, call);
    }
    this.keyed = byKey;
    return byKey;
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

  /** The first call not yet served of those one thread or process made (originOf). */
  nextExpectedFrom(origin: string): RecordedCall | undefined {
    const list = this.byOrigin.get(origin);
    return list === undefined ? undefined : this.firstFree(list);
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
