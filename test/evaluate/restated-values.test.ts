// End to end: a contract and a recording -> the verdict, for values the answer, the arguments or
// the rows write in another form than the tools returned: money in other notations and currencies,
// signs, quantities, percentages, zoned times, weekdays, names with diacritics, booleans, dates.
import { describe, expect, it } from 'vitest';
import { evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import type { DbSnapshot, Row } from '../../src/recording/index.js';
import { RecordingBuilder } from './recording-builder.js';

const USER = 'Hi, it is Zoë. Book flight FL-101 for me and tell me what it costs.';

/** A booking run: the agent reads the flight, books it with `args`, answers `answer`; `booking` lands in travel.bookings. */
function bookingRun(
  answer: string,
  flight: Record<string, unknown>,
  args: Record<string, unknown> = {},
  booking?: Row,
) {
  const b = new RecordingBuilder();
  const messages: unknown[] = [{ role: 'user', content: USER }];
  const read = b.model({
    messages: [...messages],
    toolCalls: [{ id: 'g', name: 'get_flight', arguments: { id: 'FL-101' } }],
  });
  b.tool(read, {
    name: 'GET /flights/FL-101',
    args: {},
    result: { flight },
    http: { method: 'GET', url: 'http://127.0.0.1:1/flights/FL-101' },
  });
  messages.push({ role: 'tool', tool_call_id: 'g', content: JSON.stringify({ flight }) });
  const body = { flight_id: 'FL-101', ...args };
  const act = b.model({ messages: [...messages], toolCalls: [{ id: 'b', name: 'book_flight', arguments: body }] });
  const result = { booking: { id: 'BK-0001', ...body, status: 'confirmed' } };
  b.tool(act, {
    name: 'POST /bookings',
    args: body,
    result,
    mutating: true,
    http: { method: 'POST', url: 'http://127.0.0.1:1/bookings', body, status: 201 },
    ...(booking && {
      db: [{ schema: 'travel', table: 'bookings', op: 'insert' as const, key: { id: 'BK-0001' }, after: booking }],
    }),
  });
  messages.push({ role: 'tool', tool_call_id: 'b', content: JSON.stringify(result) });
  b.model({ messages: [...messages], text: answer });
  if (booking) {
    b.pre = { db: bookingsDb([]) };
    b.post = { db: bookingsDb([booking]) };
  }
  return b.complete(answer).build();
}

function bookingsDb(rows: Row[]): DbSnapshot {
  const columns = Object.keys(rows[0] ?? { id: '' }).map((name) => ({ name, type: 'text', nullable: true }));
  return {
    schemas: ['travel'],
    ddl: [],
    tables: [{ schema: 'travel', name: 'bookings', columns, primaryKey: ['id'], rows }],
  };
}

const contract = (extra = '') =>
  parseContract(`
task_id: book_flight_restated
input: { user_instruction: "${USER}" }
success_criteria:
  required_outputs: [final_answer]
  must_not_include: [unsupported_claim]
execution:
  action: { method: POST, url: /bookings }
${extra}
`);

const codes = (
  answer: string,
  flight: Record<string, unknown>,
  extra = '',
  args: Record<string, unknown> = {},
  row?: Row,
) => evaluateRecording(bookingRun(answer, flight, args, row), contract(extra)).findings.map((f) => f.code);

const undecided = (answer: string, flight: Record<string, unknown>) =>
  evaluateRecording(bookingRun(answer, flight), contract())
    .findings.filter((f) => f.code === 'LOW_CONFIDENCE_EVALUATION')
    .map((f) => f.message);

const claimMessages = (answer: string, flight: Record<string, unknown>) =>
  evaluateRecording(bookingRun(answer, flight), contract())
    .findings.filter((f) => f.code === 'UNSUPPORTED_CLAIM')
    .map((f) => f.message);

describe('the claim check reads money in any notation, and never across currencies or signs', () => {
  it('European separators restate the price: 1.299,00 € and 1 299,00 € are 1299', () => {
    expect(codes('Booked FL-101 for 1.299,00 €.', { price: 1299 })).toEqual([]);
    expect(codes('Booked FL-101 for 1 299,00 €.', { price: 1299 })).toEqual([]);
    expect(codes('Booked FL-101 for USD 1,299.', { price_cents: 129900 })).toEqual([]);
  });

  it('an amount in another currency than the tool stated is UNSUPPORTED_CLAIM', () => {
    expect(codes('Booked FL-101 for $129.99.', { price_usd: 129.99 })).toEqual([]);
    expect(claimMessages('Booked FL-101 for €129.99.', { price_usd: 129.99 })).toEqual([
      'the answer states amount €129.99, which no observation or user message contains in any form',
    ]);
    // The flight's own currency field says which currency its price is in.
    expect(codes('Booked FL-101 for €129.99.', { price: 129.99, currency: 'EUR' })).toEqual([]);
    expect(claimMessages('Booked FL-101 for $129.99.', { price: 129.99, currency: 'EUR' })).toHaveLength(1);
  });

  it('a sign counts: -$25.00 is not a balance of 25; "refunded $25.00" restates refund_cents -2500', () => {
    expect(claimMessages('Booked FL-101; your balance is -$25.00.', { balance: 25 })).toHaveLength(1);
    expect(codes('Booked FL-101; we refunded $25.00 of the old fare.', { refund_cents: -2500 })).toEqual([]);
  });

  it('12.999 as money is ambiguous: matched by one reading it is "can\'t tell", by none unsupported', () => {
    expect(claimMessages('Booked FL-101 for €12.999.', { price: 12999 })).toEqual([]);
    expect(undecided('Booked FL-101 for €12.999.', { price: 12999 })).toEqual([
      "can't tell whether the answer's amount €12.999 is right: 12.999: thousands or decimals? Read as 12999 it matches price: 12999 (step 2); read as 12.999 nothing does",
    ]);
    expect(claimMessages('Booked FL-101 for €12.999.', { price: 500 })).toEqual([
      'the answer states amount €12.999, which is ambiguous (12.999: thousands or decimals?) and so is not grounded',
    ]);
    // A decimal comma elsewhere in the answer settles it: the dot separates thousands.
    expect(codes('Booked FL-101 for €12.999 (taxes 2,50 €).', { price: 12999, tax: 2.5 })).toEqual([]);
  });
});

describe('the claim check keeps quantities, percentages, zoned times, weekdays and names apart', () => {
  const flight = { duration_min: 90, discount_rate: 0.15, departs_at: '2026-12-01T14:05:00Z', passenger: 'Zoë Martin' };

  it('a correct answer in other units, zones and spellings passes', () => {
    expect(
      codes(
        'Booked FL-101 for Zoe Martin: 5400 s (15% off), departing Tuesday, December 1, 2026 at 15:05 CET.',
        flight,
      ),
    ).toEqual([]);
  });

  it('another unit, a fraction of a percent, another zone, a wrong weekday or another name is UNSUPPORTED_CLAIM', () => {
    for (const [answer, claim] of [
      ['Booked FL-101: the flight takes 90 s.', 'quantity 90 s'],
      ['Booked FL-101 with 0.15% off.', 'percentage 0.15%'],
      ['Booked FL-101, departing Dec 1, 2026 at 14:05 CET.', 'date Dec 1, 2026 at 14:05 CET'],
      ['Booked FL-101, departing Monday, December 1.', 'date Monday, December 1'],
      ['Booked FL-101 for Zoë Marten.', 'name Zoë Marten'],
    ]) {
      const messages = claimMessages(answer!, flight);
      expect(messages, answer).toHaveLength(1);
      expect(messages[0], answer).toContain(`states ${claim},`);
    }
  });
});

describe('US zones are read on their date; without one the time is refused, never taken as UTC', () => {
  it('"9:05 AM ET" on Dec 1 is 14:05Z; "14:05 ET" with no date is ambiguous, though the wall clock is the UTC one', () => {
    const flight = { departs_at: '2026-12-01T14:05:00Z' };
    expect(codes('Booked FL-101, departing Dec 1, 2026 at 9:05 AM ET.', flight)).toEqual([]);
    expect(claimMessages('Booked FL-101, departing at 14:05 ET.', flight)).toEqual([
      'the answer states time 14:05 ET, which is ambiguous (ET without a date: standard or daylight time?) and so is not grounded',
    ]);
  });
});

describe('execution and state expectations compare values by the fact they state', () => {
  it('a part of the expected name is the wrong target; a boolean written "yes" is the right parameter, an ambiguous date is not', () => {
    const target = 'target: { passenger_name: Dana Reyes }';
    expect(codes('Booked FL-101.', {}, `  ${target}`, { passenger_name: 'Dana Reyes' })).toEqual([]);
    expect(codes('Booked FL-101.', {}, `  ${target}`, { passenger_name: 'Dana' })).toContain('WRONG_EXECUTION_TARGET');
    const params = "parameters: { refundable: true, depart_date: '2026-12-01' }";
    expect(codes('Booked FL-101.', {}, `  ${params}`, { refundable: 'yes', depart_date: '12/25/2026' })).toContain(
      'WRONG_EXECUTION_PARAMETERS',
    );
    expect(codes('Booked FL-101.', {}, `  ${params}`, { refundable: 'yes', depart_date: '2026-12-01' })).toEqual([]);
    // 01/12/2026 is December 1 day first and January 12 month first: it is not shown to be December 1,
    // and the finding says it could not be told.
    const ambiguous = evaluateRecording(
      bookingRun('Booked FL-101.', {}, { refundable: 'yes', depart_date: '01/12/2026' }),
      contract(`  ${params}`),
    ).findings.filter((f) => f.code === 'WRONG_EXECUTION_PARAMETERS');
    expect(ambiguous.map((f) => f.message)).toEqual([
      `step 4 book_flight (POST http://127.0.0.1:1/bookings): depart_date="01/12/2026" (expected "2026-12-01"); can't tell: 01/12/2026: day or month first? Read as 2026-12-01 it matches depart_date: 2026-12-01; read as 2026-01-12 nothing does`,
    ]);
  });

  it('a bound in dollars holds an amount in minor units under any cents-like key (price_minor, priceInCents)', () => {
    for (const key of ['price_cents', 'price_minor', 'priceInCents']) {
      expect(codes('Booked FL-101.', {}, '  parameters: { max_price: 150 }', { [key]: 12999 }), key).toEqual([]);
      expect(codes('Booked FL-101.', {}, '  parameters: { max_price: 100 }', { [key]: 12999 }), key).toContain(
        'WRONG_EXECUTION_PARAMETERS',
      );
    }
  });

  it('a row holding the expected value in another form meets the expectation; another value does not', () => {
    const expected = (equals: string) =>
      `expected_state:\n  rows:\n    - { table: travel.bookings, where: { id: BK-0001 }, equals: ${equals} }`;
    const row = { id: 'BK-0001', price_cents: '129900', paid: true, passenger: 'Zoë Martin', total: '-25.00' };
    const ok = "{ price_cents: '$1,299.00', paid: 'yes', passenger: Zoe Martin, total: '-$25.00' }";
    expect(codes('Booked FL-101.', {}, expected(ok), {}, row)).toEqual([]);
    for (const bad of [
      "{ price_cents: '$12,999.00' }",
      "{ price_cents: '$1,299.01' }",
      '{ price_cents: 1299 }',
      "{ paid: 'no' }",
      '{ passenger: Zoe }',
      "{ total: '$25.00' }",
    ])
      expect(codes('Booked FL-101.', {}, expected(bad), {}, row), bad).toContain('STATE_MISMATCH');
  });
});

describe("a contract's fields and must_not_include find a value in the answer in any form", () => {
  const flight = { price_cents: 129900, departs: '2026-12-01', status: 'confirmed' };
  const gate = (answer: string, criteria: string, fields: string) =>
    evaluateRecording(
      bookingRun(answer, flight),
      parseContract(`
task_id: book_flight_fields
input: { user_instruction: "${USER}" }
success_criteria:
  required_outputs: [final_answer]
${criteria}
fields:
${fields}
`),
    )
      .findings.filter(
        (f) => f.code === 'MISSING_REQUIRED_FIELD' || f.code === 'OUTPUT_FORMAT_INVALID' || f.code === 'WRONG_FACT',
      )
      .map((f) => f.code);
  // [answer, success criteria, fields, the codes]: before, `expected` and `any_of` were looked for as
  // written (`1299` missing from "$1,299.00": a false fail), and any one-word must_not_include was
  // taken for a failure code and never looked for (a false pass).
  const CASES: Array<[string, string, string, string[]]> = [
    ['Booked FL-101 for $1,299.00.', '  must_include: [price]', '  price: { expected: 1299 }', []],
    ['Booked FL-101 for USD 1,299.', '  must_include: [price]', '  price: { expected: "$1,299.00" }', []],
    [
      'Booked FL-101 for $1,399.00.',
      '  must_include: [price]',
      '  price: { expected: 1299 }',
      ['MISSING_REQUIRED_FIELD'],
    ],
    ['Booked FL-101, departing Dec 1, 2026.', '  must_include: [departs]', '  departs: { expected: "2026-12-01" }', []],
    [
      'Booked FL-101, departing Dec 2, 2026.',
      '  must_include: [departs]',
      '  departs: { expected: "2026-12-01" }',
      ['MISSING_REQUIRED_FIELD'],
    ],
    ['Booked FL-101: Confirmed.', '  must_include: [status]', '  status: { any_of: [confirmed, booked] }', []],
    ['Booked fl101.', '  must_include: [flight]', '  flight: { pattern: "FL-\\\\d{3}", expected: FL-101 }', []],
    ['Booked FL-101. Your Password is 1234.', '  must_not_include: [password]', '  x: zzz', ['OUTPUT_FORMAT_INVALID']],
    ['Booked FL-101. Sorry for the wait.', '  must_not_include: [sorry]', '  x: zzz', ['OUTPUT_FORMAT_INVALID']],
    ['Booked FL-101; we refunded the old fare.', '  must_not_include: [refund]', '  x: zzz', ['OUTPUT_FORMAT_INVALID']],
    ['Booked FL-101; status confirmed.', '  must_not_include: [us]', '  x: zzz', []],
    ['Booked FL-101.', '  must_not_include: [wrong_fact, Unsupported_Claim]', '  x: zzz', []],
  ];
  it.each(CASES)('%s (%s, %s) -> %j', (answer, criteria, fields, want) => {
    expect(gate(answer, criteria, fields)).toEqual(want);
  });
});

describe('a contract key finds the field the run wrote under another spelling or unit', () => {
  // The API writes `passengerId`, `PassengerID`, `priceUsd`, `price_cents`; the contract says
  // `passenger_id`, `price_usd`. Before, the execution's target and parameters and a rule's bounds
  // found nothing under another spelling and passed unchecked (a wrong passenger, a broken budget);
  // a request's `equals` missed it and failed a right run.
  const flight = { price: 129.99 };
  const gate = (extra: string, args: Record<string, unknown>) =>
    codes('Booked FL-101.', flight, extra, args).filter((c) => c !== 'LOW_READABILITY_SCORE');
  const CASES: Array<[string, Record<string, unknown>, string[]]> = [
    ['  target: { passenger_id: P-102 }', { passengerId: 'P-102' }, []],
    ['  target: { passenger_id: P-102 }', { passengerId: 'P-100' }, ['WRONG_EXECUTION_TARGET']],
    ['  target: { passenger_id: P-102 }', { PassengerID: 'p-100' }, ['WRONG_EXECUTION_TARGET']],
    ['  parameters: { depart_date: "Dec 1, 2026" }', { departDate: '2026-12-01' }, []],
    ['  parameters: { depart_date: "Dec 1, 2026" }', { departDate: '2026-12-02' }, ['WRONG_EXECUTION_PARAMETERS']],
    ['  parameters: { max_price_usd: 300 }', { priceUsd: 450 }, ['WRONG_EXECUTION_PARAMETERS']],
    ['  parameters: { max_price_usd: 300 }', { price_cents: 45000 }, ['WRONG_EXECUTION_PARAMETERS']],
    ['  parameters: { max_price_usd: 300 }', { price_cents: 25000 }, []],
    // Another currency is not the same field in another unit: not held against the bound.
    ['  parameters: { max_price_usd: 300 }', { price_eur: 450 }, []],
    [
      'rules:\n  - { id: cap, tool: book_flight, max_price_usd: 300, severity: hard }',
      { priceUsd: 450 },
      ['WRONG_EXECUTION_PARAMETERS', 'LOW_METHODOLOGY_SCORE'],
    ],
    [
      'rules:\n  - { id: cap, tool: book_flight, max_price_usd: 300, severity: hard }',
      { price_cents: 45000 },
      ['WRONG_EXECUTION_PARAMETERS', 'LOW_METHODOLOGY_SCORE'],
    ],
    ['rules:\n  - { id: cap, tool: book_flight, max_price_usd: 300, severity: hard }', { price_cents: 25000 }, []],
    [
      'expected_state:\n  requests:\n    - { method: POST, url: /bookings, count: 1, equals: { passenger_id: P-102, price_usd: 250 } }',
      { passengerId: 'P-102', price_cents: 25000 },
      [],
    ],
    [
      'expected_state:\n  requests:\n    - { method: POST, url: /bookings, count: 1, equals: { passenger_id: P-102 } }',
      { passengerId: 'P-100' },
      ['WRONG_EXECUTION_PARAMETERS'],
    ],
  ];
  it.each(CASES)('%s with %j -> %j', (extra, args, want) => {
    expect(gate(extra, args)).toEqual(want);
  });
});

describe('an amount the answer works out from grounded amounts, and says so, is grounded', () => {
  const fares = { fare: 129.99, tax: 10.4, other_fare: 239 };
  it('a total of stated amounts (shown as a sum, or labelled total) to the cent', () => {
    expect(codes('Booked FL-101: fare $129.99 + tax $10.40 = $140.39.', fares)).toEqual([]);
    expect(codes('Booked FL-101.\nFare: $129.99\nTax: $10.40\nTotal: $140.39', fares)).toEqual([]);
    expect(codes('Booked FL-101 at $129.99 plus $10.40 tax, $140.39 in all.', fares)).toEqual([]);
  });

  it('a saving: the gap between two stated amounts', () => {
    expect(codes('Booked FL-101 at $219.00; you save $20.00 over the $239.00 fare.', { ...fares, fare: 219 })).toEqual(
      [],
    );
  });

  it('is not grounded when nothing says it was worked out, the sum is off, a term is not grounded, or the currency differs', () => {
    expect(claimMessages('Booked FL-101 for $140.39, fare $129.99 and tax $10.40.', fares)).toEqual([
      'the answer states amount $140.39, which no observation or user message contains in any form',
    ]);
    expect(claimMessages('Booked FL-101: fare $129.99 + tax $10.40 = $150.39.', fares)).toHaveLength(1);
    expect(claimMessages('Booked FL-101: fare $129.99 + fee $12.00 = $141.99.', fares)).toHaveLength(2);
    expect(claimMessages('Booked FL-101: fare $129.99 + tax $10.40 = €140.39.', fares)).toHaveLength(1);
  });
});
