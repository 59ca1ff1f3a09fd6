// A change an observed object states as two values, before and after (`profit_before_usd: 5000,
// profit_after_usd: 3800`, `{ old_price: 239, new_price: 219 }`, `profit: { previous: 5000,
// current: 3800 }`, `{ before: { profit: 5000 }, after: { profit: 3800 } }`): what a careful reader
// says of it is the change itself, `profit fell $1,200` (or 24%), which no single field holds.
import { currencyField } from './objects.js';
import { keyWords } from './written.js';

/** Words of a key that name the earlier of two values; `start`/`from` name a span's ends, not a change. */
const BEFORE_WORDS = new Set([
  'before',
  'previous',
  'prev',
  'prior',
  'old',
  'was',
  'opening',
  'initial',
  'baseline',
  'original',
]);
/** Words of a key that name the later one. */
const AFTER_WORDS = new Set([
  'after',
  'current',
  'curr',
  'new',
  'now',
  'latest',
  'closing',
  'final',
  'updated',
  'revised',
]);

/** Two values of one quantity, before and after, and the key the change is read under (its unit, its currency). */
export interface PairedChange {
  key: string;
  before: number;
  after: number;
  /** How the observation names it: `profit_before_usd: 5000 -> profit_after_usd: 3800`. */
  observed: string;
  /** The currency the pair's own objects name (`before: { profit: 5000, currency: 'EUR' }`), if any. */
  currency?: string;
}

/** A number or a plain decimal string (`"129.99"`, as Postgres numeric and PayPal write them). */
function numberOf(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  return typeof v === 'string' && /^-?\d{1,15}(?:\.\d{1,6})?$/.test(v) ? Number(v) : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The before/after pairs of an object's fields: keys alike but for one word naming which (one
 * of each, else which two go together is a guess). `parentKey`: the key the object is under, which
 * names the quantity when the pair's keys are the words alone (`profit: { before, after }`).
 */
export function pairedChanges(fields: Record<string, unknown>, parentKey?: string): PairedChange[] {
  const sides = new Map<string, { before: string[]; after: string[] }>();
  for (const k of Object.keys(fields)) {
    const words = keyWords(k);
    const at = words.findIndex((w) => BEFORE_WORDS.has(w) || AFTER_WORDS.has(w));
    if (at < 0 || words.slice(at + 1).some((w) => BEFORE_WORDS.has(w) || AFTER_WORDS.has(w))) continue;
    const base = words.filter((_, i) => i !== at).join(' ');
    let side = sides.get(base);
    if (side === undefined) sides.set(base, (side = { before: [], after: [] }));
    (BEFORE_WORDS.has(words[at]!) ? side.before : side.after).push(k);
  }
  const out: PairedChange[] = [];
  for (const [base, { before, after }] of sides) {
    if (before.length !== 1 || after.length !== 1) continue;
    const [b, a] = [before[0]!, after[0]!];
    const [x, y] = [fields[b], fields[a]];
    const key = base === '' && parentKey !== undefined ? parentKey : a;
    const [bx, ay] = [numberOf(x), numberOf(y)];
    if (bx !== undefined && ay !== undefined)
      out.push({ key, before: bx, after: ay, observed: `${b}: ${x} -> ${a}: ${y}` });
    else if (isObject(x) && isObject(y)) {
      const currency = currencyField(x);
      if (currency !== currencyField(y)) continue;
      for (const [f, v] of Object.entries(x)) {
        const [fb, fa] = [numberOf(v), numberOf(y[f])];
        if (fb !== undefined && fa !== undefined)
          out.push({
            key: f,
            before: fb,
            after: fa,
            observed: `${b}.${f}: ${v} -> ${a}.${f}: ${y[f]}`,
            ...(currency !== undefined && { currency }),
          });
      }
    }
  }
  return out;
}
