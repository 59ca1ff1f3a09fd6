// Money as people write it: symbols and codes before or after (`$129.99`, `C$129.99`, `EUR 12,50`,
// `12,50 €`, `CHF 1'234.50`), either separator convention, accounting negatives (`($25.00)`,
// `-$25`, `$-25`, `−25 €`, `25.00 CR`), cents and currency words, and an amount's readings in the
// currencies it may be in. How many decimals a currency has decides `¥12.999` (twelve thousand)
// and `KWD 1.250` (one and a quarter); for others the rest of the text does, else it is ambiguous.
import { decimalComma } from './conventions.js';
import { CURRENCY_CODES, CURRENCY_WORD, CURRENCY_WORDS, minorDigits, SYMBOL, symbolCurrencies } from './currencies.js';
import {
  ambiguousMention,
  at,
  type Conventions,
  type Made,
  MONEY_DIMS,
  type Pass,
  pass,
  type Reading,
} from './readings.js';
import { FEW_NUMBER_WORDS, wordsValue } from './words.js';
import { AMOUNT, MAGNITUDE, NUM_START, parseAmount } from './written.js';

/**
 * An amount claimed in `currencies` (undefined: none written): found among amounts in one of them,
 * or — loosely — among amounts observed with no currency and bare numbers; with no currency written
 * among amounts in any. A positive amount also restates a negative one's size (`mag`: "refunded $25").
 */
export function moneyClaim(value: number, tolerance: number, currencies: readonly string[] | undefined): Reading[] {
  const out =
    currencies === undefined
      ? ['n', ...MONEY_DIMS].map((d) => at(d, value, tolerance))
      : [
          ...currencies.map((c) => at(`$${c}`, value, tolerance)),
          ...['n$', '$'].map((d) => ({ ...at(d, value, tolerance), loose: currencies })),
        ];
  if (value > 0) out.push(at('mag', value, tolerance));
  return out;
}

/**
 * An amount observed in `currencies`: in the first surely, in the others (a bare `$`: CAD, AUD…)
 * maybe. A negative amount's size restates it surely only under a key that names a flow whose
 * sign is a ledger's convention (`refund_cents: -2500` is "refunded $25.00", `flow`); else maybe:
 * a balance of -25 stated as "$25" may be the sum owed or a sign dropped.
 */
export function moneyObserved(value: number, currencies: readonly string[] | undefined, flow = false): Reading[] {
  const [first, ...others] = currencies ?? [];
  const out: Reading[] = first === undefined ? [at('$', value)] : [at(`$${first}`, value), at('$*', value)];
  for (const c of others) out.push({ ...at(`$${c}`, value), unsure: `the symbol names ${first} or ${c}` });
  if (value < 0) out.push(flow ? at('mag', -value) : { ...at('mag', -value), unsure: UNSIGNED });
  return out;
}

const UNSIGNED = 'a negative amount, stated without its sign';

/** Keys of money that flows one way, whose sign only says which (a refund of -25 is a refund of 25). */
const FLOW_WORDS = new Set([
  'refund',
  'refunded',
  'credit',
  'debit',
  'discount',
  'fee',
  'charge',
  'payment',
  'paid',
  'tax',
  'cost',
  'withdrawal',
  'payout',
  'chargeback',
  'deduction',
  'spent',
]);

/** Whether a key names a flow of money (`refund_cents`, `feeAmount`): a negative's size then restates it. */
export function isFlowKey(words: readonly string[]): boolean {
  return words.some((w) => FLOW_WORDS.has(w));
}

/** The readings of a negative amount's size under a key: sure for a flow, else a maybe. */
export function unsignedObserved(value: number, words: readonly string[]): Reading {
  return isFlowKey(words) ? at('mag', value) : { ...at('mag', value), unsure: UNSIGNED };
}

const CODES = CURRENCY_CODES.join('|');
/** A code written before an amount: with a space (`KWD 1.250`), or glued for the common ones (`USD40`); `BHD1000` is an id. */
const CODE_BEFORE = `\\b(?:(${CODES})\\s|(USD|EUR|GBP|JPY|CAD|AUD|CHF)\\s?)`;
/**
 * A scale after an amount (MAGNITUDE): `$1.2k`, `$1.2M`, `€3bn`, `$5MM`, `USD 2 million`; a lone
 * `m`, `b`, `T` only glued to it (`$1.2m`, `$3b`), never `$20 T-shirts`.
 */
const SCALE =
  '(?:\\s?(k|K|MM|mm|mln|mn|Mio|M|(?<!\\s)m|bln|bn|Mrd|B|(?<!\\s)b|tn|(?<!\\s)T|thousand|million|billion|trillion)\\b)?';

/**
 * An amount as written, signed, in `currencies`; `12.999` is read by the currencies' decimals,
 * else by the text. A symbol of currencies with different decimals (`¥`: yen has none, yuan two)
 * reads it per currency: twelve thousand yen, or (with nothing in the text to say) twelve yuan
 * or twelve thousand — each reading naming its currencies, so the run's own may settle it.
 */
function money(
  negative: boolean,
  written: string,
  currencies: readonly string[] | undefined,
  scaleWord: string | undefined,
  conventions: () => Conventions,
): Made | undefined {
  const scale = scaleWord === undefined ? 1 : MAGNITUDE[scaleWord]!;
  const read = (thousands: boolean | undefined, cur = currencies) => {
    const parsed = parseAmount(written, thousands);
    if (parsed === undefined || parsed === 'ambiguous') return undefined;
    const value = (negative ? -1 : 1) * parsed.value * scale;
    const tol = 0.5 * 10 ** -parsed.decimals * scale;
    return { value, claim: moneyClaim(value, tol, cur), observed: moneyObserved(value, cur) };
  };
  const parsed = parseAmount(written);
  if (parsed === undefined) return undefined;
  const named = currencies === undefined ? {} : { currencies };
  if (parsed !== 'ambiguous') return { kind: 'money', ...named, ...read(undefined)! };
  // `12.999`: a dot before three digits. A currency with no minor unit has no decimals; one with
  // three has three; else the text's other numbers say which separator is decimal.
  const none = currencies?.filter((c) => minorDigits(c) === 0) ?? [];
  const three = currencies?.filter((c) => minorDigits(c) === 3) ?? [];
  const rest = currencies?.filter((c) => minorDigits(c) === 2) ?? [];
  const byText = rest.length > 0 || currencies === undefined ? decimalComma(conventions()) : undefined;
  if (none.length + three.length + rest.length > 1 && none.length + three.length > 0) {
    // Currencies that disagree (`¥`: JPY none, CNY two): one reading per number, each in its currencies.
    const thousandsIn = [...none, ...(byText === false ? [] : rest)];
    const decimalsIn = [...three, ...(byText === true ? [] : rest)];
    const readings = [
      ...(thousandsIn.length > 0 ? [{ cur: thousandsIn, r: read(true, thousandsIn)! }] : []),
      ...(decimalsIn.length > 0 ? [{ cur: decimalsIn, r: read(false, decimalsIn)! }] : []),
    ];
    if (readings.length === 1) return { kind: 'money', currencies: readings[0]!.cur, ...readings[0]!.r };
    return ambiguousMention(
      'money',
      `${written}: thousands or decimals?`,
      readings.map(({ cur, r }) => ({ as: `${cur.join('/')} ${r.value}`, ...r, currencies: cur })),
    );
  }
  const comma = none.length > 0 ? true : three.length > 0 ? false : byText;
  if (comma !== undefined) return { kind: 'money', ...named, ...read(comma)! };
  const [asThousands, asDecimals] = [read(true)!, read(false)!];
  return {
    ...ambiguousMention('money', `${written}: thousands or decimals?`, [
      { as: String(asThousands.value), ...asThousands },
      { as: String(asDecimals.value), ...asDecimals },
    ]),
  };
}

/** `CR` / `DR` after an amount: a credit is written as a negative (a debit-normal ledger's sign). */
const LEDGER = '(?:\\s?(CR|DR|Cr|Dr)\\b)?';

/** A whole number in digits or words, and its value. */
function whole(text: string): number | undefined {
  return /^\d+$/.test(text) ? Number(text) : wordsValue(text)?.value;
}

/** A word just before an amount's parentheses: in prose they may set it aside rather than make it negative. */
const ASIDE_BEFORE = /\p{L}\.?\s{1,2}$/u;

export const MONEY_PASSES: Pass[] = [
  // Dollars and cents in words: 129 dollars and 99 cents, one hundred twenty-nine dollars and ninety-nine cents.
  pass(
    new RegExp(
      `(?<![\\w.,])(\\d+|${FEW_NUMBER_WORDS})\\s+(dollars?|euros?|pounds?)\\s+and\\s+(\\d{1,2}|${FEW_NUMBER_WORDS})\\s+(?:cents?|pence)\\b`,
      'gi',
    ),
    (m) => {
      const [units, cents] = [whole(m[1]!), whole(m[3]!)];
      if (units === undefined || cents === undefined || cents > 99 || !Number.isInteger(cents)) return undefined;
      const value = units + cents / 100;
      const currencies = CURRENCY_WORDS[m[2]!.toLowerCase()];
      return {
        kind: 'money',
        value,
        claim: moneyClaim(value, 0.005, currencies),
        observed: moneyObserved(value, currencies),
      };
    },
    false,
  ),
  // Accounting parentheses: ($25.00), (€1.299,00), (25.00 USD) — a negative amount; but not right
  // after another amount, which they restate (`129.99 GBP (£129.99)`, `$130 ($129.99)`): read as written.
  pass(
    new RegExp(
      `(?<![\\w.])(?<!\\d\\s{0,2}(?:[A-Za-z]{3}|${SYMBOL})?\\s{0,2})(?:\\((?:(${SYMBOL})\\s?|\\b(${CODES})\\s?)${AMOUNT}\\)|\\(${AMOUNT}\\s?(${CODES}|${SYMBOL})\\))`,
      'g',
    ),
    (m, c) => {
      const args = [m[3] ?? m[4]!, currenciesOf(m[1] ?? m[2] ?? m[5]!), undefined, c] as const;
      const negative = money(true, ...args);
      // After a word in running text (`incl. VAT (€19.16)`, `the blender ($89.99)`) it may be an aside
      // as well as a negative (`Refunds ($25.00)`): the claim is grounded by either, observed it stays negative.
      if (!ASIDE_BEFORE.test(m.input.slice(Math.max(0, m.index - 24), m.index))) return negative;
      const positive = money(false, ...args);
      if (negative === undefined || positive === undefined || negative.value === undefined) return negative;
      if (negative.alternatives !== undefined || positive.alternatives !== undefined) return negative;
      return {
        ...negative,
        claim: [],
        alternatives: [
          { as: 'a negative', claim: negative.claim, observed: [] },
          { as: 'an aside', claim: positive.claim, observed: [] },
        ],
        either: true,
      };
    },
  ),
  // Money: $129.99, -$25, $-25, C$129.99, €1.299,00, $1.2k, USD 40, 25.00 CR.
  pass(
    new RegExp(`(?:(?<![\\w.])([-−])\\s?)?(?:(${SYMBOL})\\s?|${CODE_BEFORE})${AMOUNT}${SCALE}${LEDGER}`, 'g'),
    (m, c) => signed(m[1], m[5]!, currenciesOf(m[2] ?? m[3] ?? m[4]!), m[6], m[7], c),
  ),
  // 1 299,00 €, 40 USD, 12,50 EUR, 30 dollars, 1.2 million dollars, 3M EUR, 25.00 USD CR, 12999 cents.
  pass(
    new RegExp(
      `${NUM_START}${AMOUNT}${SCALE}\\s?(${CODES}|${SYMBOL}|${CURRENCY_WORD}|cents?|¢)(?![A-Za-z])${LEDGER}`,
      'g',
    ),
    (m, c) => {
      const unit = m[3]!;
      if (!/^(cents?|¢)$/.test(unit))
        return signed(undefined, m[1]!, currenciesOf(unit) ?? CURRENCY_WORDS[unit.toLowerCase()], m[2], m[4], c);
      if (m[2] !== undefined) return undefined;
      const parsed = parseAmount(m[1]!, false);
      if (parsed === 'ambiguous' || parsed === undefined) return undefined;
      const value = parsed.value / 100;
      const tol = (0.5 * 10 ** -parsed.decimals) / 100;
      return {
        kind: 'money',
        value,
        claim: moneyClaim(value, tol, undefined),
        observed: [at('q', parsed.value), ...moneyObserved(value, undefined)],
      };
    },
  ),
  // A ledger amount with no currency: 25.00 CR, 1,299.00 DR.
  pass(new RegExp(`${NUM_START}${AMOUNT}\\s?(CR|DR|Cr|Dr)\\b`, 'g'), (m, c) =>
    signed(undefined, m[1]!, undefined, undefined, m[2], c),
  ),
];

function currenciesOf(written: string): readonly string[] | undefined {
  return /^[A-Z]{3}$/.test(written) ? [written] : symbolCurrencies(written);
}

/** The sign is a minus before the amount or in it (`-$25`, `$-25`, `−25 €`), or a ledger's `CR`. */
function signed(
  minus: string | undefined,
  written: string,
  currencies: readonly string[] | undefined,
  scaleWord: string | undefined,
  ledger: string | undefined,
  c: () => Conventions,
): Made | undefined {
  const inner = /^[-−]/.test(written);
  const body = written.replace(/^[-−]/, '');
  const credit = ledger !== undefined && ledger.toUpperCase() === 'CR';
  if (ledger !== undefined && (minus !== undefined || inner)) return undefined;
  return money((minus !== undefined) !== inner || credit, body, currencies, scaleWord, c);
}

export const MONEY_KEY_WORDS = new Set([
  'amount',
  'refund',
  'total',
  'subtotal',
  'price',
  'balance',
  'cost',
  'fee',
  'charge',
  'credit',
  'debit',
  'paid',
  'payment',
  'tax',
  'discount',
  'fare',
  'revenue',
  'budget',
  'salary',
  'income',
  'earnings',
  'profit',
  'sales',
  'spend',
  'spent',
  'rent',
  'deposit',
  'bill',
  'wage',
]);
