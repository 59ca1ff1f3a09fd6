// Availability: "the hotel is sold out", "no rooms left", "out of stock", "3 seats left", "in
// stock" — a claim about whether something can still be had, and how many. Observed, it is an
// attribute of an object (`rooms_left: 3`, `in_stock: true`, `sold_out: true`, `status:
// "available"`, schema.org's `availability: ".../OutOfStock"`). A claim is judged only against the
// object its sentence names (by its id, name or title, joined to the claim by words that say
// nothing else: "Hotel Lumen is now sold out", "no rooms left at Hotel Lumen"); a claim whose
// subject is no observed object, or is another thing ("Lumen's spa is sold out"), is not judged.
import type { FactSource, Verdict } from './fact-index.js';
import { MONEY_KEY_WORDS } from './money.js';
import { wordsValue } from './words.js';
import { foldText, keyWords } from './written.js';

/** Whether any can still be had. */
export type StockState = 'none' | 'some';

/** One availability attribute of an observed object. */
interface Observed {
  state: StockState;
  count?: number;
  /** What it counts (`rooms_left` -> room), when the key names it. */
  noun?: string;
  /** `rooms_left: 3`, for messages. */
  shown: string;
}

/** Things one books or buys by the unit, in the singular: what a claim or a key may count. */
const NOUNS = new Set([
  'room',
  'seat',
  'ticket',
  'spot',
  'place',
  'slot',
  'bed',
  'unit',
  'item',
  'piece',
  'copy',
  'table',
  'cabin',
  'berth',
  'space',
  'pass',
  'license',
  'licence',
  'suite',
  'appointment',
]);
const NOUN =
  '(?:rooms?|seats?|tickets?|spots?|places?|slots?|beds?|units?|items?|pieces?|cop(?:y|ies)|tables?|cabins?|berths?|spaces?|pass(?:es)?|licen[cs]es?|suites?|appointments?)';

function singular(word: string): string {
  const w = word.toLowerCase();
  if (w === 'copies') return 'copy';
  if (w.endsWith('sses')) return w.slice(0, -2);
  return w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w;
}

/** Key words that make a count an availability: `rooms_left`, `available_seats`, `stock`, `qty_available`. */
const COUNT_WORDS = new Set([
  'left',
  'remaining',
  'available',
  'availability',
  'stock',
  'inventory',
  'vacancy',
  'vacancies',
]);
/** Other words such a key may have beside its noun: `units_in_stock`, `quantity_available`, `stock_level`. */
const KEY_FILLER = new Set([
  'in',
  'on',
  'hand',
  'qty',
  'quantity',
  'count',
  'num',
  'number',
  'total',
  'is',
  'has',
  'level',
  'current',
  'now',
  'free',
]);
/** Truth-valued keys saying none can be had. */
const NONE_KEYS = ['sold out', 'soldout', 'out of stock', 'outofstock', 'unavailable', 'fully booked', 'not available'];
/** Status values, letters only and lower-cased (schema.org's URLs by their last part). */
const STATUS: Record<string, StockState> = {
  available: 'some',
  instock: 'some',
  limited: 'some',
  limitedavailability: 'some',
  lowstock: 'some',
  fewleft: 'some',
  onlineonly: 'some',
  instoreonly: 'some',
  soldout: 'none',
  outofstock: 'none',
  unavailable: 'none',
  notavailable: 'none',
  fullybooked: 'none',
  full: 'none',
  noavailability: 'none',
  discontinued: 'none',
};

function truth(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  return undefined;
}

function count(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,9}$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

/** The availability attributes of an object (none for an object that states none). */
export function stockOf(fields: Record<string, unknown>): Observed[] {
  const out: Observed[] = [];
  for (const [k, v] of Object.entries(fields)) {
    const words = keyWords(k);
    if (words.length === 0 || words.some((w) => MONEY_KEY_WORDS.has(w))) continue;
    const shown = `${k}: ${JSON.stringify(v)}`;
    const joined = words.join(' ');
    const t = truth(v);
    const negative = NONE_KEYS.some((n) => joined === n || joined === `is ${n}`);
    if (negative) {
      if (t !== undefined) out.push({ state: t ? 'none' : 'some', shown });
      continue;
    }
    const last = words.at(-1)!;
    if (typeof v === 'string' && (last === 'status' || last === 'availability' || joined === 'state')) {
      const state = STATUS[(v.split('/').at(-1) ?? '').toLowerCase().replace(/[^a-z]/g, '')];
      if (state !== undefined) out.push({ state, shown });
      continue;
    }
    if (!words.some((w) => COUNT_WORDS.has(w))) continue;
    const nouns = words.filter((w) => !COUNT_WORDS.has(w) && !KEY_FILLER.has(w)).map(singular);
    if (nouns.length > 1 || (nouns.length === 1 && !NOUNS.has(nouns[0]!))) continue;
    // `free` counts only beside a noun (`free_rooms`): alone it is a price.
    if (words.includes('free') && nouns.length === 0) continue;
    const noun = nouns[0];
    const n = count(v);
    if (n !== undefined) out.push({ state: n > 0 ? 'some' : 'none', count: n, shown, ...(noun && { noun }) });
    else if (t !== undefined) out.push({ state: t ? 'some' : 'none', shown, ...(noun && { noun }) });
  }
  return out;
}

/** Keys whose value names the object: its id, name or title (`hotel: "Lumen"` too). */
const NAME_LAST = new Set(['id', 'name', 'title', 'label', 'sku', 'code', 'number', 'no']);
const NAME_KEYS = new Set([
  'hotel',
  'product',
  'flight',
  'event',
  'item',
  'listing',
  'property',
  'venue',
  'room',
  'model',
  'course',
  'show',
  'train',
  'tour',
]);

/** The names an object is known by (each as folded word tokens). */
function namesOf(fields: Record<string, unknown>): string[][] {
  const out: string[][] = [];
  for (const [k, v] of Object.entries(fields)) {
    if (typeof v !== 'string' && typeof v !== 'number') continue;
    const words = keyWords(k);
    if (!NAME_LAST.has(words.at(-1) ?? '') && !(words.length === 1 && NAME_KEYS.has(words[0]!))) continue;
    const tokens = tokensOf(String(v)).map((t) => t.word);
    // A name says which object: not a lone short word or number (`A`, `12`), nor a long text.
    if (tokens.length === 0 || tokens.length > MAX_NAME || tokens.join('').length < 3) continue;
    if (tokens.length === 1 && /^\d+$/.test(tokens[0]!) && tokens[0]!.length < 3) continue;
    out.push(tokens);
  }
  return out;
}

const MAX_NAME = 8;
const TOKEN = /[\p{L}\p{N}]+/gu;

interface Token {
  word: string;
  start: number;
  end: number;
}

function tokensOf(text: string): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(TOKEN)) out.push({ word: foldText(m[0]), start: m.index, end: m.index + m[0].length });
  return out;
}

/** An observed object with availability: who it is, and when it was seen so. */
interface Entry {
  identity: string;
  states: Observed[];
  source: FactSource;
}

/** A claim of availability read in a text. */
export interface StockClaim {
  state: StockState;
  count?: number;
  noun?: string;
  /** A claim about the past ("was sold out", "had 3 left"): any observation of it may ground it. */
  past: boolean;
  start: number;
  end: number;
  text: string;
}

/** Word edges in any script (`\b` knows ASCII only: no edge before `épuisé`). */
const B = '(?<![\\p{L}\\p{N}])';
const E = '(?![\\p{L}\\p{N}])';
/** An availability claim judged against the object it names (`subject`, as the text writes it). */
export interface StockVerdict extends StockClaim {
  subject: string;
  verdict: Verdict;
}

const N = `(?:\\d{1,6}|${['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'a couple of', 'a few', 'few'].join('|')})`;
const NOUN_GAP = `(?:[\\p{L}-]+\\s+)?${NOUN}`;
/** The forms, in order: a span taken by one is not read again by a later one. */
const CLAIMS: Array<{ re: RegExp; state: StockState | 'count' }> = [
  // Negated or nearly: still some.
  {
    re: new RegExp(
      `${B}(?:(?:is|are|was|were)\\s+not|isn't|aren't|wasn't|weren't|not\\s+yet|almost|nearly|not)\\s+(?:yet\\s+)?(?:sold[\\s-]out|fully\\s+booked|booked\\s+up|out\\s+of\\s+stock|unavailable)${E}`,
      'giu',
    ),
    state: 'some',
  },
  { re: new RegExp(`${B}(?:limited\\s+availability|selling\\s+fast)${E}`, 'giu'), state: 'some' },
  // Counted: "3 rooms left", "only two seats remaining", "0 left in stock".
  {
    re: new RegExp(
      `(?<![\\p{L}\\p{N}.,$€£¥-])(?:only\\s+)?${N}\\s+(?:${NOUN_GAP}\\s+|more\\s+)?(?:left|remaining|still\\s+available|available|in\\s+stock|free)${E}`,
      'giu',
    ),
    state: 'count',
  },
  // None.
  {
    re: new RegExp(
      `${B}(?:sold[\\s-]out|fully\\s+booked|booked\\s+(?:up|solid)|out\\s+of\\s+stock|unavailable|(?:is|are|was|were)\\s+not\\s+available|(?:isn't|aren't|wasn't|weren't)\\s+available|no\\s+longer\\s+(?:available|in\\s+stock)|not\\s+(?:available|in\\s+stock)|no\\s+availability|no\\s+vacanc(?:y|ies)|none\\s+(?:left|remaining|available)|no\\s+(?:more\\s+)?${NOUN_GAP}\\s+(?:(?:are|is)\\s+)?(?:left|remaining|available|free)|ausverkauft|nicht\\s+(?:mehr\\s+)?(?:verfügbar|vorrätig|lieferbar)|épuisée?s?|indisponibles?|(?:n'est|ne\\s+sont)\\s+plus\\s+disponibles?|(?:n'est|ne\\s+sont)\\s+pas\\s+disponibles?|agotad[oa]s?|no\\s+(?:está|están|hay)\\s+disponibles?|sin\\s+disponibilidad|esaurit[oaie]|non\\s+(?:è\\s+|sono\\s+)?disponibil[ei]|uitverkocht|niet\\s+(?:meer\\s+)?beschikbaar|esgotad[oa]s?|indisponíve(?:l|is))${E}`,
      'giu',
    ),
    state: 'none',
  },
  // Some, with no count.
  {
    re: new RegExp(
      `${B}(?:(?:is|are|remains?)\\s+(?:still\\s+|currently\\s+|now\\s+)?available|in\\s+stock|has\\s+(?:availability|vacanc(?:y|ies))|has\\s+${NOUN}\\s+(?:left|available)|(?:ist|sind)\\s+(?:noch\\s+)?verfügbar|(?:est|sont)\\s+(?:encore\\s+)?disponibles?|(?:está|están)\\s+disponibles?|(?:è|sono)\\s+(?:ancora\\s+)?disponibil[ei]|(?:is|zijn)\\s+(?:nog\\s+)?beschikbaar)${E}`,
      'giu',
    ),
    state: 'some',
  },
];

const NOUN_RE = new RegExp(NOUN, 'iu');

/** Words before a claim that make it no claim: a question's, a condition's, a guess's. */
const HEDGE =
  /\b(?:may|might|could|would|will|likely|probably|soon|if|unless|whether|when|once|before|expected\s+to|about\s+to|risk)\b[^.!?;\n]{0,40}$/i;
const PAST = /\b(?:was|were|had)\b[^.!?;\n]{0,24}$/i;
const FEWER =
  /\b(?:fewer|less|under|below|up\s+to|at\s+most|more|over|at\s+least)\s+than\s*$|\b(?:under|below|up\s+to|at\s+most|over|at\s+least)\s*$/i;

/** The availability claims of a text, in order. */
export function stockClaims(text: string): StockClaim[] {
  if (
    !/avail|stock|sold|booked|left|remain|vacan|verfüg|ausverk|dispon|agotad|esaurit|uitverk|beschikb|esgotad|épuis|selling/i.test(
      text,
    )
  )
    return [];
  const taken = new Uint8Array(text.length);
  const out: StockClaim[] = [];
  for (const { re, state } of CLAIMS) {
    re.lastIndex = 0;
    for (const m of text.matchAll(re)) {
      const start = m.index;
      const end = start + m[0].length;
      if (taken.subarray(start, end).some((b) => b === 1)) continue;
      taken.fill(1, start, end);
      const before = text.slice(Math.max(0, start - 60), start);
      if (HEDGE.test(before) || questionAt(text, end)) continue;
      const claim: StockClaim = { state: 'some', past: PAST.test(before), start, end, text: m[0] };
      const noun = NOUN_RE.exec(m[0])?.[0];
      if (noun !== undefined) claim.noun = singular(noun);
      if (state === 'count') {
        if (FEWER.test(before)) continue;
        const n = numberOf(/^(?:only\s+)?(.+?)\s/iu.exec(m[0])?.[1] ?? '');
        if (n === undefined) claim.state = 'some';
        else {
          claim.state = n > 0 ? 'some' : 'none';
          claim.count = n;
        }
      } else claim.state = state;
      out.push(claim);
    }
  }
  return out.sort((a, b) => a.start - b.start);
}

/** "3", "three", "a few" (some, no count). */
function numberOf(written: string): number | undefined {
  if (/^\d+$/.test(written)) return Number(written);
  if (/few|couple/i.test(written)) return undefined;
  return wordsValue(written)?.value;
}

/** Whether the sentence a claim ends in is a question. */
function questionAt(text: string, end: number): boolean {
  const rest = /^[^.!?\n]*([.!?\n]|$)/.exec(text.slice(end, end + 200));
  return rest?.[1] === '?';
}

/** Words that may stand between a claim and the object it is about, saying nothing of their own. */
const FILLER = new Set(
  (
    'is are was were be been being has have had currently now already still completely totally fully entirely ' +
    'unfortunately sadly also both all every the a an at in for on of with by from there its it which that and or ' +
    's hotel hotels flight flights product products listing property event show room rooms seats seat ' +
    'jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june july august september ' +
    'october november december monday tuesday wednesday thursday friday saturday sunday tonight today tomorrow date dates night nights ' +
    // The same in the languages whose claims are read: `ist ausverkauft`, `est épuisé`, `está agotado`.
    'ist sind war waren est sont etait etaient esta estan estaba es son e sono era zijn der die das den dem le la les l el los las lo il de del du des d het een ein eine un une una uno hotel'
  ).split(' '),
);

/** The observed objects that have availability, by name, each with its observations in order. */
export class StockIndex {
  private readonly byName = new Map<string, Entry[]>();
  private readonly lengths = new Set<number>();
  private readonly identitiesOf = new Map<string, Set<string>>();

  /** Index one observed object, if it states availability and has a name. */
  add(fields: Record<string, unknown>, source: FactSource): void {
    const states = stockOf(fields);
    if (states.length === 0) return;
    const names = namesOf(fields);
    if (names.length === 0) return;
    const id = fields.id;
    const identity = typeof id === 'string' || typeof id === 'number' ? `id:${String(id)}` : names[0]!.join(' ');
    for (const tokens of names) {
      const key = tokens.join(' ');
      const list = this.byName.get(key);
      const entry = { identity, states, source };
      if (list === undefined) this.byName.set(key, [entry]);
      else list.push(entry);
      this.lengths.add(tokens.length);
      let ids = this.identitiesOf.get(key);
      if (ids === undefined) this.identitiesOf.set(key, (ids = new Set()));
      ids.add(identity);
    }
  }

  /** Availability claims in `text` whose subject is an observed object, each with its verdict. */
  claims(text: string, bound = Number.POSITIVE_INFINITY): StockVerdict[] {
    if (this.byName.size === 0) return [];
    const claims = stockClaims(text);
    if (claims.length === 0) return [];
    const tokens = tokensOf(text);
    const names = this.namesIn(tokens);
    // The token each name ends at, to walk back from a claim (the longest name there).
    const ends = new Map<number, number>();
    for (const [start, n] of names) {
      const end = start + n.length - 1;
      if (!ends.has(end)) ends.set(end, start);
    }
    const out: StockVerdict[] = [];
    for (const [i, c] of claims.entries()) {
      const from = Math.max(sentenceStart(text, c.start), claims[i - 1]?.end ?? 0);
      const to = Math.min(sentenceEnd(text, c.end), claims[i + 1]?.start ?? text.length);
      let subjects = this.joined(text, tokens, names, ends, c.start, from, -1);
      if (subjects.length === 0) subjects = this.joined(text, tokens, names, ends, c.end, to, 1);
      if (subjects.length === 0) continue;
      const verdicts = subjects.map((s) => ({ s: s.written, v: this.verdictOn(s.key, c, bound) }));
      const judged = verdicts.filter((x): x is { s: string; v: Verdict } => x.v !== undefined);
      if (judged.length === 0) continue;
      const pick =
        judged.find((x) => x.v.verdict === 'different') ??
        judged.find((x) => x.v.verdict === 'cant-tell') ??
        judged[0]!;
      out.push({ ...c, subject: pick.s, verdict: pick.v });
    }
    return out;
  }

  /** Known names in the text, by the token they start at: the longest first. */
  private namesIn(tokens: Token[]): Map<number, { key: string; length: number }> {
    const lengths = [...this.lengths].sort((a, b) => b - a);
    const out = new Map<number, { key: string; length: number }>();
    for (let i = 0; i < tokens.length; i++)
      for (const n of lengths) {
        if (i + n > tokens.length) continue;
        const key = tokens
          .slice(i, i + n)
          .map((t) => t.word)
          .join(' ');
        if (this.byName.has(key)) {
          out.set(i, { key, length: n });
          break;
        }
      }
    return out;
  }

  /**
   * The names joined to a claim at `edge` by filler words only, walking toward `limit` (dir -1:
   * before the claim, +1: after it). A name several objects share (`hotel`) is a kind, not a
   * subject: it is walked over like a filler.
   */
  private joined(
    text: string,
    tokens: Token[],
    names: Map<number, { key: string; length: number }>,
    ends: Map<number, number>,
    edge: number,
    limit: number,
    dir: 1 | -1,
  ): Array<{ key: string; written: string }> {
    const found: Array<{ key: string; written: string }> = [];
    const step = (at: number): number => {
      const { key, length } = names.get(at)!;
      const written = text.slice(tokens[at]!.start, tokens[at + length - 1]!.end);
      if (this.identitiesOf.get(key)!.size === 1) found.push({ key, written });
      return dir < 0 ? at - 1 : at + length;
    };
    if (dir < 0) {
      let i = firstAt(tokens, edge, 'end') - 1;
      while (i >= 0 && tokens[i]!.start >= limit) {
        const start = ends.get(i);
        if (start !== undefined && tokens[start]!.start >= limit) i = step(start);
        else if (isFiller(tokens[i]!.word)) i--;
        else break;
      }
    } else {
      let i = firstAt(tokens, edge, 'start');
      while (i >= 0 && i < tokens.length && tokens[i]!.end <= limit) {
        const name = names.get(i);
        if (name !== undefined && tokens[i + name.length - 1]!.end <= limit) i = step(i);
        else if (isFiller(tokens[i]!.word)) i++;
        else break;
      }
    }
    return found;
  }

  /** The verdict on a claim about the object called `name` (undefined: nothing it observed can say). */
  private verdictOn(name: string, c: StockClaim, bound: number): Verdict | undefined {
    const seen = (this.byName.get(name) ?? []).filter((e) => e.source.pos <= bound);
    if (seen.length === 0) return undefined;
    const latest = Math.max(...seen.map((e) => e.source.pos));
    const entries = c.past ? seen : seen.filter((e) => e.source.pos === latest);
    const relevant = entries.flatMap((e) =>
      e.states.filter((s) => c.noun === undefined || s.noun === undefined || s.noun === c.noun).map((s) => ({ s, e })),
    );
    if (relevant.length === 0) return undefined;
    const agrees = (s: Observed) =>
      s.state === c.state && (c.count === undefined || s.count === undefined || s.count === c.count);
    const yes = relevant.filter((r) => agrees(r.s));
    const match = (r: { s: Observed; e: Entry }) => ({ source: r.e.source, observed: r.s.shown });
    const label = (r: { s: Observed; e: Entry }) => `${r.s.shown}${r.e.source.label ? ` (${r.e.source.label})` : ''}`;
    if (yes.length > 0 && (c.past || yes.length === relevant.length)) return { verdict: 'same', match: match(yes[0]!) };
    const no = relevant.find((r) => !agrees(r.s))!;
    if (yes.length === 0) return { verdict: 'different', why: `observed ${label(no)}` };
    return {
      verdict: 'cant-tell',
      why: `observations of it disagree: ${label(yes[0]!)}, ${label(no)}`,
      match: match(yes[0]!),
    };
  }
}

/** The first token whose `end` (or `start`) is past `at` (`end`: > at; `start`: >= at), by bisection. */
function firstAt(tokens: Token[], at: number, side: 'start' | 'end'): number {
  let lo = 0;
  let hi = tokens.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const t = tokens[mid]!;
    if (side === 'end' ? t.end <= at : t.start < at) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function isFiller(word: string): boolean {
  return FILLER.has(word) || /^\d+(?:st|nd|rd|th)?$/.test(word);
}

/** Where the sentence around `at` starts and ends (a full stop, `!`, `?` or `;` before a space, or a line break), within 400 characters. */
function sentenceStart(text: string, at: number): number {
  for (let i = at - 1; i >= Math.max(0, at - 400); i--) {
    const c = text[i]!;
    if (c === '\n' || ('.!?;'.includes(c) && /\s/.test(text[i + 1] ?? ''))) return i + 1;
  }
  return Math.max(0, at - 400);
}

function sentenceEnd(text: string, at: number): number {
  for (let i = at; i < Math.min(text.length, at + 400); i++) {
    const c = text[i]!;
    if (c === '\n' || ('.!?;'.includes(c) && (i + 1 === text.length || /\s/.test(text[i + 1]!)))) return i;
  }
  return Math.min(text.length, at + 400);
}
