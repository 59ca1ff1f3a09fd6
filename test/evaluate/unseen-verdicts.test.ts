// `tapedeck eval` verdicts on a shop agent unlike the example world, each found recording a real
// Node agent against Postgres and a fake model server: expected rows written in Postgres's own
// forms (`t` for a boolean, a timestamptz's `+01` offset, a jsonb value as JSON text with its keys
// in another order), an order retried once after a 503 (one landed: no duplicate, no side effect),
// and an answer that lists a price and a stock count (`$129.99 and 5 are in stock`).
import { describe, expect, it } from 'vitest';
import { evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import type { DbSnapshot, Row } from '../../src/recording/index.js';
import { RecordingBuilder } from './recording-builder.js';

const ID = '8f14e45f-ceea-467a-9575-2a2f7e7a3b4c';

/** The row the agent's order left, as the recorder snapshots it (jsonb as its text, `values: 'text'`). */
const ORDER: Row = {
  id: ID,
  sku: 'SKU-1',
  price: '129.99',
  cents: '12999',
  paid: true,
  placed_at: '2026-12-02T09:00:00.000000Z',
  meta: '{"a": {"x": "q", "y": 1}, "b": 2}',
  ship_on: '2026-12-02',
};

function ordersDb(rows: Row[]): DbSnapshot {
  const types: Record<string, string> = {
    id: 'uuid',
    sku: 'text',
    price: 'numeric(10,2)',
    cents: 'bigint',
    paid: 'boolean',
    placed_at: 'timestamp with time zone',
    meta: 'jsonb',
    ship_on: 'date',
  };
  const columns = Object.entries(types).map(([name, type]) => ({
    name,
    type,
    nullable: name !== 'id',
    ...(type === 'jsonb' && { values: 'text' as const }),
  }));
  return {
    schemas: ['shop'],
    ddl: [],
    tables: [{ schema: 'shop', name: 'orders', columns, primaryKey: ['id'], rows }],
  };
}

/** The model asks for the products (SKU-1 at 129.99, 5 in stock) and the GET answers them into `messages`. */
function readProducts(b: RecordingBuilder, messages: unknown[]): void {
  const read = b.model({ messages: [...messages], toolCalls: [{ id: 'g', name: 'get_products', arguments: {} }] });
  const products = [{ sku: 'SKU-1', price: '129.99', stock: 5 }];
  b.tool(read, {
    name: 'GET /products',
    args: {},
    result: products,
    http: { method: 'GET', url: 'http://127.0.0.1:1/products' },
  });
  messages.push({ role: 'tool', tool_call_id: 'g', content: JSON.stringify(products) });
}

/**
 * A run that reads the products, places one order (each attempt answered by `statuses` in turn:
 * the last one lands the row) and answers `answer`.
 */
function orderRun(answer: string, statuses: number[] = [201]) {
  const b = new RecordingBuilder();
  const messages: unknown[] = [{ role: 'user', content: 'Order one SKU-1 and tell me what it cost.' }];
  readProducts(b, messages);
  const act = b.model({
    messages: [...messages],
    toolCalls: [{ id: 'o', name: 'place_order', arguments: { sku: 'SKU-1' } }],
  });
  const placed = { id: ID, status: 'placed', total: '$129.99' };
  statuses.forEach((status, n) => {
    const landed = status < 400;
    b.tool(act, {
      name: 'place_order',
      args: { sku: 'SKU-1' },
      result: landed ? placed : { error: 'unavailable' },
      mutating: true,
      http: { method: 'POST', url: 'http://127.0.0.1:1/orders', body: { sku: 'SKU-1' }, status },
      ...(landed && n === statuses.length - 1
        ? { db: [{ schema: 'shop', table: 'orders', op: 'insert' as const, key: { id: ID }, after: ORDER }] }
        : {}),
    });
  });
  messages.push({ role: 'tool', tool_call_id: 'o', content: JSON.stringify(placed) });
  b.model({ messages: [...messages], text: answer });
  b.pre = { db: ordersDb([]) };
  b.post = { db: ordersDb([ORDER]) };
  return b.complete(answer).build();
}

const contract = (equals: string, requests = '') =>
  parseContract(`
task_id: order_sku
input: { user_instruction: "Order one SKU-1 and tell me what it cost." }
success_criteria:
  required_outputs: [final_answer]
  must_not_include: [unsupported_claim, wrong_fact]
expected_state:
  rows:
    - { table: shop.orders, where: { id: ${ID} }, count: 1, equals: ${equals} }
${requests}
  side_effects: fail
`);

/** The hard failure codes of a run, sorted. */
function hardCodes(equals: string, options: { answer?: string; statuses?: number[]; requests?: string } = {}) {
  const run = orderRun(options.answer ?? `Placed order #${ID.toUpperCase()} for SKU-1 at $129.99.`, options.statuses);
  const e = evaluateRecording(run, contract(equals, options.requests));
  return [...new Set(e.findings.filter((f) => f.hard).map((f) => f.code))].sort();
}

describe('expected rows written in Postgres forms', () => {
  it.each([
    ["{ paid: 't' }", 'a boolean as Postgres writes it'],
    ["{ paid: 'on' }", 'a boolean as Postgres reads it'],
    ["{ placed_at: '2026-12-02 10:00:00+01' }", "a timestamptz's text, its offset in hours"],
    ["{ placed_at: '2026-12-01 23:00:00-10' }", 'the same instant west of UTC'],
    [`{ meta: '{"b":2,"a":{"y":1,"x":"q"}}' }`, 'a jsonb value as JSON text, keys in another order'],
    ["{ price: 129.99, cents: '$129.99' }", 'numeric text and money in cents'],
  ])('%s holds (%s)', (equals) => {
    expect(hardCodes(equals)).toEqual([]);
  });

  it.each([
    ["{ paid: 'f' }"],
    ["{ placed_at: '2026-12-02 10:00:00+02' }"],
    [`{ meta: '{"b":3,"a":{"y":1,"x":"q"}}' }`],
    [`{ meta: '{"b":2}' }`],
  ])('%s is a STATE_MISMATCH', (equals) => {
    expect(hardCodes(equals)).toContain('STATE_MISMATCH');
  });
});

describe('an order retried once after a 503', () => {
  const requests = '  requests:\n    - { method: POST, url: /orders, count: 1 }';

  it('counts the one that landed: no DUPLICATE_EXECUTION, and the failed attempt is no side effect', () => {
    expect(hardCodes("{ sku: 'SKU-1' }", { statuses: [503, 201], requests })).toEqual([]);
  });

  it('without a request expectation, the failed attempt of the asked-for order is no side effect', () => {
    expect(hardCodes("{ sku: 'SKU-1' }", { statuses: [503, 201] })).toEqual([]);
  });

  it('two that landed are still a DUPLICATE_EXECUTION', () => {
    expect(hardCodes("{ sku: 'SKU-1' }", { statuses: [201, 201], requests })).toContain('DUPLICATE_EXECUTION');
  });
});

describe('a price and a count joined by "and"', () => {
  it('reads the count as a count, grounded by the stock observed', () => {
    expect(hardCodes("{ sku: 'SKU-1' }", { answer: 'SKU-1 cost $129.99 and 5 are in stock.' })).toEqual([]);
  });

  it('a count nothing observed is still unsupported', () => {
    expect(hardCodes("{ sku: 'SKU-1' }", { answer: 'SKU-1 cost $129.99 and 17 are in stock.' })).toEqual([
      'UNSUPPORTED_CLAIM',
    ]);
  });
});

describe('a run that reads and does not mutate', () => {
  /** The agent reads the products and answers; the orders table stays empty. */
  function readOnlyRun() {
    const b = new RecordingBuilder();
    const messages: unknown[] = [{ role: 'user', content: 'What does SKU-1 cost?' }];
    readProducts(b, messages);
    const answer = 'SKU-1 costs $129.99.';
    b.model({ messages: [...messages], text: answer });
    b.pre = { db: ordersDb([]) };
    b.post = { db: ordersDb([]) };
    return b.complete(answer).build();
  }

  it('scores the state it was asked to leave alone, and the read it had to make, as usable', () => {
    const e = evaluateRecording(
      readOnlyRun(),
      parseContract(`
task_id: check_price
success_criteria: { required_outputs: [final_answer] }
expected_state:
  rows: [{ table: shop.orders, absent: true }]
  requests: [{ method: GET, url: /products, exists: true }, { method: POST, url: /orders, absent: true }]
  side_effects: fail
`),
    );
    expect(e.task.hardSuccess).toBe(true);
    expect(e.state.map((r) => [r.stateObjectPath, r.stateChangeScore])).toEqual([
      ['no row(s) in shop.orders', 10],
      ['GET /products was made', 10],
      ['POST /orders was not made', 10],
    ]);
  });
});
