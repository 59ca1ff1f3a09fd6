// Built-in predicate "grounding": every id/value an action uses was observed or given before it.
import type { BeliefAction, Observation } from '../belief.js';
import type { PredicateInput, PredicateResult, StepPredicate } from '../predicate.js';
import { mentions, usedValues } from './values.js';

/** The first action in the prefix whose identifier-like argument no earlier observation or input mentions. */
export function checkGrounding(input: PredicateInput): PredicateResult {
  const { belief } = input;
  for (const action of belief.actions) {
    const seen = seenBefore(belief.observations, action);
    for (const used of usedValues(action.args)) {
      if (seen.some((text) => mentions(text, used.value))) continue;
      return {
        verdict: 'bad',
        violationStep: action.step,
        reason: `step ${action.step} (${action.stateType} ${action.name}) uses ${JSON.stringify(used.value)} at ${used.path}, which no tool result, input or task text before it mentions`,
      };
    }
  }
  return { verdict: 'good' };
}

function seenBefore(observations: Observation[], action: BeliefAction): string[] {
  // The agent can only ground on what it saw before acting: inputs, earlier results, the context of the deciding call.
  return observations.filter((o) => o.step < action.step).map((o) => o.text);
}

export const grounding: StepPredicate = { name: 'grounding', evaluate: checkGrounding };
