// Built-in predicate "contradiction": no action that changes the world targets an entity whose own
// observed attributes conflict with the task or with earlier observations — the order refunded
// belongs to another customer than the user, the booking is for another passenger, the amount is
// more than the order's total or over the user's budget. Ids can all be grounded (the user typed
// "#7713") and the step still be wrong: this is the belief-vs-world check grounding cannot make.
import { findContradiction, looksMutating, usedValues } from '../../facts/index.js';
import { jsonOrText, linkToolSteps, type Recording, type ToolLink } from '../../recording/index.js';
import { entitiesOfBelief, seenBy } from '../belief.js';
import type { PredicateInput, PredicateResult, StepPredicate } from '../predicate.js';

const links = new WeakMap<Recording, Map<number, ToolLink>>();

function linksOf(recording: Recording): Map<number, ToolLink> {
  let l = links.get(recording);
  if (l === undefined) links.set(recording, (l = linkToolSteps(recording.events)));
  return l;
}

/** The steps of the whole recording that mutate, by the decided call (think step + call id) they carry out. */
function mutatingCalls(recording: Recording): Set<string> {
  const mutating = new Set<string>();
  const stepsMutating = new Set<number>();
  for (const e of recording.events) if (e.type === 'tool.called' && e.payload.mutating) stepsMutating.add(e.stepId);
  for (const [step, link] of linksOf(recording))
    if (stepsMutating.has(step)) mutating.add(`${link.thinkStepId} ${link.callId}`);
  return mutating;
}

const mutatingOf = new WeakMap<Recording, Set<string>>();

export function checkContradiction(input: PredicateInput): PredicateResult {
  const { belief, recording } = input;
  let mutating = mutatingOf.get(recording);
  if (mutating === undefined) mutatingOf.set(recording, (mutating = mutatingCalls(recording)));
  const executed = new Set([...linksOf(recording).values()].map((l) => `${l.thinkStepId} ${l.callId}`));
  const uses = [
    // A decided call mutates when the step that carried it out did, or (not carried out) when its name says so.
    ...belief.decisions.flatMap((d) =>
      d.toolCalls
        .filter((c) => {
          const key = `${d.step} ${c.id}`;
          return mutating.has(key) || (!executed.has(key) && looksMutating(c.name));
        })
        .map((c) => ({ step: d.step, what: `THINK decided ${c.name}`, args: jsonOrText(c.arguments), own: true })),
    ),
    ...belief.actions
      .filter((a) => a.mutating)
      .map((a) => ({ step: a.step, what: `${a.stateType} ${a.name}`, args: a.args, own: false })),
  ].sort((x, y) => x.step - y.step);
  if (uses.length === 0) return { verdict: 'good' };
  const entities = entitiesOfBelief(belief);
  const task = belief.task.join('\n');
  for (const use of uses) {
    const found = findContradiction(
      { step: use.step, what: use.what, args: use.args, bound: seenBy(use.step, use.own) },
      entities,
      task,
      usedValues,
    );
    if (found === undefined) continue;
    return {
      verdict: 'bad',
      violationStep: use.step,
      reason: found.message,
      evidence: {
        action: found.action,
        step: found.step,
        ...(found.entity ? { entity: found.entity } : {}),
        attribute: found.attribute,
        fact: found.fact,
      },
    };
  }
  return { verdict: 'good' };
}

export const contradiction: StepPredicate = { name: 'contradiction', evaluate: checkContradiction };
