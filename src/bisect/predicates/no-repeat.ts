// Built-in predicate "no-repeat": no action repeats a mutation that already completed.

import { canonicalJson } from '../../recording/index.js';
import type { PredicateInput, PredicateResult, StepPredicate } from '../predicate.js';

/** The first mutating action in the prefix that has the same tool and arguments as an earlier completed one. */
export function checkNoRepeat(input: PredicateInput): PredicateResult {
  const done = new Map<string, number>();
  for (const action of input.belief.actions) {
    if (!action.mutating) continue;
    const key = `${action.name} ${canonicalJson(action.args)}`;
    const earlier = done.get(key);
    if (earlier !== undefined) {
      return {
        verdict: 'bad',
        violationStep: action.step,
        reason: `step ${action.step} (${action.stateType} ${action.name}) repeats the mutation that already completed at step ${earlier} with the same arguments ${truncate(canonicalJson(action.args))}`,
      };
    }
    if (action.completed) done.set(key, action.step);
  }
  return { verdict: 'good' };
}

function truncate(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export const noRepeat: StepPredicate = { name: 'no-repeat', evaluate: checkNoRepeat };
