// The travel desk's database: schema `travel`, its seed rows, and the reset that makes ids
// deterministic again (BK-0001 is always the first booking after a reset).
import type { Pool, PoolClient } from 'pg';

/** The desk's business date: "tomorrow" in the task is TRAVEL_TOMORROW. */
export const TRAVEL_TODAY = '2026-11-24';
export const TRAVEL_TOMORROW = '2026-11-25';

export const SCHEMA = 'travel';

/** Tables in the order a reset creates them; every table has a primary key. */
export const TABLES = ['flights', 'passengers', 'bookings', 'policies', 'agent_notes'] as const;

const DDL = `
DROP SCHEMA IF EXISTS travel CASCADE;
CREATE SCHEMA travel;
CREATE TABLE travel.flights (
  id text PRIMARY KEY,
  airline text NOT NULL,
  flight_no text NOT NULL,
  origin text NOT NULL,
  destination text NOT NULL,
  depart_date text NOT NULL,
  depart_time text NOT NULL,
  fare_class text NOT NULL,
  price_usd integer NOT NULL,
  seats_left integer NOT NULL
);
CREATE TABLE travel.passengers (
  id text PRIMARY KEY,
  name text NOT NULL,
  email text NOT NULL,
  home_airport text NOT NULL
);
CREATE TABLE travel.bookings (
  id text PRIMARY KEY,
  flight_id text NOT NULL REFERENCES travel.flights(id),
  passenger_id text NOT NULL REFERENCES travel.passengers(id),
  price_usd integer NOT NULL,
  status text NOT NULL
);
CREATE TABLE travel.policies (
  id text PRIMARY KEY,
  title text NOT NULL,
  body text NOT NULL,
  tags text NOT NULL
);
CREATE TABLE travel.agent_notes (
  id text PRIMARY KEY,
  booking_id text NOT NULL,
  passenger_id text NOT NULL,
  note text NOT NULL,
  run_id text NOT NULL
);
`;

type Row = Record<string, string | number>;

export const SEED: Record<'flights' | 'passengers' | 'policies', Row[]> = {
  flights: [
    f('FL-101', 'United', 'UA 455', 'SFO', 'DEN', TRAVEL_TOMORROW, '07:30', 'economy', 279, 12),
    f('FL-102', 'Frontier', 'F9 1021', 'SFO', 'DEN', TRAVEL_TOMORROW, '13:05', 'basic', 189, 4),
    f('FL-103', 'Southwest', 'WN 880', 'SFO', 'DEN', TRAVEL_TOMORROW, '18:40', 'economy', 312, 20),
    f('FL-104', 'United', 'UA 611', 'SFO', 'DEN', '2026-11-26', '09:15', 'economy', 159, 30),
    f('FL-105', 'Delta', 'DL 200', 'SFO', 'SEA', TRAVEL_TOMORROW, '08:00', 'economy', 149, 9),
    f('FL-106', 'Alaska', 'AS 330', 'SEA', 'DEN', TRAVEL_TOMORROW, '11:20', 'economy', 219, 6),
  ],
  passengers: [
    { id: 'P-100', name: 'Priya Natarajan', email: 'priya.natarajan@example.com', home_airport: 'SEA' },
    { id: 'P-101', name: 'Marcus Webb', email: 'marcus.webb@example.com', home_airport: 'JFK' },
    { id: 'P-102', name: 'Dana Reyes', email: 'dana.reyes@example.com', home_airport: 'SFO' },
    { id: 'P-103', name: 'Dan Reese', email: 'dan.reese@example.com', home_airport: 'SFO' },
  ],
  policies: [
    {
      id: 'POL-1',
      title: 'Passenger identity',
      body: 'Every booking must name a passenger on file. Look the passenger up by id before booking; the name on the booking must match the traveler.',
      tags: 'booking passenger identity id',
    },
    {
      id: 'POL-2',
      title: 'Basic economy fares',
      body: 'Basic fares are non-refundable after 24 hours. Cancellation within 24 hours of booking is free.',
      tags: 'basic fare cancellation refund change fee',
    },
    {
      id: 'POL-3',
      title: 'Budget caps',
      body: "Never book a fare above the traveler's stated budget. Taxes are included in the listed price.",
      tags: 'budget price cap fare',
    },
    {
      id: 'POL-4',
      title: 'One booking per trip',
      body: 'Do not create a second booking for the same passenger and flight. If a booking call fails, check existing bookings before retrying.',
      tags: 'booking duplicate retry',
    },
    {
      id: 'POL-5',
      title: 'Baggage',
      body: 'Basic fares include one personal item. Carry-on bags cost $35 at booking.',
      tags: 'baggage bag carry-on basic',
    },
  ],
};

function f(
  id: string,
  airline: string,
  flight_no: string,
  origin: string,
  destination: string,
  depart_date: string,
  depart_time: string,
  fare_class: string,
  price_usd: number,
  seats_left: number,
): Row {
  return { id, airline, flight_no, origin, destination, depart_date, depart_time, fare_class, price_usd, seats_left };
}

/** Drop and recreate schema `travel` with its seed rows. Afterwards the next booking id is BK-0001. */
export async function resetSchema(db: Pool | PoolClient): Promise<void> {
  await db.query(DDL);
  await insertSeed(db, SCHEMA, SEED);
}

/** Inserts seed rows (trusted constants) into `<schema>.<table>`, table by table, in order. */
export async function insertSeed(
  db: Pool | PoolClient,
  schema: string,
  seed: Record<string, Array<Record<string, unknown>>>,
): Promise<void> {
  for (const [table, rows] of Object.entries(seed)) {
    for (const row of rows) {
      const cols = Object.keys(row);
      const params = cols.map((_, i) => `$${i + 1}`).join(', ');
      await db.query(
        `INSERT INTO ${schema}.${table} (${cols.join(', ')}) VALUES (${params})`,
        cols.map((c) => row[c]),
      );
    }
  }
}

/** Every row of every travel table, ordered by primary key: the world's database state. */
export async function dumpSchema(db: Pool | PoolClient): Promise<Record<string, Record<string, unknown>[]>> {
  const out: Record<string, Record<string, unknown>[]> = {};
  for (const table of TABLES) {
    const { rows } = await db.query(`SELECT * FROM travel.${table} ORDER BY id`);
    out[table] = rows;
  }
  return out;
}
