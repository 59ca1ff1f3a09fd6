import { describe, expect, it } from 'vitest';
import { EntityIndex, findContradiction, looksMutating, usedValues } from './index.js';

/** Observations in order (pos = index): each a JSON value. */
function world(...observations: unknown[]): EntityIndex {
  const index = new EntityIndex();
  for (const [i, o] of observations.entries())
    index.add(JSON.stringify(o), { pos: i, stepId: i + 1, label: `step ${i + 1}` });
  return index;
}

const act = (args: unknown, what = 'THINK decided act') => ({ step: 9, what, args, bound: 99 });
const check = (entities: EntityIndex, task: string, args: unknown) =>
  findContradiction(act(args), entities, task, usedValues);

describe('contradiction: an action on an entity whose observed attributes conflict with the task', () => {
  it('the order belongs to another customer than the one the task identifies (by a looked-up record)', () => {
    const entities = world(
      { customers: [{ id: 'C-1042', name: 'Maya Chen', email: 'maya.chen@example.com' }] },
      { order: { id: 'O-7713', customer_id: 'C-2001', total_cents: 8950 } },
    );
    const found = check(entities, 'Hi, this is Maya Chen (maya.chen@example.com). Refund order #7713.', {
      order_id: 'O-7713',
    });
    expect(found).toMatchObject({
      step: 9,
      entity: { id: 'O-7713', observedAt: 2 },
      attribute: { key: 'customer_id', value: 'C-2001' },
      fact: { value: 'C-1042', stepId: 1 },
    });
    expect(found?.message).toContain('acts on order O-7713, whose customer_id is "C-2001" (observed at step 2)');
    // The customer's own order is fine.
    const mine = world(
      { customers: [{ id: 'C-1042', name: 'Maya Chen', email: 'maya.chen@example.com' }] },
      { orders: [{ id: 'O-7731', customer_id: 'C-1042' }] },
    );
    expect(check(mine, 'this is Maya Chen (maya.chen@example.com)', { order_id: 'O-7731' })).toBeUndefined();
  });

  it('any schema: tenant, account, owner email, nested owner objects', () => {
    expect(
      check(world({ workspace: { id: 'W-9', tenant_id: 'T-77' } }), 'I am tenant T-12, delete workspace W-9', {
        workspace_id: 'W-9',
      })?.attribute,
    ).toEqual({ key: 'tenant_id', value: 'T-77' });
    expect(
      check(
        world({ ticket: { id: 'TK-5', owner: { id: 'U-2', email: 'bob@corp.example' } } }),
        'me: alice@corp.example',
        {
          ticket_id: 'TK-5',
        },
      )?.attribute,
    ).toEqual({ key: 'owner.email', value: 'bob@corp.example' });
    expect(
      check(world({ invoice: { id: 'INV-3', account_number: 'AC-881' } }), 'my account number is AC-100', {
        invoice: 'INV-3',
      })?.fact,
    ).toMatchObject({ value: 'AC-100', source: 'the task' });
  });

  it("the action's own argument says one owner, the entity another", () => {
    const found = check(world({ order: { id: 'O-1', customer_id: 'C-2' } }), 'refund it', {
      order_id: 'O-1',
      customer_id: 'C-1',
    });
    expect(found?.fact.source).toBe('its own argument customer_id');
  });

  it('a booking for another passenger than the traveler on file', () => {
    const entities = world({ name: 'Dana Reyes', passenger_id: 'P-102', email: 'dana@example.com' });
    const found = check(entities, "Hi, it's Dana Reyes. Book me a flight.", {
      flight_id: 'FL-1',
      passenger_id: 'P-100',
    });
    expect(found).toMatchObject({ attribute: { key: 'passenger_id', value: 'P-100' }, fact: { value: 'P-102' } });
    expect(check(entities, "Hi, it's Dana Reyes.", { flight_id: 'FL-1', passenger_id: 'P-102' })).toBeUndefined();
  });

  it('amounts: more than the entity total, over the budget, other than the amount asked for', () => {
    const entities = world({ order: { id: 'O-1', total_cents: 12999 } }, { flights: [{ id: 'FL-9', price_usd: 312 }] });
    expect(check(entities, 'refund my order', { order_id: 'O-1', amount_cents: 20000 })?.message).toMatch(
      /more than its total_cents 12999/,
    );
    expect(check(entities, 'refund my order', { order_id: 'O-1', amount_cents: 12999 })).toBeUndefined();
    expect(check(entities, 'a flight under $300 please', { flight_id: 'FL-9' })?.message).toMatch(
      /over the task's limit \$300/,
    );
    expect(check(entities, 'refund $20 of it', { order_id: 'O-1', amount_cents: 12999 })?.message).toMatch(
      /the task asks for \$20/,
    );
  });

  it('amounts in millionths are in their currency, as cents are (`price_micros` was read as dollars)', () => {
    const entities = world(
      { order: { id: 'O-1', total_micros: 129_990_000 } },
      { flights: [{ id: 'FL-9', price_micros: 250_000_000 }] },
    );
    expect(check(entities, 'a flight under $300 please', { flight_id: 'FL-9' })).toBeUndefined();
    expect(check(entities, 'a flight under $200 please', { flight_id: 'FL-9' })?.message).toMatch(
      /over the task's limit \$200/,
    );
    expect(check(entities, 'refund my order', { order_id: 'O-1', amount_cents: 12999 })).toBeUndefined();
    expect(check(entities, 'refund my order', { order_id: 'O-1', amount_micros: 129_990_000 })).toBeUndefined();
    expect(check(entities, 'refund my order', { order_id: 'O-1', amount_cents: 20000 })?.message).toMatch(
      /more than its total_micros/,
    );
  });

  it('no contradiction: reading is not acting, the other party of a transfer is someone else, unknown entities', () => {
    const entities = world({
      accounts: [
        { id: 'A-1', owner_name: 'Alice Smith' },
        { id: 'A-2', owner_name: 'Bob Jones' },
      ],
    });
    expect(
      check(entities, 'This is Alice Smith. Send $50 to Bob.', { from_account: 'A-1', to_account: 'A-2' }),
    ).toBeUndefined();
    expect(check(entities, 'This is Alice Smith.', { account_id: 'A-9' })).toBeUndefined();
    expect(looksMutating('issue_refund')).toBe(true);
    expect(looksMutating('createOrder')).toBe(true);
    expect(looksMutating('get_order')).toBe(false);
    expect(looksMutating('list_orders')).toBe(false);
  });

  it("amounts in minor units are in the entity's currency: none in yen, thousandths in dinars", () => {
    // ¥12999 (yen have no minor unit): a refund of ¥5000 is within it, ¥20000 is not.
    const yen = world({ order: { id: 'O-81', total_minor: 12999, currency: 'JPY' } });
    expect(check(yen, 'Refund ¥5000 of order O-81.', { order_id: 'O-81', amount: 5000 })).toBeUndefined();
    expect(check(yen, 'Refund order O-81.', { order_id: 'O-81', amount_minor: 12999 })).toBeUndefined();
    expect(check(yen, 'Refund order O-81.', { order_id: 'O-81', amount: 20000 })?.attribute).toEqual({
      key: 'amount',
      value: 20000,
    });
    // KWD 12.999: 20 dinars is more than it, 12 is not; the arguments' own currency counts when they name one.
    const dinars = world({ order: { id: 'O-82', amount_cents: 12999, currency: 'KWD' } });
    expect(check(dinars, 'Refund order O-82.', { order_id: 'O-82', amount: 20 })?.attribute.key).toBe('amount');
    expect(check(dinars, 'Refund order O-82.', { order_id: 'O-82', amount: 12 })).toBeUndefined();
    expect(
      check(dinars, 'Refund order O-82.', { order_id: 'O-82', refund_minor: 12999, currency: 'KWD' }),
    ).toBeUndefined();
    // A budget in yen against a price in yen.
    const hotel = world({ hotel: { id: 'H-3', price_minor: 18000, currency: 'JPY' } });
    expect(check(hotel, 'Book H-3, under ¥20000 a night.', { hotel_id: 'H-3' })).toBeUndefined();
    expect(check(hotel, 'Book H-3, under ¥15000 a night.', { hotel_id: 'H-3' })?.message).toContain('over the task');
  });
});

describe('contradiction: an entity is not hidden by a later object of another kind that names its id', () => {
  // The order is observed first; then a shipment, a tracking event or a ticket that carries the
  // order's id under its own key (`order_id`). The action is judged on the order's attributes.
  const order = { id: 4412, customer_id: 'C-1', total: '129.99', total_cents: 12999 };
  const later: Array<[string, unknown]> = [
    [
      'a shipment keyed by order_id (keys sorted, as a recorded tool result is)',
      { carrier: 'PostNord', order_id: 4412, status: 'delivered' },
    ],
    ['a shipment keyed by order_id first', { order_id: 4412, status: 'delivered' }],
    ['a wrapped tracking record', { tracking: { order_id: 4412, events: 3 } }],
    ['a list of tickets about the order', { tickets: [{ order_id: 4412, subject: 'broken' }] }],
  ];
  it.each(later)('an amount over the order total is found after %s', (_name, other) => {
    const entities = world({ order }, other);
    const found = check(entities, 'Refund my order #4412.', { order_id: 4412, amount_usd: 12999 });
    expect(found?.message).toMatch(/more than its total/);
    expect(found?.entity).toMatchObject({ id: '4412', observedAt: 1 });
    // The right amount, in dollars or in cents, is no contradiction.
    expect(check(entities, 'Refund my order #4412.', { order_id: 4412, amount_usd: 129.99 })).toBeUndefined();
    expect(check(entities, 'Refund my order #4412.', { order_id: 4412, amount_cents: 12999 })).toBeUndefined();
  });
  it.each(later)("another customer's order is found after %s", (_name, other) => {
    const entities = world(
      { customers: [{ id: 'C-2', name: 'Ana Lindqvist', email: 'ana@example.se' }] },
      { order },
      other,
    );
    const found = check(entities, "Hi, I'm Ana (ana@example.se). Refund order #4412.", { order_id: 4412 });
    expect(found?.attribute).toEqual({ key: 'customer_id', value: 'C-1' });
  });
  it('a later state of the same kind of object still replaces the earlier one', () => {
    const entities = world({ order }, { order: { ...order, total: '200.00', total_cents: 20000 } });
    expect(check(entities, 'Refund my order #4412.', { order_id: 4412, amount_usd: 150 })).toBeUndefined();
  });
});
