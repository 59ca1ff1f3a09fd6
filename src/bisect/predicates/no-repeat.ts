// Built-in predicate "no-repeat": no action repeats a mutation that already completed.

import { canonicalJson } from '../../recording/index.js';
import type { BeliefAction } from '../belief.js';
import type { PredicateInput, PredicateResult, StepPredicate } from '../predicate.js';

/**
 * The first mutating action in the prefix that has the same tool and arguments as an earlier completed
 * one. Steps of one agent action (toolActions: one decided tool call, or nested under a tool step) are
 * not a repeat of each other — an MCP call and the POST its server made for it — unless the same
 * thing was done again within it (the same kind of step on the same route: a tool that sent its POST twice).
 */
export function checkNoRepeat(input: PredicateInput): PredicateResult {
  const done = new Map<string, BeliefAction[]>();
  for (const action of input.belief.actions) {
    if (!action.mutating) continue;
    const key = `${action.name} ${canonicalJson(action.args)}`;
    const earlier = (done.get(key) ?? []).find((e) => e.action !== action.action || sameKind(e, action));
    if (earlier !== undefined) {
      return {
        verdict: 'bad',
        violationStep: action.step,
        reason: `step ${action.step} (${action.stateType} ${action.name}) repeats the mutation that already completed at step ${earlier.step} with the same arguments ${truncate(canonicalJson(action.args))}`,
      };
    }
    if (action.completed) done.set(key, [...(done.get(key) ?? []), action]);
  }
  return { verdict: 'good' };
}

/** Carried out the same way: the same kind of step through the same route. */
function sameKind(a: BeliefAction, b: BeliefAction): boolean {
  return a.stateType === b.stateType && a.route === b.route;
}

function truncate(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export const noRepeat: StepPredicate = { name: 'no-repeat', evaluate: checkNoRepeat };
