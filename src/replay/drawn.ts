// How many values (clock, random, uuid…) each process of the agent had drawn when each recorded
// call's answer reached it: counted by the recorder as the response's head reached the agent (an
// exchange's `drawn`), else read from the order of events.jsonl: the recorder writes the values a
// process drew before it sends a call's message that ends it (record.mjs `sendExchange`, tool()),
// so the values before a step were drawn before its answer. A replay holds each answer until its
// process has drawn as many (sandbox/preload/replay-nondeterminism.mjs `hold`): branches that run
// concurrently then take their values in the recorded order, whatever the replay's latencies.
import type { Drawn } from '../../sandbox/index.js';
import type { RecordingEvent } from '../recording/index.js';

/** Values drawn by each process (its name, "" for the agent's own), by kind. */
export type DrawnCounts = Drawn['counts'];

/**
 * What each process had drawn when a step started and when it completed, and, when the recorder
 * counted it, what the calling process had drawn when the response head reached it.
 */
export interface DrawnAt {
  started: DrawnCounts;
  completed: DrawnCounts;
  head?: DrawnCounts;
}

/**
 * Each step's counts, by step id. An exchange recorded with `drawn` waits for that (`head`): the
 * count as its head reached the agent, whatever came between the head and the body's end. Without
 * it (recordings made before it; a head held until its message was written, under world capture's
 * barriers) the order says it: the values written inside a step (between its step.started and
 * step.completed) were drawn while its call was open: before a plain answer, which the recorder
 * writes once it has ended, but after a stream's head, which reaches the agent first. So a
 * streamed answer waits for `started`, any other for `completed`. Those counts can be off: values
 * the recorder gave to a stream still open (session.ts `nondeterminism`) come after calls that
 * ended meanwhile, which then wait for fewer; values drawn between a plain answer's head and its
 * body's end (got's timings) count as before it, which the answer then waits for in vain.
 */
export function drawnBySteps(events: readonly RecordingEvent[]): Map<number, DrawnAt> {
  const out = new Map<number, DrawnAt>();
  // Copied on write: steps with no value drawn between them share one object.
  let counts: DrawnCounts = {};
  let shared = false;
  for (const e of events) {
    if (e.type === 'nondeterminism') {
      // A database reply is no value drawn (shared-pg-replies.mjs).
      if (e.payload.values.length === 0 || e.payload.kind === 'dbReply') continue;
      if (shared) {
        counts = Object.fromEntries(Object.entries(counts).map(([name, kinds]) => [name, { ...kinds }]));
        shared = false;
      }
      const kinds = (counts[e.payload.process ?? ''] ??= {});
      kinds[e.payload.kind] = (kinds[e.payload.kind] ?? 0) + e.payload.values.length;
    } else if (e.type === 'step.started') {
      shared = true;
      out.set(e.stepId, { started: counts, completed: counts });
    } else if (e.type === 'http.exchange' && e.payload.drawn !== undefined) {
      const at = out.get(e.stepId);
      if (at !== undefined) at.head = { [e.payload.drawn.process ?? '']: e.payload.drawn.counts };
    } else if (e.type === 'step.completed') {
      const at = out.get(e.stepId);
      if (at === undefined) continue;
      shared = true;
      at.completed = counts;
    }
  }
  return out;
}

/** The wait a recorded call's answer carries: undefined when its process had drawn nothing by then. */
export function drawnFor(at: DrawnAt | undefined, streamed: boolean, withinMs: number): Drawn | undefined {
  const counts = at?.head ?? (streamed ? at?.started : at?.completed);
  if (counts === undefined || Object.values(counts).every((kinds) => Object.keys(kinds).length === 0)) return undefined;
  return { counts, withinMs: Math.max(0, withinMs) };
}

/**
 * Whether a process of the recording got database replies on more than one connection (its
 * `dbReply` values, sandbox/preload/shared-pg-replies.mjs): tasks that waited on the database at
 * once, whose recorded values a replay hands over in their recorded order only with `dbOrder`.
 */
export function concurrentDatabaseWork(events: readonly RecordingEvent[]): boolean {
  const connections = new Map<string, Set<string>>();
  for (const e of events) {
    if (e.type !== 'nondeterminism' || e.payload.kind !== 'dbReply') continue;
    const seen = connections.get(e.payload.process ?? '') ?? new Set<string>();
    connections.set(e.payload.process ?? '', seen);
    for (const value of e.payload.values) {
      seen.add(String(value).replace(/^\+/, '').split(' ')[0] ?? '');
      if (seen.size > 1) return true;
    }
  }
  return false;
}

/**
 * What the agent's own process drew before the run's first step, by kind: a run recorded
 * in-process and replayed by a command that never marks its start passes over these at its first
 * recorded call (sandbox/preload/replay-nondeterminism.mjs `startRun`).
 */
export function drawnBeforeFirstStep(events: readonly RecordingEvent[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of events) {
    if (e.type === 'step.started') break;
    if (e.type !== 'nondeterminism' || e.payload.process !== undefined || e.payload.kind === 'dbReply') continue;
    out[e.payload.kind] = (out[e.payload.kind] ?? 0) + e.payload.values.length;
  }
  return out;
}
