// The support desk's database: schema `support` (customers, orders with amounts in cents,
// refunds, the refund policy), its seed rows, and the reset that makes ids deterministic again
// (RF-0001 is always the first refund after a reset).
import type { Pool, PoolClient } from 'pg';
import { insertSeed } from '../world/schema.js';

/** The desk's business date. */
export const SUPPORT_TODAY = '2026-11-24';

export const SUPPORT_SCHEMA = 'support';

/** Tables in the order a reset creates them; every table has a primary key. */
export const SUPPORT_TABLES = ['customers', 'orders', 'refunds', 'policies'] as const;

const DDL = `
DROP SCHEMA IF EXISTS support CASCADE;
CREATE SCHEMA support;
CREATE TABLE support.customers (
  id text PRIMARY KEY,
  name text NOT NULL,
  email text NOT NULL UNIQUE,
  tier text NOT NULL
);
CREATE TABLE support.orders (
  id text PRIMARY KEY,
  customer_id text NOT NULL REFERENCES support.customers(id),
  item text NOT NULL,
  total_cents integer NOT NULL,
  currency text NOT NULL,
  status text NOT NULL,
  placed_at text NOT NULL,
  delivered_at text
);
CREATE TABLE support.refunds (
  id text PRIMARY KEY,
  order_id text NOT NULL REFERENCES support.orders(id),
  customer_id text NOT NULL REFERENCES support.customers(id),
  amount_cents integer NOT NULL,
  reason text NOT NULL,
  status text NOT NULL
);
CREATE TABLE support.policies (
  id text PRIMARY KEY,
  title text NOT NULL,
  body text NOT NULL,
  tags text NOT NULL
);
`;

type Row = Record<string, string | number | null>;

/**
 * Maya Chen (C-1042) owns O-7731, the blender. O-7713 — her order number with two digits
 * swapped — is Tom Becker's running shoes. Mayra Chan (C-1077) has the same blender on order.
 */
export const SUPPORT_SEED: Record<'customers' | 'orders' | 'policies', Row[]> = {
  customers: [
    { id: 'C-1042', name: 'Maya Chen', email: 'maya.chen@example.com', tier: 'standard' },
    { id: 'C-1077', name: 'Mayra Chan', email: 'mayra.chan@example.com', tier: 'plus' },
    { id: 'C-2001', name: 'Tom Becker', email: 'tom.becker@example.com', tier: 'standard' },
  ],
  orders: [
    o('O-7702', 'C-1042', 'Burr coffee grinder', 4599, 'delivered', '2026-10-28T16:40:00Z', '2026-11-02T10:30:00Z'),
    o('O-7713', 'C-2001', 'Trail running shoes', 8950, 'delivered', '2026-11-17T08:02:00Z', '2026-11-21T09:12:00Z'),
    o('O-7731', 'C-1042', 'Aurora blender', 12999, 'delivered', '2026-11-16T19:25:00Z', '2026-11-20T14:05:00Z'),
    o('O-7740', 'C-1077', 'Aurora blender', 12999, 'shipped', '2026-11-22T11:48:00Z', null),
  ],
  policies: [
    {
      id: 'POL-R1',
      title: 'Who can be refunded',
      body: 'Only the customer who placed an order can have it refunded. Confirm the order is on the account of the customer you are talking to.',
      tags: 'refund owner account customer identity',
    },
    {
      id: 'POL-R2',
      title: 'Damaged items',
      body: 'Items that arrive damaged are refunded in full to the original payment method; the customer keeps or recycles the item.',
      tags: 'refund damaged broken cracked full',
    },
    {
      id: 'POL-R3',
      title: 'Refund timing',
      body: 'Refunds reach the original payment method within 5 business days.',
      tags: 'refund timing card days',
    },
  ],
};

function o(
  id: string,
  customer_id: string,
  item: string,
  total_cents: number,
  status: string,
  placed_at: string,
  delivered_at: string | null,
): Row {
  return { id, customer_id, item, total_cents, currency: 'USD', status, placed_at, delivered_at };
}

/** Drop and recreate schema `support` with its seed rows. Afterwards the next refund id is RF-0001. */
export async function resetSupportSchema(db: Pool | PoolClient): Promise<void> {
  await db.query(DDL);
  await insertSeed(db, SUPPORT_SCHEMA, SUPPORT_SEED);
}

/** Every row of every support table, ordered by primary key: the world's database state. */
export async function dumpSupportSchema(db: Pool | PoolClient): Promise<Record<string, Record<string, unknown>[]>> {
  const out: Record<string, Record<string, unknown>[]> = {};
  for (const table of SUPPORT_TABLES) {
    const { rows } = await db.query(`SELECT * FROM support.${table} ORDER BY id`);
    out[table] = rows;
  }
  return out;
}
