import { describe, expect, it } from 'vitest';
import { stateClaims } from './claims.js';
import { idTokens, looksLikeId, mentions, usedValues } from './values.js';

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

  it('matches whole tokens only, ignoring case', () => {
    expect(mentions('{"id":"FL-1020"}', 'FL-102')).toBe(false);
    expect(mentions('flights: FL-102, FL-106', 'fl-102')).toBe(true);
    expect(looksLikeId('2026-11-25')).toBe(false);
    expect(idTokens('Booked F9 1021 for Dana Reyes, confirmation BK-0001.')).toEqual(['BK-0001']);
  });
});

describe('state-change claims in the agent text', () => {
  it('finds past-tense claims and skips denials, plans and questions', () => {
    const claims = stateClaims(
      'I booked FL-102 for you. I could not book FL-101. I will send the receipt. Should I cancel BK-1? Saved the note.',
    );
    expect(claims.map((c) => c.verb)).toEqual(['booked', 'saved']);
    expect(claims[0]?.ids).toEqual(['FL-102']);
  });
});
