// The travel desk's REST API (node:http + pg): flight search, passengers, bookings, and a small
// policy knowledge base. Errors are 4xx with `{ "error": { "code", "message" } }`.
import type { IncomingMessage } from 'node:http';
import type pg from 'pg';
import { HttpError, type Json, type JsonApi, readJson, startJsonApi } from './json-api.js';

export type TravelApi = JsonApi;

/** Start the API on 127.0.0.1 (port 0 = any free port) against the database at `dbUrl`. */
export function startTravelApi(options: { dbUrl: string; port?: number }): Promise<TravelApi> {
  return startJsonApi({ ...options, handle });
}

async function handle(pool: pg.Pool, req: IncomingMessage, url: URL): Promise<[number, Json]> {
  const parts = url.pathname.split('/').filter(Boolean);
  const method = req.method ?? 'GET';
  const [resource, id] = parts;

  if (method === 'GET' && resource === 'health') return [200, { ok: true }];
  if (method === 'GET' && resource === 'flights' && id === undefined) return [200, await searchFlights(pool, url)];
  if (method === 'GET' && resource === 'passengers' && id !== undefined) {
    const { rows } = await pool.query('SELECT * FROM travel.passengers WHERE id = $1', [id]);
    if (rows.length === 0) throw new HttpError(404, 'passenger_not_found', `no passenger with id ${id}`);
    return [200, { passenger: rows[0] }];
  }
  if (resource === 'bookings') {
    if (method === 'POST' && id === undefined) return [201, await createBooking(pool, await readJson(req))];
    if (method === 'GET' && id !== undefined) return [200, { booking: await getBooking(pool, id) }];
    if (method === 'DELETE' && id !== undefined) return [200, await cancelBooking(pool, id)];
  }
  if (method === 'GET' && resource === 'policies') return [200, await searchPolicies(pool, url.searchParams.get('q'))];
  throw new HttpError(404, 'not_found', `no route for ${method} ${url.pathname}`);
}

async function searchFlights(pool: pg.Pool, url: URL): Promise<Json> {
  const to = url.searchParams.get('to');
  const date = url.searchParams.get('date');
  const from = url.searchParams.get('from');
  const maxPrice = url.searchParams.get('max_price');
  if (!to || !/^[A-Za-z]{3}$/.test(to)) throw new HttpError(400, 'invalid_query', 'to must be a 3-letter airport code');
  if (date !== null && !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
    throw new HttpError(400, 'invalid_query', 'date must be YYYY-MM-DD');
  }
  if (maxPrice !== null && !/^\d+(\.\d+)?$/.test(maxPrice)) {
    throw new HttpError(400, 'invalid_query', 'max_price must be a number');
  }
  const where = ['destination = $1', 'seats_left > 0'];
  const params: unknown[] = [to.toUpperCase()];
  if (date !== null) where.push(`depart_date = $${params.push(date)}`);
  if (from) where.push(`origin = $${params.push(from.toUpperCase())}`);
  if (maxPrice !== null) where.push(`price_usd <= $${params.push(Number(maxPrice))}`);
  const { rows } = await pool.query(
    `SELECT * FROM travel.flights WHERE ${where.join(' AND ')} ORDER BY depart_date, depart_time, id`,
    params,
  );
  return { flights: rows };
}

async function getBooking(pool: pg.Pool, id: string): Promise<Json> {
  const { rows } = await pool.query(
    `SELECT b.*, p.name AS passenger_name, f.flight_no, f.depart_date, f.depart_time
       FROM travel.bookings b JOIN travel.passengers p ON p.id = b.passenger_id JOIN travel.flights f ON f.id = b.flight_id
      WHERE b.id = $1`,
    [id],
  );
  if (rows.length === 0) throw new HttpError(404, 'booking_not_found', `no booking with id ${id}`);
  return rows[0] as Json;
}

async function createBooking(pool: pg.Pool, body: Json): Promise<Json> {
  const flightId = body.flight_id;
  const passengerId = body.passenger_id;
  if (typeof flightId !== 'string' || typeof passengerId !== 'string') {
    throw new HttpError(400, 'invalid_body', 'flight_id and passenger_id are required strings');
  }
  const flight = await pool.query('SELECT * FROM travel.flights WHERE id = $1', [flightId]);
  if (flight.rows.length === 0) throw new HttpError(404, 'flight_not_found', `no flight with id ${flightId}`);
  const passenger = await pool.query('SELECT id FROM travel.passengers WHERE id = $1', [passengerId]);
  if (passenger.rows.length === 0) {
    throw new HttpError(404, 'passenger_not_found', `no passenger with id ${passengerId}`);
  }
  // One statement: take a seat and insert the booking. The id comes from the rows already in
  // the table (not a sequence), so a database restored from a snapshot hands out the same ids.
  const { rows } = await pool.query(
    `WITH seat AS (
       UPDATE travel.flights SET seats_left = seats_left - 1 WHERE id = $1 AND seats_left > 0 RETURNING id, price_usd
     )
     INSERT INTO travel.bookings (id, flight_id, passenger_id, price_usd, status)
     SELECT 'BK-' || lpad((coalesce((SELECT max(substring(id from 4)::int) FROM travel.bookings), 0) + 1)::text, 4, '0'),
            seat.id, $2, seat.price_usd, 'confirmed'
       FROM seat
     RETURNING id`,
    [flightId, passengerId],
  );
  const created = rows[0] as { id: string } | undefined;
  if (created === undefined) throw new HttpError(409, 'sold_out', `flight ${flightId} has no seats left`);
  return { booking: await getBooking(pool, created.id) };
}

async function cancelBooking(pool: pg.Pool, id: string): Promise<Json> {
  const booking = await getBooking(pool, id);
  if (booking.status === 'cancelled')
    throw new HttpError(409, 'already_cancelled', `booking ${id} is already cancelled`);
  await pool.query(
    `WITH b AS (UPDATE travel.bookings SET status = 'cancelled' WHERE id = $1 RETURNING flight_id)
     UPDATE travel.flights SET seats_left = seats_left + 1 WHERE id = (SELECT flight_id FROM b)`,
    [id],
  );
  return { booking: await getBooking(pool, id) };
}

/**
 * A tiny retrieval: policies ranked by how many query words appear in their title, body or tags.
 * `table` is a trusted constant (travel.policies, support.policies), never user input.
 */
export async function searchPolicies(pool: pg.Pool, q: string | null, table = 'travel.policies'): Promise<Json> {
  const { rows } = await pool.query(`SELECT * FROM ${table} ORDER BY id`);
  const words = (q ?? '')
    .toLowerCase()
    .split(/[^a-z0-9-]+/)
    .filter((w) => w.length > 2);
  const scored = rows
    .map((row: { id: string; title: string; body: string; tags: string }) => {
      const hay = `${row.title} ${row.body} ${row.tags}`.toLowerCase();
      const score = words.filter((w) => hay.includes(w)).length;
      return { id: row.id, title: row.title, body: row.body, score };
    })
    .filter((r) => words.length === 0 || r.score > 0)
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
    .slice(0, 3);
  return { query: q ?? '', results: scored };
}
