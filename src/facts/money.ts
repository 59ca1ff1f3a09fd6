// Money as people write it: symbols and codes before or after, either separator convention,
// cents and currency words, and an amount's readings in its currency.

import { at, type Mention, MONEY_DIMS, type Pass, pass, type Reading } from './readings.js';
import {
  AMOUNT,
  CURRENCY_CODES,
  CURRENCY_SYMBOLS,
  CURRENCY_WORDS,
  MAGNITUDE,
  NUM_START,
  parseAmount,
} from './written.js';
export function moneyClaim(value: number, tolerance: number, currency: string | undefined): Reading[] {
  const dims = currency === undefined ? ['n', ...MONEY_DIMS] : ['n', '$', `$${currency}`];
  const out = dims.map((d) => at(d, value, tolerance));
  if (value > 0) out.push(at('mag', value, tolerance));
  return out;
}

export function moneyObserved(value: number, currency: string | undefined): Reading[] {
  const out = [at(currency === undefined ? '$' : `$${currency}`, value)];
  if (value < 0) out.push(at('mag', -value));
  return out;
}

/** A percentage P% is P as a percentage, P/100 as a fraction, and P as a bare number only from 1 up (0.15% is not 0.15). */
const CODES = CURRENCY_CODES.join('|');
function money(
  sign: string | undefined,
  written: string,
  currency: string | undefined,
  scaleWord: string | undefined,
): Omit<Mention, 'start' | 'end' | 'text'> {
  const parsed = parseAmount(written);
  if (parsed === 'ambiguous' || parsed === undefined)
    return { kind: 'money', claim: [], observed: [], ambiguous: `${written}: thousands or decimals?` };
  const scale = scaleWord === undefined ? 1 : MAGNITUDE[scaleWord]!;
  const value = (sign === undefined ? 1 : -1) * parsed.value * scale;
  const tol = 0.5 * 10 ** -parsed.decimals * scale;
  return { kind: 'money', value, claim: moneyClaim(value, tol, currency), observed: moneyObserved(value, currency) };
}

export const MONEY_PASSES: Pass[] = [
  // Money: $129.99, -$25, €1.299,00, $1.2k, USD 40, 1 299,00 €, 40 USD, 12999 cents, 30 dollars.
  pass(
    new RegExp(
      `(?:(?<![\\w.])([-−])\\s?)?(?:([$€£¥])\\s?|\\b(${CODES})\\s?)${AMOUNT}(?:\\s?(k|K|M|bn|B|thousand|million|billion)\\b)?`,
      'g',
    ),
    (m) => money(m[1], m[4]!, m[2] === undefined ? m[3] : CURRENCY_SYMBOLS[m[2]], m[5]),
  ),
  pass(new RegExp(`${NUM_START}${AMOUNT}\\s?(${CODES}|dollars?|euros?|yen|cents?|¢|[$€£¥])(?![A-Za-z])`, 'g'), (m) => {
    const unit = m[2]!;
    if (!/^(cents?|¢)$/.test(unit))
      return money(undefined, m[1]!, CURRENCY_SYMBOLS[unit] ?? CURRENCY_WORDS[unit.toLowerCase()] ?? unit, undefined);
    const parsed = parseAmount(m[1]!);
    if (parsed === 'ambiguous' || parsed === undefined)
      return { kind: 'money', claim: [], observed: [], ambiguous: `${m[1]}: thousands or decimals?` };
    const value = parsed.value / 100;
    const tol = (0.5 * 10 ** -parsed.decimals) / 100;
    return {
      kind: 'money',
      value,
      claim: moneyClaim(value, tol, undefined),
      observed: [at('q', parsed.value), ...moneyObserved(value, undefined)],
    };
  }),
];
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
]);
