// The built-in predicates, by name, and "all" which reports the earliest violation of any of them.
import { TapedeckError } from '../../recording/index.js';
import type { PredicateInput, PredicateResult, StepPredicate } from '../predicate.js';
import { claims } from './claims.js';
import { contradiction } from './contradiction.js';
import { grounding } from './grounding.js';
import { noRepeat } from './no-repeat.js';

export { checkClaims, claims, stateClaims } from './claims.js';
export { checkContradiction, contradiction } from './contradiction.js';
export { checkGrounding, grounding } from './grounding.js';
export { checkNoRepeat, noRepeat } from './no-repeat.js';

/** The built-in predicates in the order `all` runs them, each with the line `tapedeck bisect --help` prints. */
const BUILTINS = {
  grounding: {
    predicate: grounding,
    help: 'every id an action or a tool-call decision uses was seen before: in a tool result, the input or the task',
  },
  contradiction: {
    predicate: contradiction,
    help: "no action targets an entity whose observed owner, account or amount conflicts with the task's or its own",
  },
  claims: {
    predicate: claims,
    help: 'every state change the agent claims in its text ("I booked BK-7") exists in the world at that step',
  },
  'no-repeat': { predicate: noRepeat, help: 'no action repeats a mutation that already completed' },
} as const satisfies Record<string, { predicate: StepPredicate; help: string }>;

export const BUILTIN_PREDICATES = [...(Object.keys(BUILTINS) as Array<keyof typeof BUILTINS>), 'all'] as const;
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

/** One line per built-in predicate, `all` last, for help texts. */
export function builtinPredicateHelp(): string {
  const width = Math.max(...BUILTIN_PREDICATES.map((n) => n.length));
  return [
    ...Object.entries(BUILTINS).map(([name, b]) => `${name.padEnd(width)}  ${b.help}`),
    `${'all'.padEnd(width)}  any of the above (default when no user predicate is given)`,
  ].join('\n');
}

/** A built-in predicate by name. */
export function builtinPredicate(name: string): StepPredicate {
  if (name === 'all')
    return allOf(
      Object.values(BUILTINS).map((b) => b.predicate),
      'all',
    );
  if (Object.hasOwn(BUILTINS, name)) return BUILTINS[name as keyof typeof BUILTINS].predicate;
  throw new TapedeckError(
    'BISECT_PREDICATE',
    `unknown predicate "${name}": use one of ${BUILTIN_PREDICATES.join(', ')}, or --js FILE, --sql QUERY, --shell CMD`,
  );
}
