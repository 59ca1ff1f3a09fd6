// An index of what was observed (tool results, the user's words), built once: every id, number,
// amount, date and word goes in under its canonical readings, with the earliest source that
// showed it. A claim is then grounded by lookups, not by searching the text per claim, and the
// match names its source ("129.99 ← total_cents: 12999, step 5").

import { StockIndex, type StockVerdict } from './availability.js';
import { epochInstant } from './dates.js';
import { fallSize, isChangeKey, isDownKey, magnitude, signable, signed } from './framing.js';
import { mentionsIn, valueReadings } from './mentions.js';
import { currencyField, stripeShaped } from './objects.js';
import { type PairedChange, pairedChanges } from './paired-changes.js';
import { at, idReadings, type Mention, type Reading } from './readings.js';
import { NOW_KEY, type RunDay } from './relative-dates.js';
import { foldText } from './written.js';

/** Where an observed fact came from. */
export interface FactSource {
  /** Ordering position: a fact counts as known at `bound` when its source's pos <= bound. */
  pos: number;
  stepId?: number;
  /** For messages: "the user's message", "step 3 (get_order)". */
  label: string;
}

/** How a claim was grounded: the source and the observed form that matches it. */
export interface FactMatch {
  source: FactSource;
  /** The observed text that grounds it ("total_cents: 12999", "#7713"). */
  observed: string;
}

/** Whether an observed fact is the one claimed: "same", "different" or "can't tell" (and why). */
export type Verdict =
  | { verdict: 'same'; match: FactMatch }
  | { verdict: 'different'; why?: string }
  | { verdict: 'cant-tell'; why: string; match: FactMatch };

/** An observation as a verdict names it: `price: 12999 (step 2)`. */
function shown(match: FactMatch): string {
  return match.source.label === '' ? match.observed : `${match.observed} (${match.source.label})`;
}

/** A reading's place among the maybes. */
function maybe(r: Reading): Reading {
  const { loose: _loose, ...rest } = r;
  return rest.key !== undefined ? { ...rest, key: `?${rest.key}` } : { ...rest, dim: `?${rest.dim}` };
}

interface Entry {
  source: FactSource;
  observed: string;
}

interface Sorted {
  values: number[];
  entries: Entry[];
}

const WORD = /[\p{L}\p{N}]+/gu;
/** A plain decimal in a string, short enough to be exact and with no leading zero (`007` is a code). */
const NUMERIC_STRING = /^-?(?:0|[1-9]\d{0,14})(?:\.\d{1,6})?$/;
/**
 * The facts of one observed text are read from its first 2 Mi characters: a number, an id, a name
 * or an email an agent repeats is there in any text a model can read (a whole context window is a
 * few MB), and a hostile 50 MB string would otherwise cost tens of millions of mentions and map
 * keys — minutes and gigabytes — for nothing.
 */
const TEXT_MAX = 2 * 1024 * 1024;
/** Relative float slack: far above a double's error (1e-16), far below a cent of ten billion (1e-12 of it). */
const EPS = 1e-13;

/** Lower-cased word tokens of a text. */
function words(text: string): string[] {
  return foldText(text).match(WORD) ?? [];
}

/** The observed facts of a run, indexed once; lookups cost O(log n) whatever the run's size. */
export class FactIndex {
  private readonly keyed = new Map<string, Entry>();
  private readonly numeric = new Map<string, Map<number, Entry>>();
  private sorted: Map<string, Sorted> | undefined;
  /** Word tokens and adjacent pairs, for names, emails and codes: built on the first phrase lookup. */
  private phrases: Map<string, Entry> | undefined;
  private readonly phraseTexts: Array<{ text: string; source: FactSource; key: string | undefined }> = [];
  /** The currencies the observations state amounts in. */
  private readonly currencies = new Set<string>();
  /** The observed objects that state availability (`rooms_left: 3`, `sold_out: true`), by name. */
  private readonly stock = new StockIndex();

  /**
   * `signed`: an amount's sign always counts. By default an unsigned amount claimed ("refunded
   * $25.00") is grounded by a negative one observed (`refund_cents: -2500`); comparing two values
   * (sameFact) the sign counts. `oneReading`: a form with two readings that nothing in its text
   * settles (`03/04/2026`) is "same" only when the world holds both; by default (a claim in an
   * answer, written for a person) either reading the world holds grounds it. Comparing two values
   * (sameFact) it is one reading: the API that got `03/04/2026` read it one way.
   */
  constructor(private readonly options: { signed?: boolean; oneReading?: boolean; day?: RunDay } = {}) {
    // `today` names the run's day: the run's clock (or what it stated) grounds it. Relative dates in
    // observations and claims are read against it (none: they are unread, and given no verdict).
    const day = options.day;
    if (day !== undefined)
      this.keyed.set(NOW_KEY, {
        source: { pos: -1, label: day.source },
        observed: `today is ${day.today.join(' or ')}`,
      });
  }

  private dayOption(): { day?: RunDay } {
    return this.options.day === undefined ? {} : { day: this.options.day };
  }

  /** Index one observed text (JSON is walked with its keys, so `total_cents: 12999` also reads as $129.99). */
  add(text: string, source: FactSource): void {
    const trimmed = text.trimStart();
    if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
      try {
        this.addValue(JSON.parse(text), source);
        return;
      } catch {
        // not JSON after all: index it as text
      }
    }
    this.addText(text, source, undefined);
  }

  /**
   * Index a structured value (a tool result, arguments, a row). An object's `currency` field is
   * the currency of its amounts: `{ price: 129.99, currency: 'EUR' }` is €129.99, never $129.99.
   */
  addValue(value: unknown, source: FactSource, key?: string, currency?: string, minor = false): void {
    if (typeof value === 'number' && Number.isFinite(value)) {
      const observed = key === undefined ? String(value) : `${key}: ${value}`;
      const readings = valueReadings(value, key, 'observed', currency, minor);
      // A fall's size (`decline_pct: 3.2`) is the fall and a fall's size, never a rise of 3.2.
      if (value > 0 && isDownKey(key)) this.putFall(readings, source, observed);
      else {
        for (const r of readings) this.put(r, source, observed);
        // Its size, unless its key makes it a signed change.
        if (value >= 0 && !isChangeKey(key))
          for (const r of readings.filter(signable)) this.put(magnitude(r), source, observed);
      }
      // Unix time under a key that names an instant is that instant, as its ISO form would state it.
      const instant = key === undefined ? undefined : epochInstant(value, key);
      if (instant !== undefined)
        for (const m of mentionsIn(instant))
          for (const r of m.observed) this.put(r, source, `${observed} (${instant})`);
    } else if (typeof value === 'string') {
      // A number written as a string (PayPal's `value: "129.99"`, Postgres `numeric`) is that number under its key.
      if (NUMERIC_STRING.test(value)) {
        this.addValue(Number(value), source, key, currency, minor);
        this.addWhole(value, source, key);
        return;
      }
      const t = value.trimStart();
      if ((t.startsWith('{') || t.startsWith('[')) && t.length > 1) {
        try {
          this.addValue(JSON.parse(value), source, key);
          return;
        } catch {
          // a string that only looks like JSON
        }
      }
      this.addText(value, source, key);
    } else if (Array.isArray(value)) {
      for (const v of value) this.addValue(v, source, key, currency, minor);
    } else if (value && typeof value === 'object') {
      // A nested object with no currency of its own is in its parent's, and in its units (an order's line items).
      const fields = value as Record<string, unknown>;
      this.stock.add(fields, source);
      const own = currencyField(fields);
      // An object that names its currency states amounts in it, whatever its keys (`min`, `max`).
      if (own !== undefined) this.currencies.add(own);
      const stripe = own === undefined ? minor : stripeShaped(fields);
      // A `value` is what its parent's key names: `price: { value: 129.99 }` is a price.
      for (const [k, v] of Object.entries(fields))
        this.addValue(v, source, k === 'value' && key !== undefined ? `${key}.${k}` : k, own ?? currency, stripe);
      for (const change of pairedChanges(fields, key)) this.addChange(change, source, own ?? currency, stripe);
    } else if (typeof value === 'bigint') this.addText(String(value), source, key);
  }

  /**
   * The change two observed values make (`profit_before_usd: 5000 -> profit_after_usd: 3800`): a
   * signed change in their unit (-$1,200: `fell $1,200`), and as a share of the first (`fell 24%`).
   */
  private addChange(change: PairedChange, source: FactSource, currency?: string, minor = false): void {
    // Rounded off a float's noise: 129.99 - 139.99 is -10.000000000000014.
    const delta = Number((change.after - change.before).toFixed(9));
    if (delta === 0) return;
    const observed = `${change.observed} (${delta > 0 ? '+' : ''}${delta})`;
    for (const r of valueReadings(delta, change.key, 'observed', change.currency ?? currency, minor))
      if (r.key === undefined) this.put(r, source, observed);
    if (change.before !== 0) this.put(at('pct', (100 * delta) / Math.abs(change.before)), source, observed);
  }

  private addText(whole: string, source: FactSource, key: string | undefined): void {
    const text = whole.length > TEXT_MAX ? whole.slice(0, TEXT_MAX) : whole;
    for (const m of mentionsIn(text, this.dayOption())) {
      const observed = key === undefined ? m.text : `${key}: ${m.text}`;
      const plain = m.direction === undefined && (m.value ?? 0) >= 0;
      if (plain && (m.value ?? 0) > 0 && isDownKey(key)) {
        this.putFall(m.observed, source, observed);
        continue;
      }
      for (const r of m.observed) this.put(r, source, observed);
      // A number with no direction said is a size too, unless its key makes it a signed change.
      if (plain && !isChangeKey(key))
        for (const r of m.observed.filter(signable)) this.put(magnitude(r), source, observed);
    }
    // A whole short value (a code, an email, a name) is also an id of itself.
    this.addWhole(text, source, key);
  }

  /** A whole short value (a code, an email, a name) as an id of itself, and its words as phrases. */
  private addWhole(text: string, source: FactSource, key: string | undefined): void {
    const trimmed = text.trim();
    if (trimmed !== '' && trimmed.length <= 120 && !/\s{2,}|\n/.test(trimmed)) {
      for (const r of idReadings(trimmed, 'observed'))
        this.put(r, source, key === undefined ? trimmed : `${key}: ${trimmed}`);
    }
    this.addPhrase(text, source, key);
  }

  private addPhrase(text: string, source: FactSource, key: string | undefined): void {
    if (this.phrases === undefined) this.phraseTexts.push({ text, source, key });
    else this.indexPhrase(this.phrases, text, source, key);
  }

  private indexPhrase(phrases: Map<string, Entry>, text: string, source: FactSource, key: string | undefined): void {
    const tokens = words(text);
    for (let i = 0; i < tokens.length; i++) {
      const one = tokens[i]!;
      this.keep(phrases, one, source, key === undefined ? one : `${key}: ${one}`);
      const next = tokens[i + 1];
      if (next !== undefined) this.keep(phrases, `${one} ${next}`, source, `${one} ${next}`);
    }
  }

  private phraseIndex(): Map<string, Entry> {
    if (this.phrases === undefined) {
      const phrases = new Map<string, Entry>();
      for (const p of this.phraseTexts) this.indexPhrase(phrases, p.text, p.source, p.key);
      this.phraseTexts.length = 0;
      this.phrases = phrases;
    }
    return this.phrases;
  }

  private keep<K>(map: Map<K, Entry>, k: K, source: FactSource, observed: string): boolean {
    const had = map.get(k);
    if (had !== undefined && had.source.pos <= source.pos) return false;
    map.set(k, { source, observed });
    return true;
  }

  /** The readings of a size a key names a fall of: signed down, and a fall's size (no rise, no bare size). */
  private putFall(readings: Reading[], source: FactSource, observed: string): void {
    for (const r of readings) this.put(signable(r) ? signed(r, 'down') : r, source, observed);
    for (const r of readings.filter(signable)) this.put(fallSize(r), source, observed);
  }

  private put(r: Reading, source: FactSource, observed: string): void {
    if (r.dim === 'mag' && this.options.signed === true) return;
    // A maybe is kept apart: a claim it alone matches is undecided.
    if (r.unsure !== undefined) {
      const { unsure, ...sure } = r;
      this.put(maybe(sure), source, `${observed} (${unsure})`);
      return;
    }
    if (/^\$[A-Z]{3}$/.test(r.dim)) this.currencies.add(r.dim.slice(1));
    if (r.key !== undefined) {
      this.keep(this.keyed, r.key, source, observed);
      return;
    }
    if (r.value === undefined || !Number.isFinite(r.value)) return;
    let byValue = this.numeric.get(r.dim);
    if (byValue === undefined) {
      byValue = new Map();
      this.numeric.set(r.dim, byValue);
    }
    if (this.keep(byValue, r.value, source, observed)) this.sorted = undefined;
  }

  private sortedOf(dim: string): Sorted | undefined {
    if (this.sorted === undefined) {
      this.sorted = new Map();
      for (const [d, byValue] of this.numeric) {
        const values = [...byValue.keys()].sort((a, b) => a - b);
        this.sorted.set(d, { values, entries: values.map((v) => byValue.get(v)!) });
      }
    }
    return this.sorted.get(dim);
  }

  /** The earliest observation (pos <= bound) that has this reading. */
  private lookup(r: Reading, bound: number): Entry | undefined {
    if (r.key !== undefined) {
      const e = this.keyed.get(r.key);
      return e !== undefined && e.source.pos <= bound ? e : undefined;
    }
    if (r.value === undefined) return undefined;
    const s = this.sortedOf(r.dim);
    if (s === undefined) return undefined;
    // Rounding is half up: "1.3k" is [1250, 1350), "1 h" is [0.5 h, 1.5 h) — 1.5 h is not "1 h".
    const tol = r.tolerance ?? 0;
    const slack = EPS * Math.max(1, Math.abs(r.value));
    const lo = r.value - tol - slack;
    const hi = tol > 2 * slack ? r.value + tol - slack : r.value + tol;
    let i = lowerBound(s.values, lo);
    let best: Entry | undefined;
    for (; i < s.values.length && s.values[i]! <= hi; i++) {
      const e = s.entries[i]!;
      if (e.source.pos <= bound && (best === undefined || e.source.pos < best.source.pos)) best = e;
    }
    return best;
  }

  private first(readings: Reading[], bound: number): FactMatch | undefined {
    let best: Entry | undefined;
    for (const r of readings) {
      const e = this.lookup(r, bound);
      if (e !== undefined && (best === undefined || e.source.pos < best.source.pos)) best = e;
    }
    return best && { source: best.source, observed: best.observed };
  }

  /** Grounds a mention found in a claim (an answer, an argument): its match when the verdict is "same". */
  groundMention(m: Mention, bound = Number.POSITIVE_INFINITY): FactMatch | undefined {
    const v = this.verdict(m, bound);
    return v.verdict === 'same' ? v.match : undefined;
  }

  /**
   * Whether what was observed states the fact a mention claims: "same", "different", or "can't
   * tell" when the text or the world does not settle it — a date that is December 1 day first and
   * January 12 month first and only one of them observed, an amount matched only by one the world
   * may state in another unit or currency.
   */
  verdict(m: Mention, bound = Number.POSITIVE_INFINITY): Verdict {
    if (m.alternatives !== undefined && m.alternatives.length > 0) {
      // A reading in a currency the run never states an amount in, beside one in a currency it does, is dropped.
      const inRun = m.alternatives.filter((a) => a.currencies?.some((c) => this.currencies.has(c)) ?? true);
      const alternatives = inRun.length > 0 ? inRun : m.alternatives;
      const read = alternatives.map((a) => ({ as: a.as, v: this.readingsVerdict(a.claim, bound) }));
      if (read.every((r) => r.v.verdict === 'same')) return read[0]!.v;
      const either =
        m.either === true && this.options.oneReading !== true ? read.find((r) => r.v.verdict === 'same') : undefined;
      if (either !== undefined) return either.v;
      const hit = read.find((r) => r.v.verdict !== 'different');
      if (hit === undefined || hit.v.verdict === 'different') return { verdict: 'different', why: m.ambiguous };
      const miss = read.find((r) => r.v.verdict === 'different');
      const why = `${m.ambiguous} Read as ${hit.as} it matches ${shown(hit.v.match)}${miss ? `; read as ${miss.as} nothing does` : ''}`;
      return { verdict: 'cant-tell', why, match: hit.v.match };
    }
    if (m.ambiguous !== undefined && m.claim.length === 0) return { verdict: 'different', why: m.ambiguous };
    const whole = this.readingsVerdict(m.claim, bound);
    if (whole.verdict === 'same' || m.parts === undefined) return whole;
    // `123 456 789` not observed as one number: a list of numbers each observed.
    const parts = m.parts.map((p) => this.readingsVerdict(p, bound));
    return parts.every((p) => p.verdict === 'same') ? parts.at(-1)! : whole;
  }

  /**
   * The observation a change claimed with a direction has the other way (`fell 3.2%` against
   * `change: 3.2`): the number is right and the claim wrong.
   */
  oppositeOf(m: Mention, bound = Number.POSITIVE_INFINITY): FactMatch | undefined {
    if (m.opposite === undefined || m.opposite.length === 0) return undefined;
    const v = this.readingsVerdict(m.opposite, bound);
    return v.verdict === 'same' ? v.match : undefined;
  }

  /** The verdict on claim readings: a sure match, a loose one the run's currencies allow, a maybe. */
  private readingsVerdict(readings: Reading[], bound: number): Verdict {
    const sure = this.first(
      readings.filter((r) => r.loose === undefined && r.weak === undefined),
      bound,
    );
    if (sure !== undefined) return { verdict: 'same', match: sure };
    const looseReadings = readings.filter((r) => r.loose !== undefined && r.weak === undefined);
    const loose = this.first(looseReadings, bound);
    if (loose !== undefined) {
      const named = looseReadings[0]!.loose!;
      const others = [...this.currencies].filter((c) => !named.includes(c)).sort();
      if (others.length === 0) return { verdict: 'same', match: loose };
      const why = `${shown(loose)} names no currency, and amounts are observed in ${others.join(', ')}`;
      return { verdict: 'cant-tell', why, match: loose };
    }
    const weakReadings = readings.filter((r) => r.weak !== undefined);
    const weak = this.first(weakReadings, bound);
    if (weak !== undefined)
      return { verdict: 'cant-tell', why: `${weakReadings[0]!.weak}: ${shown(weak)}`, match: weak };
    const maybeMatch = this.first(readings.map(maybe), bound);
    if (maybeMatch !== undefined)
      return { verdict: 'cant-tell', why: `it matches only ${shown(maybeMatch)}`, match: maybeMatch };
    return { verdict: 'different' };
  }

  /**
   * The availability claims of a text ("Hotel Lumen is sold out", "3 rooms left at the Grand")
   * whose subject is an object observed with availability, each with its verdict against that
   * object's latest observation (any observation, for a claim about the past). A claim about
   * anything else is not returned: it is neither grounded nor refuted.
   */
  stockVerdicts(text: string, bound = Number.POSITIVE_INFINITY): StockVerdict[] {
    return this.stock.claims(text, bound);
  }

  /**
   * Grounds an id-like value an action uses or a claim names: by its core (case, punctuation
   * and a leading `#` folded; `O-7713` ~ `o7713` ~ `O 7713`), by its digits when it is a prefix
   * plus a number (`#7713` grounds `O-7713`), else as a phrase of words.
   */
  groundId(value: string, bound = Number.POSITIVE_INFINITY): FactMatch | undefined {
    const v = value.trim();
    if (v === '') return undefined;
    const readings = idReadings(v, 'claim');
    const bare = /^#?(\d{3,})$/.exec(v)?.[1];
    if (bare !== undefined) readings.push({ dim: 'dg', key: `dgn:${bare}` }, { dim: 'dg', key: `dgi:${bare}` });
    return this.first(readings, bound) ?? this.groundPhrase(v, bound);
  }

  /** Grounds a phrase (a name, an email, a code) when each of its words, pair by pair, was observed. */
  groundPhrase(text: string, bound = Number.POSITIVE_INFINITY): FactMatch | undefined {
    const tokens = words(text);
    if (tokens.length === 0) return undefined;
    const keys = tokens.length === 1 ? tokens : tokens.slice(1).map((t, i) => `${tokens[i]} ${t}`);
    const phrases = this.phraseIndex();
    let latest: Entry | undefined;
    for (const k of keys) {
      const e = phrases.get(k);
      if (e === undefined || e.source.pos > bound) return undefined;
      if (latest === undefined || e.source.pos > latest.source.pos) latest = e;
    }
    return latest && { source: latest.source, observed: text };
  }

  /**
   * Grounds a value as a structured source states it: a number under its key (`amount_cents`
   * 12999 is grounded by "$129.99"), a string as an id, then as the facts it mentions.
   */
  /** The verdict on a number found under `key` (`amount_cents` 12999 against what was observed). */
  valueVerdict(value: number, key?: string, bound = Number.POSITIVE_INFINITY): Verdict {
    if (!Number.isFinite(value)) return { verdict: 'different' };
    return this.readingsVerdict(keyedClaim(value, key), bound);
  }

  groundValue(value: unknown, key?: string, bound = Number.POSITIVE_INFINITY): FactMatch | undefined {
    if (typeof value === 'number')
      return Number.isFinite(value) ? this.first(keyedClaim(value, key), bound) : undefined;
    if (typeof value !== 'string') return undefined;
    return this.groundId(value, bound) ?? this.groundText(value, bound);
  }

  /**
   * Grounds a claim written as text: every fact mentioned in it must be grounded (or, when it
   * mentions none, the text as a phrase). Returns the match of the last fact checked.
   */
  groundText(text: string, bound = Number.POSITIVE_INFINITY): FactMatch | undefined {
    const mentions = mentionsIn(text, this.dayOption()).filter((m) => m.unread === undefined);
    if (mentions.length === 0) return this.groundPhrase(text, bound);
    let match: FactMatch | undefined;
    for (const m of mentions) {
      match = this.groundMention(m, bound);
      if (match === undefined) return undefined;
    }
    return match;
  }
}

/** A number claimed under `key`: as written, and under a key that names a fall, that fall too (`discount: 20`). */
function keyedClaim(value: number, key: string | undefined): Reading[] {
  const readings = valueReadings(value, key, 'claim');
  return value > 0 && isDownKey(key)
    ? [...readings, ...readings.filter(signable).map((r) => signed(r, 'down'))]
    : readings;
}

function lowerBound(values: number[], x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
