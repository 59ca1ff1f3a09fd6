// Two values that state the same fact: equal, or equal once read (12999 cents and 129.99 dollars,
// 2026-11-20 and 2026-11-20T14:05:00Z, O-7731 and o7731, Zoë and Zoe, true and "yes"), each under
// the key it was found at. A near miss is a different fact: O-7713 is not O-7731, €129.99 is not
// $129.99, "Dana" is not "Dana Reyes", 12.999 is not 12999.
import { FactIndex } from './fact-index.js';
import { mentionsIn } from './mentions.js';
import { idCore } from './readings.js';
import { foldText } from './written.js';

const SOURCE = { pos: 0, label: 'value' };

/**
 * True when `expected` (found under `keys.expected`) and `actual` (under `keys.actual`) state the
 * same fact. Numbers are compared with their keys' units (a numeric string as the number it
 * writes: Postgres hands `numeric` columns over as text), strings that mention facts (amounts,
 * dates, ids) by those facts, other strings word for word (case, diacritics, punctuation and
 * spacing folded), booleans by truth (`true` ~ "true" ~ "yes" ~ 1). Signs count: -25 is not 25.
 *
 * @example sameFact(129.99, 12999, { expected: 'amount_usd', actual: 'amount_cents' }) // true
 */
export function sameFact(
  expected: unknown,
  actual: unknown,
  keys: { expected?: string; actual?: string } = {},
): boolean {
  if (expected === actual) return true;
  const truth = sameTruth(expected, actual);
  if (truth !== undefined) return truth;
  if (!isScalar(expected) || !isScalar(actual)) return false;
  if (String(expected) === String(actual)) return true;
  // Digits with a leading zero are a code (a zip code, `007`), not the number they would read as.
  if (isDigitCode(expected) || isDigitCode(actual)) return sameWords(String(expected), String(actual));
  const e = asNumber(expected);
  const a = asNumber(actual);
  if (typeof e === 'string' && typeof a === 'string' && !hasFacts(e) && !hasFacts(a)) return sameWords(e, a);
  return grounds(a, keys.actual, e, keys.expected) || grounds(e, keys.expected, a, keys.actual);
}

/** `value` (under `key`) is grounded by an index of `by` alone: every fact it states, none missing. */
function grounds(by: string | number, byKey: string | undefined, value: string | number, key: string | undefined) {
  const index = new FactIndex({ signed: true });
  index.addValue(by, SOURCE, byKey);
  if (typeof value === 'number') return index.groundValue(value, key) !== undefined;
  const mentions = mentionsIn(value);
  if (mentions.length === 0 || mentions.some((m) => m.ambiguous !== undefined)) return false;
  return mentions.every((m) => index.groundMention(m) !== undefined);
}

function hasFacts(text: string): boolean {
  return mentionsIn(text).length > 0;
}

/** Words equal once case, diacritics, quotes and spacing are folded; one token also by its id core (`ABC-DEF` ~ `abcdef`). */
function sameWords(a: string, b: string): boolean {
  const words = (t: string) =>
    foldText(t)
      .match(/[\p{L}\p{N}]+/gu)
      ?.join(' ') ?? '';
  const wa = words(a);
  if (wa !== '' && wa === words(b)) return true;
  const single = (t: string) => !/\s/.test(t.trim());
  return single(a) && single(b) && idCore(a) !== '' && idCore(a) === idCore(b);
}

/** A numeric string as its number; one with a leading zero (a zip code, `007`) stays a code. */
function asNumber(v: string | number): string | number {
  return typeof v === 'string' && /^\s*-?(0|[1-9]\d*)(\.\d+)?\s*$/.test(v) ? Number(v) : v;
}

const TRUTH_WORDS: Record<string, boolean> = { true: true, yes: true, false: false, no: false };

/**
 * Booleans: `true`/`false` and the words true, false, yes, no — and 1 / 0 against one of those —
 * compare by truth; undefined when neither side is a boolean or a truth word.
 */
function sameTruth(expected: unknown, actual: unknown): boolean | undefined {
  const word = (v: unknown) =>
    typeof v === 'boolean' ? v : typeof v === 'string' ? TRUTH_WORDS[foldText(v.trim())] : undefined;
  const bit = (v: unknown) => (v === 1 || v === '1' ? true : v === 0 || v === '0' ? false : undefined);
  if (word(expected) === undefined && word(actual) === undefined) return undefined;
  const e = word(expected) ?? bit(expected);
  const a = word(actual) ?? bit(actual);
  return e !== undefined && e === a;
}

function isDigitCode(v: string | number): boolean {
  return typeof v === 'string' && /^\s*0\d+\s*$/.test(v);
}

function isScalar(v: unknown): v is string | number {
  return typeof v === 'string' || typeof v === 'number';
}
