// Where a replay's answers came from: per answer, per step and in total. One home for the names,
// so the replay summary, the ledger, eval and the TUI say the same thing.
import type { SERVED_FROM } from './schema.js';
import type { Recording } from './types.js';

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

export interface AnswerProvenance {
  /** Answers by provenance (HTTP exchanges, and in-process tool calls served from the recording). */
  counts: ProvenanceCounts;
  /** Each step that got an answer: the weakest provenance among its answers. */
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
  const take = (step: number, from: ServedFrom) => {
    counts[from]++;
    steps.set(step, weakerProvenance(steps.get(step) ?? null, from) as ServedFrom);
  };
  for (const e of recording.events) {
    if (e.type !== 'http.exchange') continue;
    exchanges.add(e.payload.exchangeId);
    if (e.payload.servedFrom) take(e.stepId, e.payload.servedFrom);
  }
  // In-process tool() calls served from the recording have no HTTP exchange.
  for (const e of recording.events) {
    if (e.type !== 'tool.called' || e.payload.kind !== 'in-process') continue;
    if (e.payload.exchangeId !== undefined && exchanges.has(e.payload.exchangeId)) continue;
    take(e.stepId, e.payload.error?.code === 'HELD_BACK' ? 'blocked' : 'recording');
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
