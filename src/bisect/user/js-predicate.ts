// A JS/TS predicate module: `export default (belief, world, step, ctx) => 'good' | 'bad' | 'skip' | boolean`.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { importUserModule } from '../../config/index.js';
import { rowFacts, TapedeckError } from '../../recording/index.js';
import type { Belief } from '../belief.js';
import { type PredicateInput, type PredicateResult, type StepPredicate, toResult } from '../predicate.js';
import type { World } from '../view.js';

/** The signature a predicate module's default export has. */
export type UserPredicateFn = (belief: Belief, world: World, step: number, context: PredicateInput) => unknown;

/**
 * The world as a predicate reads it: a json/jsonb value held as its text (a recording of today,
 * `values: 'text'`) parsed, as a recording made before held it (`rowFacts`), so a predicate reads
 * `row.data.note` whichever tapedeck recorded the run.
 */
function parsedWorld(world: World): World {
  if (world.db === undefined) return world;
  return {
    ...world,
    db: {
      ...world.db,
      tables: world.db.tables.map((t) => ({ ...t, rows: t.rows.map((row) => rowFacts(t, row, world.db?.domains)) })),
    },
  };
}

/** Wraps a function as a predicate, checking what it returns. */
export function functionPredicate(fn: UserPredicateFn, name: string): StepPredicate {
  return {
    name,
    async evaluate(input: PredicateInput): Promise<PredicateResult> {
      const world = parsedWorld(input.world);
      const context: PredicateInput = { ...input, world, worldAt: (step) => parsedWorld(input.worldAt(step)) };
      const value = await fn(input.belief, world, input.step, context);
      const result = toResult(value);
      if (!result) {
        throw new TapedeckError(
          'BISECT_PREDICATE_RESULT',
          `predicate ${name} returned ${JSON.stringify(value) ?? String(value)} at step ${input.step}: return 'good', 'bad', 'skip', a boolean (true = good) or { verdict, reason }`,
        );
      }
      return result;
    },
  };
}

/** Loads a predicate module (.js, .mjs, or .ts through tsx) and checks its default export is a function. */
export async function loadJsPredicate(file: string): Promise<StepPredicate> {
  const path = resolve(file);
  if (!existsSync(path)) throw new TapedeckError('BISECT_PREDICATE', `predicate module ${file} does not exist`);
  let mod: { default?: unknown };
  try {
    // TypeScript through tsx: the built CLI is plain JavaScript.
    mod = await importUserModule(path);
  } catch (error) {
    throw new TapedeckError(
      'BISECT_PREDICATE',
      `could not load predicate module ${file}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  if (typeof mod.default !== 'function') {
    throw new TapedeckError(
      'BISECT_PREDICATE',
      `${file} must export a default function (belief, world, step) => 'good' | 'bad' | 'skip' | boolean`,
    );
  }
  return functionPredicate(mod.default as UserPredicateFn, `js:${file}`);
}
