// A JS/TS predicate module: `export default (belief, world, step, ctx) => 'good' | 'bad' | 'skip' | boolean`.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TapedeckError } from '../../recording/index.js';
import type { Belief } from '../belief.js';
import { type PredicateInput, type PredicateResult, type StepPredicate, toResult } from '../predicate.js';
import type { World } from '../view.js';

/** The signature a predicate module's default export has. */
export type UserPredicateFn = (belief: Belief, world: World, step: number, context: PredicateInput) => unknown;

/** Wraps a function as a predicate, checking what it returns. */
export function functionPredicate(fn: UserPredicateFn, name: string): StepPredicate {
  return {
    name,
    async evaluate(input: PredicateInput): Promise<PredicateResult> {
      const value = await fn(input.belief, input.world, input.step, input);
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

/** Lets `import()` load TypeScript: the built CLI is plain JavaScript, so tsx is loaded only for a .ts predicate. */
async function registerTypeScript(file: string): Promise<void> {
  try {
    const { register } = await import('tsx/esm/api');
    register();
  } catch (error) {
    throw new TapedeckError(
      'BISECT_PREDICATE',
      `predicate module ${file} is TypeScript, and tsx (which loads it) is not installed: npm i -D tsx, or give a .js/.mjs file`,
      { cause: error },
    );
  }
}

/** Loads a predicate module (.js, .mjs, or .ts through tsx) and checks its default export is a function. */
export async function loadJsPredicate(file: string): Promise<StepPredicate> {
  const path = resolve(file);
  if (!existsSync(path)) throw new TapedeckError('BISECT_PREDICATE', `predicate module ${file} does not exist`);
  let mod: { default?: unknown };
  try {
    try {
      mod = (await import(pathToFileURL(path).href)) as { default?: unknown };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
      await registerTypeScript(file);
      // A new URL: the loader remembers the failed import of the plain one.
      mod = (await import(`${pathToFileURL(path).href}?tsx`)) as { default?: unknown };
    }
  } catch (error) {
    if (error instanceof TapedeckError) throw error;
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
