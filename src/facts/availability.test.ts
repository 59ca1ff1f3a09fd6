// Availability claims ("sold out", "no rooms left", "3 seats left", "in stock") against the object
// the sentence names: every wording against every observed form, both ways (a false pass before:
// nothing read them, so "the hotel is sold out" passed against `rooms_left: 3`), and no verdict
// where the subject is no observed object or another thing (a false fail is as bad).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLinearIn } from '../../test/support/linear-time.js';
import { FactIndex } from './index.js';

const RUNS = { seed: 20261202, numRuns: 200 };

function judge(observations: unknown[], answer: string): string[] {
  const index = new FactIndex();
  for (const [i, o] of observations.entries()) index.addValue(o, { pos: i, stepId: i + 1, label: `step ${i + 1}` });
  return index.stockVerdicts(answer).map((c) => c.verdict.verdict);
}

const NONE_SAID = [
  'is sold out',
  'is sold-out',
  'is fully booked',
  'has no rooms left',
  'has no more rooms available',
  'has 0 rooms left',
  'has zero rooms remaining',
  'is unavailable',
  'is not available',
  "isn't available",
  'is no longer available',
  'is out of stock',
  'has none remaining',
  'has no availability',
  'ist ausverkauft',
  'est épuisé',
  'está agotado',
  'non è disponibile',
  'is uitverkocht',
];
const SOME_SAID = [
  'is available',
  'is still available',
  'has rooms available',
  'is in stock',
  'has 3 rooms left',
  'has only two rooms left',
  'has a few rooms left',
  'is almost sold out',
  'is not sold out',
  'has limited availability',
  'ist noch verfügbar',
  'est disponible',
];
/** The same hotel observed as having rooms, in the forms APIs write it. */
const SOME_SEEN = (name: string) =>
  fc.constantFrom<Record<string, unknown>>(
    { name, rooms_left: 3 },
    { hotel_name: name, roomsAvailable: 3 },
    { id: 'H-7', title: name, available: 3 },
    { name, in_stock: true },
    { name, sold_out: false },
    { name, status: 'available' },
    { name, availability: 'https://schema.org/InStock' },
    { name, stock: { quantity: 1 }, quantity_available: 3 },
    { hotel: name, availability_status: 'LIMITED_AVAILABILITY' },
  );
const NONE_SEEN = (name: string) =>
  fc.constantFrom<Record<string, unknown>>(
    { name, rooms_left: 0 },
    { hotel_name: name, roomsAvailable: 0 },
    { id: 'H-7', title: name, available: 0 },
    { name, in_stock: false },
    { name, sold_out: true },
    { name, is_sold_out: 'true' },
    { name, status: 'SOLD_OUT' },
    { name, availability: 'http://schema.org/OutOfStock' },
    { hotel: name, stock_status: 'out-of-stock' },
  );
const NAME = fc.constantFrom('Hotel Lumen', 'Casa Müller', 'The Grand Budapest', 'Ryokan Sakura');

describe('availability claims about an observed object', () => {
  it('"sold out" and its kin against an object with rooms is different; against one with none, same', () => {
    fc.assert(
      fc.property(NAME, fc.constantFrom(...NONE_SAID), (name, said) => {
        const some = fc.sample(SOME_SEEN(name), { seed: name.length, numRuns: 9 });
        const none = fc.sample(NONE_SEEN(name), { seed: said.length, numRuns: 9 });
        for (const o of some)
          expect(judge([{ hotels: [o] }], `${name} ${said}.`), `${said} ${JSON.stringify(o)}`).toEqual(['different']);
        for (const o of none)
          expect(judge([{ hotels: [o] }], `${name} ${said}.`), `${said} ${JSON.stringify(o)}`).toEqual(['same']);
      }),
      RUNS,
    );
  });

  it('"available", "3 rooms left", "in stock" against an object with none is different; with some, same', () => {
    fc.assert(
      fc.property(NAME, fc.constantFrom(...SOME_SAID), (name, said) => {
        const none = fc.sample(NONE_SEEN(name), { seed: said.length, numRuns: 9 });
        const some = fc.sample(SOME_SEEN(name), { seed: name.length, numRuns: 9 });
        for (const o of none)
          expect(judge([[o]], `Good news: ${name} ${said}.`), JSON.stringify(o)).toEqual(['different']);
        for (const o of some) {
          const v = judge([[o]], `Good news: ${name} ${said}.`);
          // A count claimed against another count observed is wrong; against a state, only the state is checked.
          const counted =
            /\b(?:3|two)\b/.test(said) && typeof Object.values(o).find((x) => typeof x === 'number') === 'number';
          expect(v, JSON.stringify(o)).toEqual([counted && !/\b3\b/.test(said) ? 'different' : 'same']);
        }
      }),
      RUNS,
    );
  });

  it('the subject after the claim, lists, and a claim per clause', () => {
    const world = [
      {
        results: [
          { id: 'H-1', name: 'Hotel Lumen', rooms_left: 0 },
          { id: 'H-2', name: 'Grand Vega', rooms_left: 4 },
          { id: 'H-3', name: 'Casa Sol', rooms_left: 0 },
        ],
      },
    ];
    expect(judge(world, 'There are no rooms left at Hotel Lumen.')).toEqual(['same']);
    expect(judge(world, 'Sold out: Grand Vega.')).toEqual(['different']);
    expect(judge(world, 'Hotel Lumen and Casa Sol are sold out.')).toEqual(['same']);
    expect(judge(world, 'Hotel Lumen, Grand Vega and Casa Sol are sold out.')).toEqual(['different']);
    expect(judge(world, 'Grand Vega has 4 rooms left, but Hotel Lumen is sold out.')).toEqual(['same', 'same']);
    expect(judge(world, 'Grand Vega has 2 rooms left, Hotel Lumen is sold out.')).toEqual(['different', 'same']);
    expect(judge(world, '| Hotel Lumen | $120 | sold out |\n| Grand Vega | $140 | 4 rooms left |')).toEqual([
      'same',
      'same',
    ]);
  });

  it('the latest observation counts; a claim about the past, any', () => {
    const before = { id: 'H-1', name: 'Hotel Lumen', rooms_left: 1 };
    const after = { id: 'H-1', name: 'Hotel Lumen', rooms_left: 0 };
    expect(judge([before, after], 'I booked the last room: Hotel Lumen is now sold out.')).toEqual(['same']);
    expect(judge([before, after], 'Hotel Lumen has 1 room left.')).toEqual(['different']);
    expect(judge([before, after], 'Hotel Lumen had 1 room left, which I booked.')).toEqual(['same']);
    // Two objects of that name seen at once (two dates) that disagree: can't tell.
    expect(
      judge(
        [
          [
            { name: 'Hotel Lumen', date: '2026-12-01', rooms_left: 0 },
            { name: 'Hotel Lumen', date: '2026-12-02', rooms_left: 2 },
          ],
        ],
        'Hotel Lumen is sold out.',
      ),
    ).toEqual(['cant-tell']);
  });

  it('no verdict when the subject is no observed object, is another thing, or the sentence claims nothing', () => {
    const world = [[{ id: 'H-1', name: 'Hotel Lumen', type: 'hotel', city: 'Denver', rooms_left: 3, parking: false }]];
    for (const answer of [
      'The Ritz is sold out.',
      "Hotel Lumen's spa packages are sold out.",
      'Hotel Lumen has no parking available.',
      'Hotel Lumen has 3 days left to book the rate.',
      'Is Hotel Lumen sold out?',
      'Hotel Lumen may be sold out by Friday.',
      'If Hotel Lumen is sold out, I will book the Grand.',
      'Hotel Lumen has a pool, but the breakfast is unavailable.',
      'Denver hotels are sold out.',
      'Hotel Lumen has fewer than 5 rooms left.',
      'Hotel Lumen has 3 nights available.',
    ])
      expect(judge(world, answer), answer).toEqual([]);
    // A key that is no availability (a balance, days left) is never read as one.
    expect(judge([{ name: 'Hotel Lumen', balance_remaining: 0, days_left: 0 }], 'Hotel Lumen is sold out.')).toEqual(
      [],
    );
    // A shared name (a kind) ties nothing; the specific one does.
    const two = [
      [
        { id: 'H-1', name: 'Hotel Lumen', type: 'hotel', rooms_left: 3 },
        { id: 'H-2', name: 'Casa Sol', type: 'hotel', rooms_left: 0 },
      ],
    ];
    expect(judge(two, 'The hotel is sold out.')).toEqual([]);
    expect(judge(two, 'The Casa Sol hotel is sold out.')).toEqual(['same']);
  });

  it('what a claim counts must be what the object counts', () => {
    const world = [{ event: { id: 'EV-9', name: 'Jazz Night', seats_left: 0, tickets_left: 12 } }];
    expect(judge(world, 'Jazz Night has no seats left.')).toEqual(['same']);
    expect(judge(world, 'Jazz Night has no tickets left.')).toEqual(['different']);
    expect(judge(world, 'Jazz Night has 12 tickets left.')).toEqual(['same']);
    expect(judge(world, 'Jazz Night has no tables left.')).toEqual([]);
  });
});

describe('availability claims stay linear in the text', () => {
  // Each claim walks its own clause only; names are found in one pass (the walk once searched the
  // whole text per claim: quadratic in a text of many claims).
  const SHAPES = ['sold out ', 'Hotel Lumen ', 'no rooms ', '3 rooms ', 'Hotel Lumen is sold out, ', 'is the '];
  it('each hostile shape takes time linear in its length', { timeout: 120_000 }, () => {
    const index = new FactIndex();
    index.addValue([{ name: 'Hotel Lumen', rooms_left: 0 }], { pos: 0, label: 'step 1' });
    for (const unit of SHAPES) expectLinearIn(unit, unit, (text) => index.stockVerdicts(text));
  });
});
