// The canonical readings a mention or a structured value is matched by, and the small builders the
// readers share: a reading at a dimension, a plain number's claim, digit and id keys, a reading pass.
import type { RunDay } from './relative-dates.js';
import { decimalsWritten, FRACTIONS, foldText, GROUP_MARK, type UnitEntry } from './written.js';

/** What a mention is. */
export type MentionKind = 'number' | 'money' | 'percent' | 'unit' | 'date' | 'time' | 'id';

/**
 * One canonical reading of a fact: a dimension and a value. Numbers read as `n` (plain value),
 * quantities also as their dimension in base units (`time` seconds, `length` metres, `mass`
 * grams, `data` bytes, `volume` litres); dates and times as keys (`d:2026-11-20`, `md:11-20`,
 * `t:13:05`, `dt:2026-11-20T13:05`, `mdt:11-20T13:05`); ids as `id:<CORE>` and `dg:<digits>`.
 */
export interface Reading {
  dim: string;
  /** Numeric readings. */
  value?: number;
  /** How far off a number may be and still be this fact (rounding: half a unit of the last written digit). */
  tolerance?: number;
  /** Keyed readings (dates, times, ids). */
  key?: string;
  /**
   * Observed: a reading the value only may have, and why (`01/12/2026` as 1 December: day or
   * month first?). A claim that matches only such readings is undecided, never grounded.
   */
  unsure?: string;
  /**
   * Claimed: a reading that matches an amount observed with no currency. It grounds the claim
   * when the run names no other currency than the claim's; else the claim is undecided.
   */
  loose?: readonly string[];
  /**
   * Claimed: a reading that, matched alone, leaves the claim undecided, and why (`fell 3.2%` against
   * a size of 3.2 observed with no sign: src/facts/framing.ts).
   */
  weak?: string;
}

export interface Mention {
  kind: MentionKind;
  /** The text as written. */
  text: string;
  start: number;
  end: number;
  /** The number (numeric kinds): dollars for money, the percentage for percent, the written value for units. */
  value?: number;
  /** Money: the currencies it may be in, as written (`$`: the dollars; none written: undefined). */
  currencies?: readonly string[];
  /** Readings to look the mention up by, as a claim (the most specific forms only). */
  claim: Reading[];
  /** Readings to index the mention by, as an observation (every form it may be restated in). */
  observed: Reading[];
  /** Why the mention cannot be read as one fact (`12.999`: thousands or decimals?); it then grounds nothing. */
  ambiguous?: string;
  /**
   * When the text does not settle which fact an ambiguous mention states, the facts it may state
   * (`01/12/2026`: 1 December or January 12): the world may settle it — every reading grounded,
   * none, or some (then the verdict is "can't tell").
   */
  alternatives?: Alternative[];
  /**
   * Either alternative the world holds grounds it: the writer meant one of them, and nothing in the
   * text says which (`03/04/2026` in a text that shows no convention is March 4 or 3 April).
   */
  either?: true;
  /**
   * Claimed: the numbers it may list instead (`123 456 789`: one number, or three ids); when the
   * whole is not grounded, the claim is when every part is.
   */
  parts?: Reading[][];
  /**
   * Read only so that its pieces are not, and given no verdict: a relative date (`tomorrow`, `in 14
   * days`) with no run day to read it against.
   */
  unread?: string;
  /** A change whose direction the words around it say (`fell 3.2%`, `a 3.2% rise`): src/facts/framing.ts. */
  direction?: 'up' | 'down';
  /**
   * Claimed with a direction: its readings the other way (`fell 3.2%` as +3.2), to say an observation
   * refutes it; denied (`negated`), the change denied (`did not fall 3.2%` as -3.2).
   */
  opposite?: Reading[];
  /** A change the words around it deny (`did not fall 3.2%`, `no $20 drop`): `unread`, no claim of its own. */
  negated?: true;
}

/**
 * One fact an ambiguous mention may state. `currencies`: the currencies this reading is in (`¥12.999`
 * is JPY 12999 or CNY 12.999); a reading in none of the currencies a run states amounts in, beside
 * one in some, is not a reading of that run.
 */
export interface Alternative {
  as: string;
  claim: Reading[];
  observed: Reading[];
  currencies?: readonly string[];
}

/** What the rest of a text shows of the way it writes numbers and dates. */
export interface Conventions {
  /** A date written day first (25/12/2026, 25.12.2026) or a decimal comma. */
  dayFirst: boolean;
  /** A date written month first that cannot be read otherwise (12/25/2026). */
  monthFirst: boolean;
  /** A decimal comma (1.299,00; 12,50 €; 1,5 kg). */
  decimalComma: boolean;
  /** A decimal point (1,299.00; $12.50; 129.99 USD). */
  decimalPoint: boolean;
}

/** An ambiguous mention of `kind`: the readings it may have, each observed only as a maybe. */
export function ambiguousMention(kind: MentionKind, why: string, alternatives: Alternative[]): Made {
  const observed = alternatives.flatMap((a) => a.observed.map((r) => ({ ...r, unsure: why })));
  return { kind, claim: [], observed, ambiguous: why, alternatives };
}

/** Half a unit of the last digit written: `12.5` -> 0.05, `130` -> 0.5, `1½` -> 0.25 (to the nearest half). */
export function halfUnit(text: string): number {
  const t = text.replace(GROUP_MARK, '');
  const fraction = FRACTIONS[t.at(-1)!];
  if (fraction !== undefined) return 0.5 / fraction[1];
  return 0.5 * 10 ** -decimalsWritten(t);
}

/** Relative float slack: far above a double's error (1e-16), far below a cent of ten billion (1e-12 of it). */
const EPS = 1e-13;

export function at(dim: string, value: number, tolerance = 0): Reading {
  return { dim, value, tolerance: Math.max(tolerance, EPS * Math.max(1, Math.abs(value))) };
}

/**
 * `value` of a unit in its dimension's base unit; data also as the unit's binary prefix reads it, in
 * a dimension of its own (`datab`), so that the two conventions are never mixed in one comparison
 * (`1,049 MB` is not 1000 MiB).
 */
export function baseReadings([dim, factor, binary]: UnitEntry, value: number, tolerance = 0): Reading[] {
  const out = [at(dim, value * factor, tolerance * factor)];
  if (binary !== undefined) out.push(at(`${dim}b`, value * binary, tolerance * binary));
  return out;
}

export function num(value: number, tolerance = 0): Reading {
  return at('n', value, tolerance);
}

/*
 * Numeric dimensions. `n`: a bare number (12, 0.15, a JSON number under a plain key). `q`: the
 * number as written of a quantity stated with a qualifier (the 90 of "90 min", the 12999 of
 * `total_cents`, the 15 of "15%"). `$USD`, `$EUR`…: an amount in that currency; `$`: an amount
 * in an unknown currency (cents); `$*`: an amount in any known one (indexed there too, so a
 * number claimed with no currency is one lookup, not one per currency). `pct`: a percentage as
 * written. `mag`: the size of a negative amount (a refund of -2500 cents is "a refund of
 * $25.00"). Base-unit dimensions (`time`…) hold
 * quantities. A claim looks only where its own kind of fact can be: a plain number anywhere but
 * quantities, an amount among bare numbers and amounts of its currency, a quantity among bare
 * numbers and quantities of its dimension — so "$129.99" is never grounded by "€129.99", "90 min"
 * never by "90 s".
 */
export const MONEY_DIMS = ['$', '$*'];

/**
 * A bare number observed where an amount may stand (free text, a money key, an object that names its
 * currency): `n`, and `n$`, which an amount claimed with a currency looks in when nothing says
 * otherwise, and `n%`, which a percentage claimed looks in. A number under another key (`qty: 20`)
 * is `n` alone: "$20" is not a count of 20, nor "20%" (a rate's key: `n%` too, see mentions.ts).
 */
export function bareObserved(value: number): Reading[] {
  return [num(value), at('n$', value), at('n%', value)];
}

export function plainClaim(value: number, tolerance = 0): Reading[] {
  return ['n', 'q', ...MONEY_DIMS].map((d) => at(d, value, tolerance));
}

/**
 * The digits of a bare integer (three or more, as written), for matching ids typed without their
 * prefix: observed as `dgn:` (a bare number was seen); as a claim it may also match the digits
 * of an observed prefixed id (`dgi:`), so "order 7713" is grounded by O-7713 and "#7713" grounds O-7713.
 */
export function digitKeys(text: string, role: 'claim' | 'observed'): Reading[] {
  if (!/^\d{3,}$/.test(text)) return [];
  const bare: Reading = { dim: 'dg', key: `dgn:${text}` };
  return role === 'observed' ? [bare] : [bare, { dim: 'dg', key: `dgi:${text}` }];
}

/** The core of an id: letters and digits only, upper case (`bk-0001`, `BK 0001`, `#BK0001` -> BK0001). */
export function idCore(id: string): string {
  return foldText(id)
    .replace(/[^\p{L}\p{N}]/gu, '')
    .toUpperCase();
}

const DIGIT_SEPARATOR = /(?<=\p{N})[^\p{L}\p{N}]+(?=\p{N})/gu;
const HAS_DIGIT_SEPARATOR = /\p{N}[^\p{L}\p{N}]+\p{N}/u;

/**
 * The keys an id's core is matched by. A separator between two digits is kept: it groups them
 * (`A-1-23` is not `A-12-3`, `ORD-2026-0001` not `ORD-202-60001`), so two ids written with such
 * separators match only where they put them; written without any (`ORD20260001`) either side
 * matches the other. An id with digit separators is observed under `ids:` (as grouped) and
 * `idn:` (its core, for a claim written without them); one without, under `id:`.
 */
function idCoreKeys(id: string, core: string, role: 'claim' | 'observed'): Reading[] {
  const folded = foldText(id);
  if (!HAS_DIGIT_SEPARATOR.test(folded)) {
    const plain: Reading = { dim: 'id', key: `id:${core}` };
    return role === 'claim' ? [plain, { dim: 'id', key: `idn:${core}` }] : [plain];
  }
  const grouped = folded
    .replace(DIGIT_SEPARATOR, '-')
    .replace(/[^\p{L}\p{N}-]|(?<!\p{N})-|-(?!\p{N})/gu, '')
    .toUpperCase();
  const keys: Reading = { dim: 'id', key: `ids:${grouped}` };
  return [keys, { dim: 'id', key: role === 'claim' ? `id:${core}` : `idn:${core}` }];
}

/** The digits of an id shaped prefix + number (`O-7713`, `ORD_7713` -> 7713), else undefined. */
export function idDigits(id: string): string | undefined {
  return /^[A-Za-z]{1,5}[-_ #.:/]?(\d{3,})$/.exec(id.trim())?.[1];
}

/**
 * The readings of an id: its core, and for a prefixed number its digits — which, as a claim,
 * match a bare number observed (`#7713` grounds O-7713) and, observed, match a bare number
 * claimed; two prefixed ids never match by digits alone (BK-0001 is not RF-0001).
 */
export function idReadings(id: string, role: 'claim' | 'observed'): Reading[] {
  const core = idCore(id);
  if (core === '') return [];
  const out: Reading[] = idCoreKeys(id, core, role);
  const digits = idDigits(id);
  if (digits !== undefined) out.push({ dim: 'dg', key: role === 'claim' ? `dgn:${digits}` : `dgi:${digits}` });
  return out;
}

/** One reading pass: a pattern, what a match reads as, and whether it can only match text with a digit. */
export interface Pass {
  re: RegExp;
  /**
   * `conventions` reads the rest of the text (once, and only when a form needs it); `day` is the
   * run's day, which relative dates are read against (none: they are unread).
   */
  make: (m: RegExpExecArray, conventions: () => Conventions, day: RunDay | undefined) => Made | undefined;
  digits: boolean;
}

export function pass(re: RegExp, make: Pass['make'], digits = true): Pass {
  return { re, make, digits };
}

/** What a reading pass makes of a match. */
export type Made = Omit<Mention, 'start' | 'end' | 'text'>;
