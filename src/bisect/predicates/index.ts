// The built-in predicates, by name, and "all" which reports the earliest violation of any of them.
import { TapedeckError } from '../../recording/index.js';
import type { PredicateInput, PredicateResult, StepPredicate } from '../predicate.js';
import { claims } from './claims.js';
import { contradiction } from './contradiction.js';
import { grounding } from './grounding.js';
import { noRepeat } from './no-repeat.js';

export { changedTexts, checkClaims, claims, stateClaims } from './claims.js';
export { checkContradiction, contradiction } from './contradiction.js';
export { checkGrounding, grounding } from './grounding.js';
export { checkNoRepeat, noRepeat } from './no-repeat.js';

export const BUILTIN_PREDICATES = ['grounding', 'contradiction', 'claims', 'no-repeat', 'all'] as const;
export type BuiltinPredicateName = (typeof BUILTIN_PREDICATES)[number];

/** Combines predicates: bad when any is bad, the earliest violation wins; skip only if none is bad and one skips. */
export function allOf(predicates: StepPredicate[], name = predicates.map((p) => p.name).join('+')): StepPredicate {
  return {
    name,
    async evaluate(input: PredicateInput): Promise<PredicateResult> {
      const results = await Promise.all(predicates.map(async (p) => ({ p, r: await p.evaluate(input) })));
      const bad = results
        .filter(({ r }) => r.verdict === 'bad')
        .sort((x, y) => (x.r.violationStep ?? input.step) - (y.r.violationStep ?? input.step));
      const first = bad[0];
      if (first) {
        const result: PredicateResult = { verdict: 'bad', reason: `[${first.p.name}] ${first.r.reason ?? 'bad'}` };
        if (first.r.violationStep !== undefined) result.violationStep = first.r.violationStep;
        if (first.r.evidence !== undefined) result.evidence = { predicate: first.p.name, ...first.r.evidence };
        return result;
      }
      if (results.some(({ r }) => r.verdict === 'skip')) return { verdict: 'skip' };
      return { verdict: 'good' };
    },
    async close() {
      for (const p of predicates) await p.close?.();
    },
  };
}

/** A built-in predicate by name. */
export function builtinPredicate(name: string): StepPredicate {
  switch (name) {
    case 'grounding':
      return grounding;
    case 'claims':
      return claims;
    case 'no-repeat':
      return noRepeat;
    case 'contradiction':
      return contradiction;
    case 'all':
      return allOf([grounding, contradiction, claims, noRepeat], 'all');
    default:
      throw new TapedeckError(
        'BISECT_PREDICATE',
        `unknown predicate "${name}": use one of ${BUILTIN_PREDICATES.join(', ')}, or --js FILE, --sql QUERY, --shell CMD`,
      );
  }
}
