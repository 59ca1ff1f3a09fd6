// Built-in predicate "grounding": every id/value an action uses was observed or given before it
// (by id core: case, punctuation, a missing prefix and a leading # folded).

import { usedValues } from '../../facts/index.js';
import { jsonOrText } from '../../recording/index.js';
import { factsOfBelief, seenBy } from '../belief.js';
import type { PredicateInput, PredicateResult, StepPredicate } from '../predicate.js';

interface Used {
  step: number;
  what: string;
  args: unknown;
  /** Model decisions may ground on the context of their own call; tool steps on what came before. */
  ownContext: boolean;
}

/**
 * The first decision or action in the prefix whose identifier-like argument nothing the agent saw
 * before mentions. A model step that decides a tool call with an invented id is the divergence;
 * the tool step that executes it is the world meeting that belief.
 */
export function checkGrounding(input: PredicateInput): PredicateResult {
  const { belief } = input;
  const uses: Used[] = [
    ...belief.decisions.flatMap((d) =>
      d.toolCalls.map((c) => ({
        step: d.step,
        what: `THINK decided ${c.name}`,
        args: jsonOrText(c.arguments),
        ownContext: true,
      })),
    ),
    ...belief.actions.map((a) => ({ step: a.step, what: `${a.stateType} ${a.name}`, args: a.args, ownContext: false })),
  ].sort((x, y) => x.step - y.step);
  const facts = factsOfBelief(belief);
  for (const use of uses) {
    const bound = seenBy(use.step, use.ownContext);
    for (const used of usedValues(use.args)) {
      // By id core: "#7713" in the task grounds O-7713; o7713 and O 7713 are O-7713.
      if (facts.groundId(used.value, bound) !== undefined) continue;
      return {
        verdict: 'bad',
        violationStep: use.step,
        reason: `step ${use.step} (${use.what}) uses ${JSON.stringify(used.value)} at ${used.path}, which no tool result, input or task text before it mentions`,
      };
    }
  }
  return { verdict: 'good' };
}

export const grounding: StepPredicate = { name: 'grounding', evaluate: checkGrounding };
