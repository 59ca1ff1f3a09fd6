// Value matching shared by expectations and validators: loose scalar equality, subset match, deep key search, globs.

import { keyWords, sameFact } from '../facts/index.js';
import { isRecord } from '../recording/index.js';
import { sameValue } from './db-diff.js';

/**
 * Which lists a contract compares in order: `true` every list, `false` none, or the keys named (a
 * contract's `ordered`). Unsaid, a list is in order only when its key says it ranks or sequences
 * (ORDER_KEY_WORDS: `ranking`, `top_results`, `route`, `steps`); any other list (the ids of the
 * flights booked, tags) is compared as a multiset: the same elements, each once, in any order.
 */
export type ListOrder = boolean | readonly string[] | undefined;

/** Key words of a list whose order is its meaning. */
const ORDER_KEY_WORDS = new Set([
  'rank',
  'ranked',
  'ranking',
  'rankings',
  'top',
  'leaderboard',
  'sequence',
  'sequenced',
  'steps',
  'route',
  'itinerary',
  'sorted',
  'priority',
  'priorities',
  'queue',
  'ordered',
]);

/** Whether the list under `key` is compared in order. */
export function isOrdered(key: string | undefined, order: ListOrder): boolean {
  if (typeof order === 'boolean') return order;
  if (key === undefined) return false;
  if (order?.includes(key)) return true;
  return keyWords(key).some((w) => ORDER_KEY_WORDS.has(w));
}

/** Scalars equal as text (1 == "1", "342.50" == 342.5 numerically); objects by subset. */
export function looseEqual(expected: unknown, actual: unknown, order?: ListOrder): boolean {
  if (expected === actual) return true;
  if (expected === null || actual === null || expected === undefined || actual === undefined) return false;
  if (typeof expected !== 'object') {
    if (typeof actual === 'object') return false;
    const a = String(expected);
    const b = String(actual);
    if (a === b) return true;
    const na = Number(a);
    const nb = Number(b);
    return a.trim() !== '' && b.trim() !== '' && Number.isFinite(na) && Number.isFinite(nb) && na === nb;
  }
  return subsetMatch(expected, actual, undefined, order);
}

/**
 * A contract's expected value holds the value found under `key`: loosely equal, or the same fact
 * written another way (`'$1,299.00'` and `price_cents: 129900`, `yes` and `true`, `Zoe` and `Zoë`).
 */
export function holdsValue(
  expected: unknown,
  actual: unknown,
  key: string,
  actualKey = key,
  order?: ListOrder,
): boolean {
  if (Array.isArray(expected) || isRecord(expected)) return subsetMatch(expected, actual, key, order);
  const written = typeof expected === 'string' && typeof actual === 'object' ? jsonText(expected) : undefined;
  // A json/jsonb value written whole as JSON text: the same value, its keys in any order.
  if (written !== undefined)
    return subsetMatch(written, actual, key, order) && subsetMatch(actual, written, key, order);
  return looseEqual(expected, actual) || sameFact(expected, actual, { expected: key, actual: actualKey });
}

/** A string that is JSON text of an object or a list, parsed; else undefined. */
function jsonText(text: string): unknown[] | Record<string, unknown> | undefined {
  if (!/^\s*[[{]/.test(text)) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) || isRecord(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every key of `expected` is in `actual` with a value it holds, at any depth: a nested `{ price:
 * '$129.99' }` holds a jsonb `{ price: 129.99 }` as a top-level value would. Arrays: the same length,
 * element-wise in order when `order` says so (isOrdered), else each expected element held by an
 * actual one of its own, in any order. Each value is read under its own key (an element of an array
 * under the array's).
 */
export function subsetMatch(expected: unknown, actual: unknown, key?: string, order?: ListOrder): boolean {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return false;
    const holds = (v: unknown, a: unknown) =>
      key === undefined ? looseEqual(v, a, order) : holdsValue(v, a, key, key, order);
    if (expected.every((v, i) => holds(v, actual[i]))) return true;
    if (isOrdered(key, order)) return false;
    if (expected.length <= MAX_UNORDERED) return matchedEach(expected, actual, holds);
    // A long list: elements equal as written are paired first (a multiset of their JSON), and only
    // the rest, when few, are matched loosely (each pair is a reading of two values: n² of them
    // would take minutes).
    const left = new Map<string, number>();
    for (const a of actual) {
      const k = canonical(a);
      left.set(k, (left.get(k) ?? 0) + 1);
    }
    const rest: unknown[] = [];
    for (const v of expected) {
      const k = canonical(v);
      const n = left.get(k) ?? 0;
      if (n > 0) left.set(k, n - 1);
      else rest.push(v);
    }
    if (rest.length === 0) return true;
    if (rest.length > MAX_UNORDERED) return false;
    const unpaired = actual.filter((a) => {
      const k = canonical(a);
      const n = left.get(k) ?? 0;
      if (n === 0) return false;
      left.set(k, n - 1);
      return true;
    });
    return matchedEach(rest, unpaired, holds);
  }
  if (isRecord(expected)) {
    if (!isRecord(actual)) return false;
    for (const [k, v] of Object.entries(expected)) if (!holdsValue(v, actual[k], k, k, order)) return false;
    return true;
  }
  return key === undefined ? looseEqual(expected, actual) : holdsValue(expected, actual, key);
}

/**
 * The most elements matched loosely in any order (each pair a reading of two values: n² of them). A
 * longer list pairs its elements equal as written first, and matches the rest loosely when they
 * are this few.
 */
export const MAX_UNORDERED = 64;

/** A value as JSON, for pairing equal elements (undefined and functions, which JSON drops, by type). */
function canonical(value: unknown): string {
  return JSON.stringify(value) ?? `<${typeof value}>`;
}

/**
 * Whether each expected element is held by an actual element of its own (a perfect matching, found
 * by augmenting paths: `['a', 'a']` is not held by `['a', 'b']`, and a loose element matching two
 * actual ones takes the one the others leave).
 */
function matchedEach(expected: unknown[], actual: unknown[], holds: (v: unknown, a: unknown) => boolean): boolean {
  const edges = expected.map((v) => actual.flatMap((a, j) => (holds(v, a) ? [j] : [])));
  const owner = new Array<number>(actual.length).fill(-1);
  const take = (i: number, seen: Uint8Array): boolean => {
    for (const j of edges[i]!) {
      if (seen[j] === 1) continue;
      seen[j] = 1;
      if (owner[j] === -1 || take(owner[j]!, seen)) {
        owner[j] = i;
        return true;
      }
    }
    return false;
  };
  return expected.every((_, i) => take(i, new Uint8Array(actual.length)));
}

/** All values stored under `key` anywhere inside `value` (depth-first). */
export function findKey(value: unknown, key: string, out: unknown[] = [], depth = 0): unknown[] {
  if (depth > 12) return out;
  if (Array.isArray(value)) for (const v of value) findKey(v, key, out, depth + 1);
  else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (k === key) out.push(v);
      findKey(v, key, out, depth + 1);
    }
  }
  return out;
}

/** Words a key may end in that only say the unit or currency of its value. */
const UNIT_WORDS = new Set([
  'cents',
  'cent',
  'minor',
  'micros',
  'micro',
  'usd',
  'eur',
  'gbp',
  'dollars',
  'ms',
  'seconds',
  's',
  'minutes',
  'hours',
  'days',
]);

/** The currency a money unit word names (`usd`, `dollars`), if any: `cents` or `micros` name none. */
const UNIT_CURRENCY: Record<string, string> = { usd: 'USD', dollars: 'USD', eur: 'EUR', gbp: 'GBP' };
/** Unit words of money, whose values `inUnitOf` converts into each other. */
const MONEY_UNIT_WORDS = new Set(['cents', 'cent', 'minor', 'micros', 'micro', 'usd', 'dollars', 'eur', 'gbp']);

/**
 * Values under a key that is `key` written another way, with the key they were under: in another
 * case or separators (`passengerId`, `PassengerID` for `passenger_id`), plus a unit word
 * (`amount_cents`, `amountInCents` for `amount`), or in another money unit of the same currency
 * (`price_cents` for `price_usd`; never `price_eur` for it).
 */
export function findKeyLike(value: unknown, key: string, depth = 0): Array<{ key: string; value: unknown }> {
  const want = keyWords(key);
  const wantUnit = want.length > 1 && MONEY_UNIT_WORDS.has(want.at(-1)!) ? want.at(-1)! : undefined;
  const out: Array<{ key: string; value: unknown }> = [];
  const same = (words: string[], n: number) => words.length === n && words.every((w, i) => w === want[i]);
  const like = (words: string[]): boolean => {
    if (same(words, want.length)) return true;
    const unit = words.at(-1)!;
    if (!UNIT_WORDS.has(unit) || words.length < 2) return false;
    // `amount_cents` for `amount`.
    if (same(words.slice(0, -1), want.length)) return true;
    // `price_cents` for `price_usd`: the same field in another unit of money, in no other currency.
    if (wantUnit === undefined || !MONEY_UNIT_WORDS.has(unit) || !same(words.slice(0, -1), want.length - 1))
      return false;
    const [a, b] = [UNIT_CURRENCY[unit], UNIT_CURRENCY[wantUnit]];
    return a === undefined || b === undefined || a === b;
  };
  const walk = (v: unknown, d: number) => {
    if (d > 12) return;
    if (Array.isArray(v)) for (const x of v) walk(x, d + 1);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        const words = keyWords(k).filter((w, i, all) => !(w === 'in' && i === all.length - 2));
        if (like(words)) out.push({ key: k, value: x });
        walk(x, d + 1);
      }
  };
  walk(value, depth);
  return out;
}

/**
 * Each expected key is found somewhere in `actual` (or its text, e.g. a URL path) with a value it holds (holdsValue).
 * Returns the keys that did not match, with what was found.
 */
export function mismatchedKeys(
  expected: Record<string, unknown>,
  actual: unknown,
  alsoText = '',
  order?: ListOrder,
): Array<{ key: string; expected: unknown; actual: unknown[] }> {
  const misses: Array<{ key: string; expected: unknown; actual: unknown[] }> = [];
  for (const [key, want] of Object.entries(expected)) {
    const found = findKey(actual, key);
    if (found.some((v) => holdsValue(want, v, key, key, order))) continue;
    // The key written another way (`passengerId` for `passenger_id`, `price_cents` for `price_usd`).
    const like = found.length === 0 ? findKeyLike(actual, key) : [];
    if (like.some((f) => holdsValue(want, f.value, key, f.key, order))) continue;
    if (
      found.length === 0 &&
      like.length === 0 &&
      typeof want !== 'object' &&
      alsoText &&
      containsToken(alsoText, String(want))
    )
      continue;
    misses.push({ key, expected: want, actual: found.length > 0 ? found : like.map((f) => f.value) });
  }
  return misses;
}

/** `token` appears in `text` not glued to other word characters. */
export function containsToken(text: string, token: string): boolean {
  if (!token) return false;
  let from = 0;
  for (;;) {
    const i = text.indexOf(token, from);
    if (i < 0) return false;
    const before = text[i - 1];
    const after = text[i + token.length];
    if ((before === undefined || !/\w/.test(before)) && (after === undefined || !/\w/.test(after))) return true;
    from = i + 1;
  }
}

/** A glob (`*` within a path segment, `**` across segments, `?` one char) as an anchored RegExp. */
export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        re += '.*';
        i++;
        if (glob[i + 1] === '/') i++;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export { sameValue };
