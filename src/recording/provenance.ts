// Where a replay's answers came from: per answer, per step (stepServedFrom) and in total. One home
// for the names and the rule, so the replay summary, the ledger, eval and the TUI say the same thing.
import type { SERVED_FROM } from './schema.js';
import type { Recording, RecordingEvent, ToolCalledPayload } from './types.js';

export type ServedFrom = (typeof SERVED_FROM)[number];

/** The words users read for each provenance. */
export const PROVENANCE_LABELS: Record<ServedFrom, string> = {
  recording: 'recorded',
  sandbox: 'sandbox',
  mock: 'mock',
  simulated: 'simulated',
  live: 'live',
  blocked: 'held back',
};

/** Short marks for narrow columns (the TUI's side by side). */
export const PROVENANCE_MARKS: Record<ServedFrom, string> = {
  recording: 'rec',
  sandbox: 'sbx',
  mock: 'mock',
  simulated: 'sim',
  live: 'live',
  blocked: 'held',
};

/** Strongest first: an outcome is only as sound as the weakest answer it rests on. */
const STRENGTH: readonly ServedFrom[] = ['recording', 'live', 'sandbox', 'mock', 'simulated', 'blocked'];

/** The weaker of two provenances (null stands for "no answer here"). */
export function weakerProvenance(a: ServedFrom | null, b: ServedFrom | null): ServedFrom | null {
  if (a === null) return b;
  if (b === null) return a;
  return STRENGTH.indexOf(a) >= STRENGTH.indexOf(b) ? a : b;
}

export type ProvenanceCounts = Record<ServedFrom, number>;

export const emptyProvenanceCounts = (): ProvenanceCounts => ({
  recording: 0,
  sandbox: 0,
  mock: 0,
  simulated: 0,
  live: 0,
  blocked: 0,
});

/** A step that went live anywhere counts as live (it cost money); else the weaker of the two. */
export function mergeServed(a: ServedFrom | null, b: ServedFrom | null): ServedFrom | null {
  if (a === 'live' || b === 'live') return 'live';
  return weakerProvenance(a, b);
}

/** Where a replay's exchange (HTTP, or a WebSocket turn) was answered, by its id; null: unknown or unsaid. */
export type ExchangeServed = (exchangeId: string) => ServedFrom | null;

/** The provenance of every exchange of a recording, by id (HTTP exchanges and WebSocket turns). */
export function exchangesServed(events: Iterable<RecordingEvent>): ExchangeServed {
  const served = new Map<string, ServedFrom>();
  for (const e of events) {
    if ((e.type === 'http.exchange' || e.type === 'websocket.exchange') && e.payload.servedFrom)
      served.set(e.payload.exchangeId, e.payload.servedFrom);
  }
  return (id) => served.get(id) ?? null;
}

/**
 * Where a replay answered a tool call no exchange answered: held back (its error HELD_BACK), the
 * sandbox (a file step or an MCP-over-stdio answer the recording did not hold, so marked by the replay), else the recording
 * (an in-process tool() call or a file step it held, a local step it copied).
 */
export function toolServedFrom(call: ToolCalledPayload): ServedFrom {
  if (call.error?.code === 'HELD_BACK') return 'blocked';
  return call.servedFrom ?? 'recording';
}

/**
 * Where a replay answered a tool call: its exchange's provenance (HTTP or WebSocket, `servedOf`),
 * else toolServedFrom's.
 */
export function callServedFrom(call: ToolCalledPayload, servedOf: ExchangeServed): ServedFrom {
  const exchange = call.exchangeId === undefined ? null : servedOf(call.exchangeId);
  return exchange ?? toolServedFrom(call);
}

/**
 * Whether an answer means the call never went out: held back (`blocked`). The one rule for "was
 * this request sent": eval's executions and request expectations read it through the state diff.
 */
export function isHeldBack(from: ServedFrom | null | undefined): boolean {
  return from === 'blocked';
}

/**
 * Where a replay's step was served from, given its events: each answer is its exchange's
 * `servedFrom` (a call's exchange found by id through `servedOf`, wherever it was written), a tool
 * call no exchange answered is toolServedFrom's; the step is live if any answer went live (it cost
 * money), else its weakest answer. A step whose model calls say nothing went live; null: nothing
 * was answered. For a replay only: an original recording's steps were answered by no one.
 */
export function stepServedFrom(events: Iterable<RecordingEvent>, servedOf: ExchangeServed): ServedFrom | null {
  let from: ServedFrom | null = null;
  let hasModel = false;
  for (const e of events) {
    switch (e.type) {
      case 'http.exchange':
      case 'websocket.exchange':
        from = mergeServed(from, e.payload.servedFrom ?? null);
        break;
      case 'model.called':
        hasModel = true;
        if (e.payload.exchangeId !== undefined) from = mergeServed(from, servedOf(e.payload.exchangeId));
        break;
      case 'tool.called':
        from = mergeServed(from, callServedFrom(e.payload, servedOf));
        break;
      default:
        break;
    }
  }
  return from ?? (hasModel ? 'live' : null);
}

export interface AnswerProvenance {
  /** Answers by provenance (HTTP exchanges, and in-process tool calls no exchange answered). */
  counts: ProvenanceCounts;
  /** Each step that got an answer: stepServedFrom. */
  steps: Map<number, ServedFrom>;
}

/**
 * The provenance of a replay's answers. An original recording (not a replay) answers nothing
 * from anywhere: empty counts and steps.
 */
export function answerProvenance(recording: Recording): AnswerProvenance {
  const counts = emptyProvenanceCounts();
  const steps = new Map<number, ServedFrom>();
  if (recording.manifest.replayOf === undefined) return { counts, steps };
  const exchanges = new Set<string>();
  const eventsOf = new Map<number, RecordingEvent[]>();
  for (const e of recording.events) {
    if (e.type === 'http.exchange') {
      exchanges.add(e.payload.exchangeId);
      if (e.payload.servedFrom) counts[e.payload.servedFrom]++;
    }
    if (e.stepId === 0) continue;
    const list = eventsOf.get(e.stepId);
    if (list) list.push(e);
    else eventsOf.set(e.stepId, [e]);
  }
  // In-process tool() calls and file steps have no HTTP exchange.
  for (const e of recording.events) {
    if (e.type !== 'tool.called' || e.payload.kind !== 'in-process') continue;
    if (e.payload.exchangeId !== undefined && exchanges.has(e.payload.exchangeId)) continue;
    counts[toolServedFrom(e.payload)]++;
  }
  const servedOf = exchangesServed(recording.events);
  for (const [step, events] of eventsOf) {
    const from = stepServedFrom(events, servedOf);
    if (from !== null) steps.set(step, from);
  }
  return { counts, steps };
}

/**
 * What an outcome rests on, in words: "5 recorded, 2 sandbox, 2 simulated, 1 held back". Empty
 * when nothing was answered.
 */
export function describeProvenance(counts: ProvenanceCounts): string {
  return STRENGTH.filter((k) => counts[k] > 0)
    .map((k) => `${counts[k]} ${PROVENANCE_LABELS[k]}`)
    .join(', ');
}

/** Answers an outcome cannot stand on for `eval --strict`: made up by a model, or never given. */
export function unsoundAnswers(counts: ProvenanceCounts): { simulated: number; heldBack: number } {
  return { simulated: counts.simulated, heldBack: counts.blocked };
}
