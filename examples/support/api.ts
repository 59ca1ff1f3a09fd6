// The support desk's REST API (node:http + pg): customers, their orders (amounts in cents),
// refunds, and the refund policy. Errors are 4xx with `{ "error": { "code", "message" } }`.
import type { IncomingMessage } from 'node:http';
import type pg from 'pg';
import { searchPolicies } from '../world/api.js';
import { HttpError, type Json, type JsonApi, readJson, startJsonApi } from '../world/json-api.js';

export type SupportApi = JsonApi;

/** Start the API on 127.0.0.1 (port 0 = any free port) against the database at `dbUrl`. */
export function startSupportApi(options: { dbUrl: string; port?: number }): Promise<SupportApi> {
  return startJsonApi({ ...options, handle });
}

async function handle(pool: pg.Pool, req: IncomingMessage, url: URL): Promise<[number, Json]> {
  const [resource, id, sub] = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  const method = req.method ?? 'GET';

  if (method === 'GET' && resource === 'health') return [200, { ok: true }];
  if (resource === 'customers' && method === 'GET') {
    if (id === undefined) return [200, await findCustomers(pool, url)];
    const customer = await one(pool, 'SELECT * FROM support.customers WHERE id = $1', [id], 'customer', id);
    if (sub === undefined) return [200, { customer }];
    if (sub === 'orders') {
      const { rows } = await pool.query('SELECT * FROM support.orders WHERE customer_id = $1 ORDER BY placed_at', [id]);
      return [200, { customer_id: id, orders: rows }];
    }
  }
  if (resource === 'orders' && method === 'GET' && id !== undefined && sub === undefined) {
    return [200, { order: await one(pool, 'SELECT * FROM support.orders WHERE id = $1', [id], 'order', id) }];
  }
  if (resource === 'refunds') {
    if (method === 'POST' && id === undefined) return [201, await createRefund(pool, await readJson(req))];
    if (method === 'GET' && id !== undefined) {
      return [200, { refund: await one(pool, 'SELECT * FROM support.refunds WHERE id = $1', [id], 'refund', id) }];
    }
  }
  if (method === 'GET' && resource === 'policies') {
    return [200, await searchPolicies(pool, url.searchParams.get('q'), 'support.policies')];
  }
  throw new HttpError(404, 'not_found', `no route for ${method} ${url.pathname}`);
}

async function one(pool: pg.Pool, sql: string, params: unknown[], what: string, id: string): Promise<Json> {
  const { rows } = await pool.query(sql, params);
  if (rows.length === 0) throw new HttpError(404, `${what}_not_found`, `no ${what} with id ${id}`);
  return rows[0] as Json;
}

async function findCustomers(pool: pg.Pool, url: URL): Promise<Json> {
  const email = url.searchParams.get('email');
  if (!email) throw new HttpError(400, 'invalid_query', 'email is required');
  const { rows } = await pool.query('SELECT * FROM support.customers WHERE lower(email) = lower($1) ORDER BY id', [
    email.trim(),
  ]);
  return { customers: rows };
}

async function createRefund(pool: pg.Pool, body: Json): Promise<Json> {
  const orderId = body.order_id;
  const amount = body.amount_cents;
  const reason = body.reason;
  if (typeof orderId !== 'string' || typeof reason !== 'string' || reason.trim() === '') {
    throw new HttpError(400, 'invalid_body', 'order_id and reason are required strings');
  }
  if (typeof amount !== 'number' || !Number.isInteger(amount) || amount <= 0) {
    throw new HttpError(400, 'invalid_body', 'amount_cents must be a positive whole number of cents');
  }
  const order = await one(pool, 'SELECT * FROM support.orders WHERE id = $1', [orderId], 'order', orderId);
  if (order.status === 'refunded') throw new HttpError(409, 'already_refunded', `order ${orderId} is already refunded`);
  if (order.status !== 'delivered') {
    throw new HttpError(409, 'not_delivered', `order ${orderId} is ${String(order.status)}; refund it once delivered`);
  }
  if (amount > Number(order.total_cents)) {
    throw new HttpError(400, 'amount_too_large', `amount_cents ${amount} exceeds the order total ${order.total_cents}`);
  }
  // One statement: mark the order refunded and insert the refund. The id comes from the rows
  // already in the table (not a sequence), so a database restored from a snapshot hands out the same ids.
  const { rows } = await pool.query(
    `WITH o AS (
       UPDATE support.orders SET status = 'refunded' WHERE id = $1 AND status = 'delivered' RETURNING id, customer_id
     )
     INSERT INTO support.refunds (id, order_id, customer_id, amount_cents, reason, status)
     SELECT 'RF-' || lpad((coalesce((SELECT max(substring(id from 4)::int) FROM support.refunds), 0) + 1)::text, 4, '0'),
            o.id, o.customer_id, $2, $3, 'issued'
       FROM o
     RETURNING *`,
    [orderId, amount, reason.trim()],
  );
  const refund = rows[0] as Json | undefined;
  if (refund === undefined) throw new HttpError(409, 'already_refunded', `order ${orderId} is already refunded`);
  return { refund };
}
