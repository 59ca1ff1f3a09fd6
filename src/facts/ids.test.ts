import { describe, expect, it } from 'vitest';
import { FactIndex } from './fact-index.js';
import { idTokens, looksLikeId, usedValues } from './ids.js';

describe('which argument values are ids to ground', () => {
  it('takes id-named keys and letter-digit tokens, not dates, prices or prose', () => {
    const used = usedValues({
      flight_id: 'FL-102',
      passengerId: 'P-100',
      date: '2026-11-25',
      max_price: 300,
      note: 'Booked F9 1021 for Dana',
      seat: '12A',
      to: 'DEN',
    }).map((u) => u.value);
    expect(used).toEqual(['FL-102', 'P-100', '12A']);
  });

  it('reads ids out of URLs and file paths', () => {
    expect(usedValues({ url: 'http://127.0.0.1:8787/bookings/BK-0001?passenger=P-102' }).map((u) => u.value)).toEqual([
      'BK-0001',
      'P-102',
    ]);
    expect(usedValues({ path: 'confirmations/BK-0001.md' }).map((u) => u.value)).toEqual(['BK-0001']);
    expect(usedValues({ path: 'traveler.json' })).toEqual([]);
  });

  it('finds id tokens in text, not dates', () => {
    expect(looksLikeId('2026-11-25')).toBe(false);
    expect(idTokens('Booked F9 1021 for Dana Reyes, confirmation BK-0001.')).toEqual(['BK-0001']);
  });
});

describe('a file name made of words and an id names the id, not the words', () => {
  // [file name or token, the ids it names]
  const cases: Array<[string, string[]]> = [
    ['refund-4412.md', ['4412']],
    ['notes/refund_note-4412.txt', ['4412']],
    ['Refund-RF-0002.md', ['RF-0002']],
    ['receipt.INV-2031.pdf', ['INV-2031']],
    ['4412-refund-RF-0002.json', ['4412', 'RF-0002']],
    ['confirmations/BK-0001.md', ['BK-0001']],
    ['INV-2031.pdf', ['INV-2031']],
    ['report-2026-11-24.md', []],
    ['notes-2.md', []],
    ['summary.md', []],
  ];
  it.each(cases)('%s names %j', (file, ids) => {
    expect(usedValues({ file }).map((u) => u.value)).toEqual(ids);
  });
  it.each(cases)(
    '%s is grounded when its ids were seen (a task that says #4412, RF-0002, INV-2031, BK-0001)',
    (file) => {
      const facts = new FactIndex();
      facts.add('My order #4412 arrived broken. Refund RF-0002, invoice INV-2031, booking BK-0001.', {
        pos: 0,
        label: 'the task',
      });
      for (const used of usedValues({ file })) expect(facts.groundId(used.value), used.value).toBeDefined();
    },
  );
  it('a value under an id key is still taken whole', () => {
    expect(usedValues({ reference: 'refund-4412' }).map((u) => u.value)).toEqual(['refund-4412']);
  });
});
