// The predicate contract: given the belief and the world at step k, answer good, bad or skip.
import type { Recording } from '../recording/index.js';
import type { Belief } from './belief.js';
import type { World } from './view.js';

export type Verdict = 'good' | 'bad' | 'skip';

export interface PredicateResult {
  verdict: Verdict;
  /** Why: for bad, what is wrong and where. */
  reason?: string;
  /** The step that violates the predicate, when the predicate knows it (prefix predicates do). */
  violationStep?: number;
  /** Structured detail of a bad verdict (for --json): what acted, on what, and the conflicting facts. */
  evidence?: Record<string, unknown>;
}

/** What a predicate sees at step k: the prefix 1..k of the run. */
export interface PredicateInput {
  step: number;
  belief: Belief;
  world: World;
  recording: Recording;
  /** The world at any earlier step (time travel), for predicates that check a claim where it was made. */
  worldAt(step: number): World;
}

export interface StepPredicate {
  name: string;
  evaluate(input: PredicateInput): PredicateResult | Promise<PredicateResult>;
  /** Releases what the predicate holds (a database, a folder); called once when the search ends. */
  close?(): Promise<void>;
}

/** Normalises what a user predicate returns: a verdict string, a boolean (true = good), or a result object. */
export function toResult(value: unknown): PredicateResult | undefined {
  if (value === true) return { verdict: 'good' };
  if (value === false) return { verdict: 'bad' };
  if (value === 'good' || value === 'bad' || value === 'skip') return { verdict: value };
  if (value && typeof value === 'object' && 'verdict' in value) {
    const { verdict, reason } = value as { verdict: unknown; reason?: unknown };
    if (verdict === 'good' || verdict === 'bad' || verdict === 'skip') {
      return typeof reason === 'string' ? { verdict, reason } : { verdict };
    }
  }
  return undefined;
}
