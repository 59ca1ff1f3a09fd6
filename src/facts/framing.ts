// How the words around a number frame it: a direction (`fell 3.2%`, `up $1,200`, `a 3.2% drop`)
// gives a change its sign, and a hedge (`about 130`, `~$130`, `nearly 2 hours`, `over 1,200 rows`)
// widens a claim to the values it is still true of — within bounds: a hedge never excuses a wild number.

import { isCurrencyCode } from './currencies.js';
import { halfUnit, type Mention, type Reading } from './readings.js';
import { keyWords, UNITS } from './written.js';

/** Which way a change goes, said in words. */
export type Direction = 'up' | 'down';

/** What a hedge says of the true value against the number written. */
type Hedge = 'about' | 'below' | 'at-most' | 'above' | 'at-least';

/** How far off a hedged number may be, relatively (`about 100` is 95..105, `over 1,200` is 1,200..1,260). */
const HEDGE_SPAN = 0.05;

const HEDGES: Array<[Hedge, RegExp]> = [
  [
    'about',
    /(?:^|[\s(])(?:about|around|approximately|approx\.?|roughly|circa|ca\.|some|close to|an estimated|estimated)\s+$|[~≈∼]\s*$/i,
  ],
  ['below', /(?:^|[\s(])(?:nearly|almost|just under|just below|not quite|under|below|less than|fewer than)\s+$/i],
  ['at-most', /(?:^|[\s(])(?:up to|at most|no more than|a maximum of|max(?:imum)?\.?)\s+$/i],
  ['above', /(?:^|[\s(])(?:over|more than|above|exceeding|in excess of|upwards of|just over|just above)\s+$/i],
  ['at-least', /(?:^|[\s(])(?:at least|no less than|no fewer than|a minimum of|min(?:imum)?\.?)\s+$/i],
];
const HEDGE_AFTER: Array<[Hedge, RegExp]> = [
  ['about', /^(?:(?:\s+\p{L}+)?\s+or so\b|-?ish\b)/iu],
  ['at-least', /^\+(?![\d.])/],
];

const DOWN_WORDS =
  'fell|falls?|falling|fallen|dropped|drops?|dropping|declined?|declines|declining|decreased?|decreases|decreasing|down|lost|shrank|shrunk|shrinks?|shrinking|slipped|slid|plunged|plummeted|sank|dipped|dips?|tumbled|contracted|lower|cut|reduced|lowered|slashed|trimmed';
const UP_WORDS =
  'rose|rises?|rising|risen|grew|grows?|growing|grown|increased?|increases|increasing|up|gained|gains?|gaining|climbed|climbs?|jumped|jumps?|surged|soared|rallied|higher';
const DOWN_NOUNS = 'drop|decline|decrease|fall|dip|reduction|contraction|slide|plunge|loss|cut|shortfall|markdown';
const UP_NOUNS = 'rise|increase|gain|jump|growth|climb|surge|hike|uplift|markup';
/** Up to two words between an article and a direction noun (`a sharp drop of`, `a year-over-year decline`). */
const ADJECTIVES = '(?:[A-Za-z-]+\\s+){0,2}';
/**
 * A direction word just before the number (`fell 3.2%`, `down by $20`, `a drop of 3.2%`, `a sharp
 * gain of €1.2k`), never `fell to` (a level).
 */
const DIRECTION_BEFORE: Array<[Direction, RegExp]> = [
  [
    'down',
    new RegExp(`(?:^|[\\s(,])(?:(?:${DOWN_WORDS})(?:\\s+by)?|an?\\s+${ADJECTIVES}(?:${DOWN_NOUNS})\\s+of)\\s+$`, 'i'),
  ],
  ['up', new RegExp(`(?:^|[\\s(,])(?:(?:${UP_WORDS})(?:\\s+by)?|an?\\s+${ADJECTIVES}(?:${UP_NOUNS})\\s+of)\\s+$`, 'i')],
];
/**
 * A comparative or a direction noun just after it (`3.2% lower`, `$20 less`, `$1.2k more`, `20 fewer
 * rows`, `a 3.2% drop`); never `down`/`up` there (`$500 down` is a payment), nor `or less` (a bound).
 */
const DIRECTION_AFTER: Array<[Direction, RegExp]> = [
  ['down', new RegExp(`^\\s+(?:lower|less(?!\\s*[-−$€£¥\\d])|fewer|cheaper|smaller|(?:${DOWN_NOUNS})s?)\\b`, 'i')],
  [
    'up',
    new RegExp(
      `^\\s+(?:higher|more(?!\\s+or\\s+less)|greater|larger|bigger|pricier|costlier|dearer|(?:${UP_NOUNS})s?)\\b`,
      'i',
    ),
  ],
];
/** After an article, a direction noun a word or two after the number (`a $20 price drop`, `a 3% YoY increase`). */
const NOUN_AFTER: Array<[Direction, RegExp]> = [
  ['down', new RegExp(`^\\s+${ADJECTIVES}(?:${DOWN_NOUNS})s?\\b`, 'i')],
  ['up', new RegExp(`^\\s+${ADJECTIVES}(?:${UP_NOUNS})s?\\b`, 'i')],
];
/** An article just before the number (after any hedge): `a $20 price drop`, `an estimated 3% gain`. */
const ARTICLE = /(?:^|[\s(,])an?\s+$/i;
/**
 * A denial just before a direction (`did not fall`, `hasn't risen`, `never dropped`, `wasn't down`,
 * `not a 3% drop`, `no $20 increase`), never `not only rose` (that says it did).
 */
const NEGATION = /(?:\b(?:not|never|no|nor)|n['’]t)(?:\s+(?:have|has|been|be|go|gone|really|actually|an?)){0,2}\s*$/i;

/** Keys whose number is a signed change: its sign is the direction (`change: -3.2` is a fall). */
const CHANGE_KEY_WORDS = new Set([
  'change',
  'delta',
  'growth',
  'yoy',
  'qoq',
  'mom',
  'wow',
  'variance',
  'movement',
  'return',
  'pnl',
]);
/**
 * Keys of a gap between two values, as often given as a size (`difference: 20` for `$20 cheaper`)
 * as signed: a negative one is a fall, a positive one no rise in particular.
 */
const GAP_KEY_WORDS = new Set(['diff', 'difference', 'gap']);
/** Words of a key that name which way its number goes (`decline_pct: 3.2` is a fall, `profit_usd: 1200` a gain). */
const KEY_DIRECTIONS: ReadonlyMap<string, Direction> = new Map([
  ...[
    'decline',
    'declines',
    'decrease',
    'drop',
    'fall',
    'loss',
    'losses',
    'reduction',
    'cut',
    'cuts',
    'discount',
    'markdown',
    'shrink',
    'shrinkage',
    'contraction',
    'down',
    'downside',
    'negative',
    'deficit',
    'dip',
    'slump',
    'decrement',
    'saving',
    'savings',
    'writedown',
  ].map((w): [string, Direction] => [w, 'down']),
  ...[
    'growth',
    'increase',
    'rise',
    'gain',
    'gains',
    'up',
    'upside',
    'positive',
    'profit',
    'surplus',
    'increment',
    'uplift',
    'markup',
    'hike',
    'raise',
    'appreciation',
  ].map((w): [string, Direction] => [w, 'up']),
]);
/**
 * Words after a direction word that keep it the measure of a change (`decline_pct`, `loss_usd`,
 * `price_cut_amount`, `growth_yoy`); any other makes it a thing of its own: `down_payment`,
 * `discount_code`, `cut_off_date`, `gain_ratio` (an amplification, a level) name no direction.
 */
const MEASURE_WORDS = new Set([
  'pct',
  'percent',
  'percentage',
  'perc',
  'amount',
  'amt',
  'value',
  'val',
  'total',
  'sum',
  'abs',
  'absolute',
  'size',
  'net',
  'gross',
  'cents',
  'cent',
  'minor',
  'micros',
  'bps',
  'bp',
  'points',
  'pts',
  'pp',
  'yoy',
  'qoq',
  'mom',
  'wow',
  'ytd',
  'mtd',
  'q1',
  'q2',
  'q3',
  'q4',
  'h1',
  'h2',
  'fy',
]);

/** Whether a number under `key` is a signed change (its sign says which way), per the key's words. */
export function isChangeKey(key: string | undefined): boolean {
  return key !== undefined && (keyWords(key).some((w) => CHANGE_KEY_WORDS.has(w)) || keyDirection(key) === 'up');
}

/**
 * The direction a key's name says its number goes: its last direction word, when only measure
 * words follow it (`revenue_decline_pct`: down; `profit_usd`: up; `change_pct`, `down_payment`: none).
 */
export function keyDirection(key: string | undefined): Direction | undefined {
  if (key === undefined) return undefined;
  const words = keyWords(key);
  for (let i = words.length - 1; i >= 0; i--) {
    const direction = KEY_DIRECTIONS.get(words[i]!);
    if (direction === undefined) continue;
    const rest = words.slice(i + 1);
    return rest.every((w) => MEASURE_WORDS.has(w) || isCurrencyCode(w) || Object.hasOwn(UNITS, w))
      ? direction
      : undefined;
  }
  return undefined;
}

/** Whether a number under `key` is the size of a fall. */
export function isDownKey(key: string | undefined): boolean {
  return keyDirection(key) === 'down';
}

/**
 * Which way a change `value` under `key` goes: down under a key that names a fall, whatever the
 * sign (`decline_pct: -3.2` restates it); by the sign under a key that names a rise or a signed
 * change (`growth_pct: -3.2`, `change_pct: -3.2` are falls), or a gap's when negative
 * (`difference: -20`); none under any other key.
 */
export function changeDirection(value: number, key: string | undefined): Direction | undefined {
  if (value === 0) return undefined;
  if (isDownKey(key)) return 'down';
  if (value < 0 && key !== undefined && keyWords(key).some((w) => GAP_KEY_WORDS.has(w))) return 'down';
  return isChangeKey(key) ? (value < 0 ? 'down' : 'up') : undefined;
}

/** The kinds of mention framing reads: those a change's size is written as. */
export const FRAMED_KINDS: ReadonlySet<Mention['kind']> = new Set(['number', 'money', 'percent', 'unit']);

/** A reading the sign of a change can be given to: numeric, linear in the number (not °F to °C), not a size (`mag`). */
export function signable(r: Reading): boolean {
  return r.value !== undefined && r.key === undefined && r.dim !== 'temp' && r.dim !== 'mag';
}

/**
 * The magnitude of a reading, in a dimension of its own (`u` + dim): what a number is when nothing
 * fixes its sign — free text, a key that is no change (`discount: 20`), a direction said in words.
 */
export function magnitude(r: Reading): Reading {
  return { ...r, dim: `u${r.dim}`, value: Math.abs(r.value ?? 0) };
}

/**
 * The size of a fall a key names (`decline_pct: 3.2`), in a dimension of its own: a size claimed with
 * no direction (`3.2%`) matches it, a rise said in words (`rose 3.2%`) does not, even as can't tell.
 */
export function fallSize(r: Reading): Reading {
  return { ...r, dim: `fall:${r.dim}`, value: Math.abs(r.value ?? 0) };
}

/** A reading with the direction's sign. */
export function signed(r: Reading, direction: Direction): Reading {
  const size = Math.abs(r.value ?? 0);
  return { ...r, value: direction === 'down' ? -size : size };
}

/** Half a unit of the last significant digit written (`1,200` -> 50, `130` -> 5, `12.5` -> 0.05). */
function halfSignificant(text: string): number {
  const digits = /\d[\d,.\s'’]*\d|\d/.exec(text)?.[0] ?? '';
  const plain = digits.replace(/[,\s'’]/g, '');
  if (plain.includes('.')) return halfUnit(plain);
  const zeros = /0*$/.exec(plain)?.[0].length ?? 0;
  return 0.5 * 10 ** Math.min(zeros, plain.length - 1);
}

/** The values a hedged `n` is true of, [lo, hi] (open at a strict bound), in the number's own scale. */
function hedgeBounds(hedge: Hedge, n: number, text: string): { lo: number; hi: number; open?: 'lo' | 'hi' } {
  const size = Math.abs(n);
  const exact = halfUnit(text.replace(/^[^\d]*/, '').replace(/[^\d]*$/, '') || '0');
  if (hedge === 'about') {
    const tol = Math.max(exact, Math.min(halfSignificant(text), HEDGE_SPAN * size));
    return { lo: n - tol, hi: n + tol };
  }
  const span = Math.max(HEDGE_SPAN * size, exact);
  if (hedge === 'below') return { lo: n - span, hi: n, open: 'hi' };
  if (hedge === 'at-most') return { lo: n - span, hi: n };
  if (hedge === 'above') return { lo: n, hi: n + span, open: 'lo' };
  return { lo: n, hi: n + span };
}

/** A claim reading widened to a hedge's bounds, scaled from the number to the reading's unit. */
function widened(r: Reading, n: number, bounds: ReturnType<typeof hedgeBounds>): Reading {
  const f = (r.value ?? 0) / n;
  let lo = bounds.lo * f;
  let hi = bounds.hi * f;
  if (lo > hi) [lo, hi] = [hi, lo];
  // A strict bound: the number itself is not inside (`over 1,200` is not 1,200).
  const nudge = 1e-9 * Math.max(1, Math.abs(hi));
  if (bounds.open !== undefined) (bounds.open === 'lo') === f > 0 ? (lo += nudge) : (hi -= nudge);
  return { ...r, value: (lo + hi) / 2, tolerance: (hi - lo) / 2 };
}

/** Abbreviations whose full stop ends no sentence (`approx. 130`, `ca. 1,200`, `incl. VAT`). */
const ABBREVIATION = /(?:^|[^\p{L}])(?:approx|ca|incl|excl|est|vs|avg|appr)\.$/iu;

/** Where the clause a number stands in starts within `text` (after a sentence's end, not an abbreviation's stop). */
function clauseStart(text: string): number {
  let start = 0;
  for (const m of text.matchAll(/[.!?;:\n](?=\s|$)/g))
    if (m[0] !== '.' || !ABBREVIATION.test(text.slice(0, m.index + 1))) start = m.index + 1;
  return start;
}

/** Whether `before` ends with a direction word the next number is the change of (`fell `, `up by about `). */
export function endsWithDirection(before: string): boolean {
  const hedge = matchOf(HEDGES, before);
  return (
    matchOf(DIRECTION_BEFORE, hedge === undefined ? before : `${before.slice(0, before.length - hedge[1])} `) !==
    undefined
  );
}

/**
 * The direction the words around a number say — before it (`fell`, `a drop of`), or after it (`lower`,
 * `less`, `a $20 price drop`) — and whether they deny it (`did not fall`, `no 3% drop`).
 */
function directionAround(rest: string, after: string): { direction: Direction; denied: boolean } | undefined {
  const before = matchOf(DIRECTION_BEFORE, rest);
  if (before !== undefined)
    return { direction: before[0], denied: NEGATION.test(rest.slice(0, rest.length - before[1])) };
  const next = matchOf(DIRECTION_AFTER, after) ?? (ARTICLE.test(rest) ? matchOf(NOUN_AFTER, after) : undefined);
  return next && { direction: next[0], denied: NEGATION.test(rest) };
}

function matchOf<T extends string>(table: Array<[T, RegExp]>, text: string): [T, number] | undefined {
  for (const [what, re] of table) {
    const m = re.exec(text);
    if (m !== null) return [what, m[0].length];
  }
  return undefined;
}

/**
 * The mentions of `text` with their framing read. A claimed number with a direction takes its sign
 * (`fell 3.2%` is -3.2, `up 3.2%` +3.2), and is undecided against a size observed with no sign of its
 * own; a number with no direction also matches such sizes. A hedged claim is grounded by a value
 * the hedge is true of, as well as by its number itself (`under $500` repeats the user's `$500`).
 * Observed, a direction gives the sign, and the number as written stays a size.
 */
export function framed(text: string, mentions: Mention[]): Mention[] {
  return mentions.map((m, i) => {
    if (!FRAMED_KINDS.has(m.kind) || m.value === undefined || m.alternatives !== undefined || m.ambiguous !== undefined)
      return m;
    const from = Math.max(mentions[i - 1]?.end ?? 0, m.start - 48);
    const to = Math.min(mentions[i + 1]?.start ?? text.length, m.end + 24);
    let before = text.slice(from, m.start);
    before = before.slice(clauseStart(before));
    const after = text.slice(m.end, to);
    const hedgeBefore = matchOf(HEDGES, before);
    const hedge = hedgeBefore?.[0] ?? matchOf(HEDGE_AFTER, after)?.[0];
    // The hedge's match takes the space before it: `fell by about 3%` leaves `fell by `.
    const rest = hedgeBefore === undefined ? before : `${before.slice(0, before.length - hedgeBefore[1])} `;
    // A comparative after it is read up to the next number, which may say what it is not (`$100 less $20`).
    const said = directionAround(rest, text.slice(m.end, m.end + 24));
    const toward = (d: Direction) => m.claim.filter(signable).map((r) => signed(r, d));
    // A change denied (`did not fall 3.2%`) is no claim of its own; an observation of it refutes the text.
    if (said?.denied === true)
      return {
        ...m,
        claim: [],
        observed: [],
        unread: `${m.text}: a change the text says did not happen`,
        direction: said.direction,
        negated: true,
        opposite: toward(said.direction),
      };
    const direction = said?.direction;
    let claim = m.claim;
    if (hedge !== undefined && m.value !== 0) {
      const bounds = hedgeBounds(hedge, m.value, m.text);
      claim = [...claim, ...claim.filter(signable).map((r) => widened(r, m.value!, bounds))];
    }
    if (direction === undefined) {
      const sizes = m.value > 0 ? claim.filter(signable) : [];
      return { ...m, claim: [...claim, ...sizes.map(magnitude), ...sizes.map(fallSize)] };
    }
    const why = `the answer says ${direction}, and the value observed has no sign of its own`;
    return {
      ...m,
      direction,
      claim: [
        ...claim.filter((r) => r.dim !== 'mag').map((r) => (signable(r) ? signed(r, direction) : r)),
        ...claim.filter(signable).map((r) => ({ ...magnitude(r), weak: why })),
      ],
      opposite: claim.filter(signable).map((r) => signed(r, direction === 'up' ? 'down' : 'up')),
      observed: [
        ...m.observed.filter((r) => r.dim !== 'mag').map((r) => (signable(r) ? signed(r, direction) : r)),
        ...m.observed.filter(signable).map(magnitude),
      ],
    };
  });
}
