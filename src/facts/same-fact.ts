// Two values that state the same fact: equal, or equal once read (12999 cents and 129.99 dollars,
// 2026-11-20 and 2026-11-20T14:05:00Z, O-7731 and o7731, Zoë and Zoe, true and "yes"), each under
// the key it was found at. A near miss is a different fact: O-7713 is not O-7731, €129.99 is not
// $129.99, "Dana" is not "Dana Reyes", 12.999 is not 12999.
import { FactIndex, type Verdict } from './fact-index.js';
import { mentionsIn } from './mentions.js';
import { idCore } from './readings.js';
import { foldText } from './written.js';

/** The source of a value compared: it has no label (a verdict names the value itself). */
const SOURCE = { pos: 0, label: '' };

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
  return factVerdict(expected, actual, keys).verdict === 'same';
}

/** Whether two values state the same fact: "same", "different", or "can't tell" (and why). */
export interface FactVerdict {
  verdict: 'same' | 'different' | 'cant-tell';
  why?: string;
}

/**
 * The verdict behind `sameFact`: "can't tell" when the values do not settle it — `01/12/2026`
 * (no other date or decimal comma beside it to say day or month first) against one of its two
 * readings, `amount: 12999` with `currency: "usd"` (cents, as Stripe writes it, or dollars?)
 * against $129.99 or $12,999.
 */
export function factVerdict(
  expected: unknown,
  actual: unknown,
  keys: { expected?: string; actual?: string } = {},
): FactVerdict {
  const same: FactVerdict = { verdict: 'same' };
  const different: FactVerdict = { verdict: 'different' };
  if (expected === actual) return same;
  const truth = sameTruth(expected, actual);
  if (truth !== undefined) return truth ? same : different;
  if (!isScalar(expected) || !isScalar(actual)) return different;
  if (String(expected) === String(actual)) return same;
  // Digits with a leading zero are a code (a zip code, `007`), not the number they would read as.
  if (isDigitCode(expected) || isDigitCode(actual))
    return sameWords(String(expected), String(actual)) ? same : different;
  const e = asNumber(expected);
  const a = asNumber(actual);
  if (typeof e === 'string' && typeof a === 'string' && !hasFacts(e) && !hasFacts(a))
    return sameWords(e, a) ? same : different;
  const one = grounds(a, keys.actual, e, keys.expected);
  if (one.verdict === 'same') return one;
  const other = grounds(e, keys.expected, a, keys.actual);
  if (other.verdict === 'same') return other;
  // Both undecided: the reason the written form gives (its readings) says more than the maybe it matches.
  return other.verdict === 'cant-tell' ? other : one;
}

/** Whether `value` (under `key`) is grounded by an index of `by` alone: every fact it states. */
function grounds(
  by: string | number,
  byKey: string | undefined,
  value: string | number,
  key: string | undefined,
): FactVerdict {
  const index = new FactIndex({ signed: true, oneReading: true });
  index.addValue(by, SOURCE, byKey);
  if (typeof value === 'number') return plain(index.valueVerdict(value, key));
  const all = mentionsIn(value);
  if (all.length === 0) return { verdict: 'different' };
  // A fact read only against a day (`Friday`, `tomorrow`: no day here) is the same only written the same.
  const said = words(String(by));
  if (all.some((m) => m.unread !== undefined && !said.includes(words(m.text)))) return { verdict: 'different' };
  const verdicts = all.filter((m) => m.unread === undefined).map((m) => index.verdict(m));
  const notSame = verdicts.find((v) => v.verdict === 'different') ?? verdicts.find((v) => v.verdict === 'cant-tell');
  return notSame === undefined ? { verdict: 'same' } : plain(notSame);
}

function plain(v: Verdict): FactVerdict {
  return { verdict: v.verdict, ...(v.verdict !== 'same' && v.why !== undefined && { why: v.why }) };
}

function hasFacts(text: string): boolean {
  return mentionsIn(text).some((m) => m.unread === undefined);
}

/** The words of a text, folded, each between spaces (` on friday `), for finding one phrase in another. */
function words(text: string): string {
  return ` ${(foldText(text).match(/[\p{L}\p{N}]+/gu) ?? []).join(' ')} `;
}

/** Words equal once case, diacritics, quotes and spacing are folded; one token also by its id core (`ABC-DEF` ~ `abcdef`). */
function sameWords(a: string, b: string): boolean {
  const wa = words(a);
  if (wa !== '  ' && wa === words(b)) return true;
  const single = (t: string) => !/\s/.test(t.trim());
  return single(a) && single(b) && idCore(a) !== '' && idCore(a) === idCore(b);
}

/** A numeric string as its number; one with a leading zero (a zip code, `007`) stays a code. */
function asNumber(v: string | number): string | number {
  return typeof v === 'string' && /^\s*-?(0|[1-9]\d*)(\.\d+)?\s*$/.test(v) ? Number(v) : v;
}

const TRUTH_WORDS: Record<string, boolean> = { true: true, yes: true, false: false, no: false };

/** The other ways Postgres writes or reads a boolean, taken as one only against a boolean. */
const PG_TRUTH: Record<string, boolean> = { t: true, f: false, y: true, n: false, on: true, off: false };

/**
 * Booleans: `true`/`false` and the words true, false, yes, no — and 1 / 0 against one of those, and
 * `t`, `f`, `on`, `off`, `y`, `n` against a boolean — compare by truth; undefined when neither side is a boolean or a truth word.
 */
function sameTruth(expected: unknown, actual: unknown): boolean | undefined {
  const word = (v: unknown) =>
    typeof v === 'boolean' ? v : typeof v === 'string' ? TRUTH_WORDS[foldText(v.trim())] : undefined;
  const bit = (v: unknown) => (v === 1 || v === '1' ? true : v === 0 || v === '0' ? false : undefined);
  // Postgres's own text for a boolean (`t`, `f`; `on`, `y` as it reads input) against a boolean.
  const letter = (v: unknown, other: unknown) =>
    typeof other === 'boolean' && typeof v === 'string' ? PG_TRUTH[foldText(v.trim())] : undefined;
  if (word(expected) === undefined && word(actual) === undefined) return undefined;
  const e = word(expected) ?? bit(expected) ?? letter(expected, actual);
  const a = word(actual) ?? bit(actual) ?? letter(actual, expected);
  return e !== undefined && e === a;
}

function isDigitCode(v: string | number): boolean {
  return typeof v === 'string' && /^\s*0\d+\s*$/.test(v);
}

function isScalar(v: unknown): v is string | number {
  return typeof v === 'string' || typeof v === 'number';
}
