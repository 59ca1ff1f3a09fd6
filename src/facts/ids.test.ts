import { describe, expect, it } from 'vitest';
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
