// How an observed object states its amounts: the currency it names for them (`currency: "eur"`),
// which its nested objects with none of their own share, and whether it is Stripe's, whose
// amounts are in the currency's minor unit.
import { isCurrencyCode } from './currencies.js';
import { MONEY_KEY_WORDS } from './money.js';
import { keyWords } from './written.js';

/** Fields naming an object's currency; `unit` only when it holds a currency code (`{ value: 12, unit: 'EUR' }`). */
const CURRENCY_FIELDS = ['currency', 'currency_code', 'currencyCode', 'unit'];

/** The currency an object names for its amounts (`currency: 'eur'`), if it is one the reader knows. */
export function currencyField(value: Record<string, unknown>): string | undefined {
  for (const f of CURRENCY_FIELDS) {
    const c = value[f];
    if (typeof c === 'string' && isCurrencyCode(c)) return c.toUpperCase();
  }
  return undefined;
}

/** Stripe's amount keys: no other API names its fields so, and each is in the minor unit. */
const STRIPE_AMOUNT_KEYS = new Set([
  'unit_amount',
  'amount_total',
  'amount_subtotal',
  'amount_due',
  'amount_paid',
  'amount_remaining',
  'amount_refunded',
  'amount_captured',
  'amount_capturable',
  'amount_received',
  'amount_off',
  'application_fee_amount',
  'total_excluding_tax',
  'subtotal_excluding_tax',
]);

/**
 * An object as Stripe writes it: a lower-case ISO `currency` (`"usd"`), an `object` type or one of
 * Stripe's amount keys, and whole numbers only under its amount keys. Its amounts are in the
 * currency's minor unit (`amount_total: 12999` is $129.99); an object with a fraction among them
 * (`amount_total: 129.99`) is in major units, whatever its keys.
 */
export function stripeShaped(fields: Record<string, unknown>): boolean {
  const c = fields.currency;
  if (typeof c !== 'string' || !/^[a-z]{3}$/.test(c)) return false;
  const keys = Object.keys(fields);
  if (typeof fields.object !== 'string' && !keys.some((k) => STRIPE_AMOUNT_KEYS.has(k))) return false;
  return keys.every((k) => {
    const v = fields[k];
    return typeof v !== 'number' || Number.isInteger(v) || !keyWords(k).some((w) => MONEY_KEY_WORDS.has(w));
  });
}
