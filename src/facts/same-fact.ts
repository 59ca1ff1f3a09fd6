// Two values that state the same fact: equal, or equal once read (12999 cents and 129.99 dollars,
// 2026-11-20 and 2026-11-20T14:05:00Z, O-7731 and o7731), each under the key it was found at.
import { FactIndex } from './fact-index.js';

const SOURCE = { pos: 0, label: 'value' };

/**
 * True when `expected` (found under `keys.expected`) and `actual` (under `keys.actual`) state the
 * same fact. Numbers are compared with their keys' units, strings by their id core and the facts
 * they mention.
 */
export function sameFact(
  expected: unknown,
  actual: unknown,
  keys: { expected?: string; actual?: string } = {},
): boolean {
  if (expected === actual) return true;
  if (!isScalar(expected) || !isScalar(actual)) return false;
  if (String(expected) === String(actual)) return true;
  const a = new FactIndex();
  a.addValue(actual, SOURCE, keys.actual);
  if (a.groundValue(expected, keys.expected) !== undefined) return true;
  const e = new FactIndex();
  e.addValue(expected, SOURCE, keys.expected);
  return e.groundValue(actual, keys.actual) !== undefined;
}

function isScalar(v: unknown): v is string | number {
  return typeof v === 'string' || typeof v === 'number';
}
