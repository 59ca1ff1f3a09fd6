// The second example world, a support desk: its REST API (customers, orders in cents, refunds,
// errors, ids after a reset) and its agent on the real openai SDK under the careful and the
// careless prompt, streaming and not, and every version of its prompt series.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readSupportRules,
  SUPPORT_PROMPT_SERIES,
  type SupportWorld,
  startSupportWorld,
} from '../../examples/support/index.js';

let world: SupportWorld;
beforeAll(async () => {
  world = await startSupportWorld(
    process.env.TAPEDECK_PG_URL ? { db: process.env.TAPEDECK_PG_URL, freshDatabase: true } : {},
  );
}, 120_000);
afterAll(async () => {
  await world?.stop();
});

type Body = Record<string, unknown> & { error?: { code: string } };

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Body }> {
  const res = await fetch(`${world.apiUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Body };
}

describe('support API', () => {
  it('finds customers by email, reads orders in cents, lists a customer’s orders', async () => {
    await world.reset();
    const found = await call('GET', '/customers?email=MAYA.CHEN@example.com');
    expect(found.json.customers).toEqual([
      { id: 'C-1042', name: 'Maya Chen', email: 'maya.chen@example.com', tier: 'standard' },
    ]);
    const order = await call('GET', '/orders/O-7713');
    expect(order.json.order).toMatchObject({ id: 'O-7713', customer_id: 'C-2001', total_cents: 8950 });
    const mine = await call('GET', '/customers/C-1042/orders');
    expect((mine.json.orders as Array<{ id: string }>).map((o) => o.id)).toEqual(['O-7702', 'O-7731']);
  });

  it('refuses bad refunds with a 4xx JSON error', async () => {
    await world.reset();
    const cases: Array<[unknown, number, string]> = [
      ['{nope', 400, 'invalid_body'],
      [{ order_id: 'O-7731', amount_cents: 129.99, reason: 'x' }, 400, 'invalid_body'],
      [{ order_id: 'O-7731', amount_cents: 20000, reason: 'x' }, 400, 'amount_too_large'],
      [{ order_id: 'O-9999', amount_cents: 100, reason: 'x' }, 404, 'order_not_found'],
      [{ order_id: 'O-7740', amount_cents: 100, reason: 'x' }, 409, 'not_delivered'],
    ];
    for (const [body, status, code] of cases) {
      expect(await call('POST', '/refunds', body)).toMatchObject({ status, json: { error: { code } } });
    }
    expect(await call('GET', '/customers/C-9')).toMatchObject({
      status: 404,
      json: { error: { code: 'customer_not_found' } },
    });
    expect(await call('GET', '/customers')).toMatchObject({ status: 400 });
  });

  it('refunds once, with sequential ids that start again at RF-0001 after a reset', async () => {
    await world.reset();
    const first = await call('POST', '/refunds', { order_id: 'O-7731', amount_cents: 12999, reason: 'cracked' });
    expect(first).toMatchObject({
      status: 201,
      json: { refund: { id: 'RF-0001', order_id: 'O-7731', customer_id: 'C-1042', status: 'issued' } },
    });
    expect(await call('POST', '/refunds', { order_id: 'O-7731', amount_cents: 1, reason: 'x' })).toMatchObject({
      status: 409,
      json: { error: { code: 'already_refunded' } },
    });
    const second = await call('POST', '/refunds', { order_id: 'O-7702', amount_cents: 4599, reason: 'x' });
    expect((second.json.refund as { id: string }).id).toBe('RF-0002');
    await world.reset();
    expect((await world.state()).refunds).toEqual([]);
  });
});

describe('support agent (openai SDK, fake model)', () => {
  it.each([false, true])('careful prompt (stream %s): refunds the customer’s own order O-7731', async (stream) => {
    await world.reset();
    const run = await world.runAgent({ prompt: 'careful', stream });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.answer).toMatch(/^Refunded \$129\.99 for your Aurora blender \(order O-7731, delivered Nov 20\)/);
    expect(run.stderr).toContain('list_orders {"customer_id":"C-1042"}');
    const state = await world.state();
    expect(state.refunds).toEqual([
      expect.objectContaining({ order_id: 'O-7731', customer_id: 'C-1042', amount_cents: 12999 }),
    ]);
    expect(state.orders?.find((o) => o.id === 'O-7713')?.status).toBe('delivered');
  });

  it.each([false, true])('careless prompt (stream %s): refunds O-7713, another customer’s order', async (stream) => {
    await world.reset();
    const run = await world.runAgent({ prompt: 'careless', stream });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.answer).toMatch(/^Refunded \$89\.50 .*order O-7713/);
    expect(run.stderr).not.toContain('list_orders');
    expect((await world.state()).refunds).toEqual([
      expect.objectContaining({ order_id: 'O-7713', customer_id: 'C-2001', amount_cents: 8950 }),
    ]);
  });

  it('the prompt series drops the ownership check at version 3', () => {
    const checks = SUPPORT_PROMPT_SERIES.map((f) => readSupportRules(readFileSync(f, 'utf8')).verifyOwner);
    expect(checks).toEqual([true, true, false, false]);
  });
});
