// Currencies as people write them: ISO codes, symbols (a bare `$` names a family of dollars),
// prefixed dollars (`C$`, `US$`), words, and how many digits each one's minor unit has.
import { isMicrosKey, isMinorUnitKey, keyWords } from './written.js';

/** The ISO 4217 codes the reader knows, written before or after an amount (`EUR 12,50`, `1299 JPY`). */
export const CURRENCY_CODES = [
  'USD',
  'EUR',
  'GBP',
  'JPY',
  'CAD',
  'AUD',
  'CHF',
  'NZD',
  'HKD',
  'SGD',
  'CNY',
  'KRW',
  'INR',
  'MXN',
  'BRL',
  'SEK',
  'NOK',
  'DKK',
  'PLN',
  'CZK',
  'HUF',
  'ZAR',
  'TRY',
  'ILS',
  'AED',
  'SAR',
  'THB',
  'TWD',
  'ARS',
  'CLP',
  'COP',
  'KWD',
  'BHD',
  'OMR',
  'JOD',
  'TND',
  'VND',
  'ISK',
  'RUB',
  'PHP',
  'IDR',
  'MYR',
] as const;
const KNOWN: ReadonlySet<string> = new Set(CURRENCY_CODES);

export function isCurrencyCode(code: string): boolean {
  return KNOWN.has(code.toUpperCase());
}

/** Digits of the minor unit where ISO 4217 says other than 2: yen and won have none, dinars three. */
const MINOR_DIGITS: Record<string, number> = {
  JPY: 0,
  KRW: 0,
  CLP: 0,
  VND: 0,
  ISK: 0,
  KWD: 3,
  BHD: 3,
  OMR: 3,
  JOD: 3,
  TND: 3,
};

/** How many digits an amount in `code` has after the decimal point (2 when the currency is not known). */
export function minorDigits(code: string | undefined): number {
  return code === undefined ? 2 : (MINOR_DIGITS[code.toUpperCase()] ?? 2);
}

/**
 * The one home for the unit of a key: how many of its units make one of its currency's —
 * `cost_micros` 1e6, `total_cents` / `amount_minor` 100 (the minor unit of the key's or the
 * given currency: `amount_minor` in JPY is 1), any other key 1.
 */
export function unitsPerMajor(key: string, currency?: string): number {
  if (isMicrosKey(key)) return 1e6;
  if (!isMinorUnitKey(key)) return 1;
  return (
    10 **
    minorDigits(
      keyWords(key)
        .map((w) => w.toUpperCase())
        .find(isCurrencyCode) ?? currency,
    )
  );
}

const DOLLARS = ['USD', 'CAD', 'AUD', 'NZD', 'HKD', 'SGD', 'MXN', 'TWD', 'ARS', 'CLP', 'COP'];

/**
 * Symbols by the currencies they may name, the usual one first: a bare `$` is any dollar (or peso)
 * — "$129.99" restates CAD 129.99 as well as USD — and `¥` yen or yuan. Observed, a symbol is read
 * as its first currency and only maybe as the others.
 */
export const CURRENCY_SYMBOLS: Record<string, readonly string[]> = {
  $: DOLLARS,
  '€': ['EUR'],
  '£': ['GBP'],
  '¥': ['JPY', 'CNY'],
  '₩': ['KRW'],
  '₹': ['INR'],
  '₪': ['ILS'],
  '₺': ['TRY'],
  '₽': ['RUB'],
  '₱': ['PHP'],
};
/** The symbol pattern: prefixed dollars (`C$`, `CA$`, `A$`, `US$`, `NZ$`, `HK$`, `S$`, `R$`…) before bare symbols. */
const PREFIXED: Record<string, string> = {
  US: 'USD',
  CA: 'CAD',
  C: 'CAD',
  A: 'AUD',
  AU: 'AUD',
  NZ: 'NZD',
  HK: 'HKD',
  S: 'SGD',
  SG: 'SGD',
  MX: 'MXN',
  NT: 'TWD',
  R: 'BRL',
  CN: 'CNY',
  RMB: 'CNY',
  JP: 'JPY',
};
export const SYMBOL = `(?:(?<![A-Za-z])(?:${Object.keys(PREFIXED)
  .sort((a, b) => b.length - a.length)
  .join('|')})[$¥]|[${Object.keys(CURRENCY_SYMBOLS).join('')}])`;

/** The currencies a written symbol may name: `C$` CAD, `$` any dollar, `€` EUR. */
export function symbolCurrencies(symbol: string): readonly string[] | undefined {
  const prefix = symbol.slice(0, -1);
  if (prefix !== '') return PREFIXED[prefix] === undefined ? undefined : [PREFIXED[prefix]];
  return CURRENCY_SYMBOLS[symbol];
}

/** The currencies called dollars (a bare `$` also names pesos; the word `dollars` never does). */
const DOLLAR_WORD = ['USD', 'CAD', 'AUD', 'NZD', 'HKD', 'SGD', 'TWD'];
const PESOS = ['MXN', 'ARS', 'CLP', 'COP'];

export const CURRENCY_WORDS: Record<string, readonly string[]> = {
  dollar: DOLLAR_WORD,
  dollars: DOLLAR_WORD,
  peso: PESOS,
  pesos: PESOS,
  euro: ['EUR'],
  euros: ['EUR'],
  pound: ['GBP'],
  pounds: ['GBP'],
  yen: ['JPY'],
  yuan: ['CNY'],
  won: ['KRW'],
  rupee: ['INR'],
  rupees: ['INR'],
};

/** A currency word after an amount (`30 dollars`, `twelve euros`): the regex alternatives, longest first. */
export const CURRENCY_WORD = Object.keys(CURRENCY_WORDS)
  .sort((a, b) => b.length - a.length)
  .join('|');

/** The currency a key names by its last word (`amount_usd`, `priceEur`), if any. */
export function currencyOfKey(key: string): string | undefined {
  const words = keyWords(key);
  const last = words.at(-1)?.toUpperCase();
  return last !== undefined && KNOWN.has(last) && words.length > 1 ? last : undefined;
}

/** A value found under `foundKey`, in the unit `wantKey` names: cents or millionths to dollars and back. */
export function inUnitOf(value: unknown, foundKey: string, wantKey: string): number {
  const n = Number(value);
  return (n / unitsPerMajor(foundKey)) * unitsPerMajor(wantKey);
}
