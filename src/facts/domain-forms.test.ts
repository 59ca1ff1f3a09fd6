// Forms met in runs of domains the suite had not tried (test/evaluate/unseen-domains.test.ts),
// generated over amounts: an amount in parentheses after a word in prose (`incl. VAT (€19.16)`, `the
// blender ($89.99)`) may be an aside as well as an accounting negative — either grounds it; after a
// colon or an amount it is read as before — and a number in an object that names its currency is an
// amount in that currency (`{ currency: 'EUR', gross: 120 }` is never $120).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FactIndex, mentionsIn } from './index.js';

const RUNS = { seed: 20261201, numRuns: 80 };
const AT = { pos: 1, stepId: 1, label: 'step 1' };
const cents = fc.integer({ min: 100, max: 9_999_999 });
const en = (v: number) => v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

function verdicts(obs: unknown, claim: string): string[] {
  const index = new FactIndex();
  index.addValue(obs, AT);
  return mentionsIn(claim).map((m) => index.verdict(m).verdict);
}

describe('an amount in parentheses', () => {
  it('after a word: an aside or a negative, either grounds it; another amount never does', () => {
    fc.assert(
      fc.property(cents, (c) => {
        const v = c / 100;
        for (const said of [`incl. VAT (€${en(v)})`, `the blender (€${en(v)}) is refunded`, `Refunds (€${en(v)})`]) {
          expect(verdicts({ vat: v, currency: 'EUR' }, said), said).toEqual(['same']);
          expect(verdicts({ refunds: -v, currency: 'EUR' }, said), said).toEqual(['same']);
          expect(verdicts({ vat: v + 0.01, currency: 'EUR' }, said), said).toEqual(['different']);
          expect(verdicts({ vat: v, currency: 'USD' }, said), said).toEqual(['different']);
        }
        // After a colon (a ledger line) it is the accounting negative, as before.
        expect(verdicts({ balance: v, currency: 'EUR' }, `Balance: (€${en(v)})`)).toEqual(['different']);
        expect(verdicts({ balance: -v, currency: 'EUR' }, `Balance: (€${en(v)})`)).toEqual(['same']);
      }),
      RUNS,
    );
  });
});

describe('a number in an object that names its currency', () => {
  it('is an amount in that currency, and still a number', () => {
    fc.assert(
      fc.property(cents, fc.constantFrom('gross', 'net_total', 'subtotal_value', 'x'), (c, key) => {
        const v = c / 100;
        const obs = { currency: 'EUR', [key]: v };
        expect(verdicts(obs, `€${en(v)}`), key).toEqual(['same']);
        expect(verdicts(obs, `${en(v)} EUR`), key).toEqual(['same']);
        expect(verdicts(obs, en(v)), key).toEqual(['same']);
        expect(verdicts(obs, `$${en(v)}`), key).toEqual(['different']);
        expect(verdicts(obs, `£${en(v)}`), key).toEqual(['different']);
      }),
      RUNS,
    );
  });
});
