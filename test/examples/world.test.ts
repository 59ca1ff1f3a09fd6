// The example world's REST API (ids, validation, errors, cancel, retrieval, reset) and the agents
// running under an @mswjs/interceptors preload, as a recorder would run them.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorld, type World } from '../../examples/world/index.js';
import { expectEndState } from './expect-world.js';

const PRELOAD = fileURLToPath(new URL('./fixtures/intercept-preload.mjs', import.meta.url));

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world?.stop();
});

/** The parts of API answers the tests read. */
interface ApiBody {
  flights: Array<{ id: string }>;
  booking: { id: string };
  results: unknown[];
}

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: ApiBody }> {
  const res = await fetch(`${world.apiUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as ApiBody };
}

describe('travel API', () => {
  it('searches flights by destination, date and budget', async () => {
    await world.reset();
    const { status, json } = await call('GET', '/flights?to=den&date=2026-11-25&max_price=300');
    expect(status).toBe(200);
    expect(json.flights.map((f) => f.id)).toEqual(['FL-101', 'FL-106', 'FL-102']);
    expect((await call('GET', '/flights?to=DEN&date=2026-11-25')).json.flights).toHaveLength(4);
  });

  it('rejects bad input with a 4xx JSON error', async () => {
    expect(await call('GET', '/flights?date=2026-11-25')).toMatchObject({
      status: 400,
      json: { error: { code: 'invalid_query' } },
    });
    expect(await call('GET', '/passengers/P-999')).toMatchObject({
      status: 404,
      json: { error: { code: 'passenger_not_found', message: 'no passenger with id P-999' } },
    });
    expect(await call('POST', '/bookings', '{not json')).toMatchObject({
      status: 400,
      json: { error: { code: 'invalid_body' } },
    });
    expect(await call('POST', '/bookings', { flight_id: 'FL-999', passenger_id: 'P-102' })).toMatchObject({
      status: 404,
      json: { error: { code: 'flight_not_found' } },
    });
    expect(await call('POST', '/bookings', { flight_id: 'FL-101', passenger_id: 'P-999' })).toMatchObject({
      status: 404,
      json: { error: { code: 'passenger_not_found' } },
    });
    expect(await call('GET', '/nowhere')).toMatchObject({ status: 404, json: { error: { code: 'not_found' } } });
  });

  it('books with sequential ids, cancels, and starts again at BK-0001 after a reset', async () => {
    await world.reset();
    const first = await call('POST', '/bookings', { flight_id: 'FL-101', passenger_id: 'P-102' });
    expect(first.status).toBe(201);
    expect(first.json.booking).toMatchObject({ id: 'BK-0001', passenger_name: 'Dana Reyes', status: 'confirmed' });
    const second = await call('POST', '/bookings', { flight_id: 'FL-101', passenger_id: 'P-101' });
    expect(second.json.booking.id).toBe('BK-0002');
    expect((await world.state()).db.flights?.find((f) => f.id === 'FL-101')?.seats_left).toBe(10);

    const cancelled = await call('DELETE', '/bookings/BK-0001');
    expect(cancelled).toMatchObject({ status: 200, json: { booking: { id: 'BK-0001', status: 'cancelled' } } });
    expect(await call('DELETE', '/bookings/BK-0001')).toMatchObject({
      status: 409,
      json: { error: { code: 'already_cancelled' } },
    });
    expect((await world.state()).db.flights?.find((f) => f.id === 'FL-101')?.seats_left).toBe(11);

    await world.reset();
    const again = await call('POST', '/bookings', { flight_id: 'FL-102', passenger_id: 'P-102' });
    expect(again.json.booking.id).toBe('BK-0001');
  });

  it('refuses a booking on a sold-out flight', async () => {
    await world.reset();
    for (let i = 0; i < 4; i++) {
      expect((await call('POST', '/bookings', { flight_id: 'FL-102', passenger_id: 'P-101' })).status).toBe(201);
    }
    expect(await call('POST', '/bookings', { flight_id: 'FL-102', passenger_id: 'P-102' })).toMatchObject({
      status: 409,
      json: { error: { code: 'sold_out' } },
    });
    expect((await world.state()).db.bookings).toHaveLength(4);
  });

  it('retrieves the policies that match a query, best first', async () => {
    const { json } = await call('GET', '/policies?q=carry-on%20baggage');
    expect(json.results[0]).toMatchObject({ id: 'POL-5', title: 'Baggage' });
  });
});

describe('agents under an @mswjs/interceptors preload', () => {
  for (const [agent, stream] of [
    ['openai', true],
    ['anthropic', true],
  ] as const) {
    it(`${agent} (streaming) still completes, and every request it makes is seen`, async () => {
      await world.reset();
      const dir = await mkdtemp(join(tmpdir(), 'tapedeck-intercept-'));
      try {
        const logFile = join(dir, 'seen.json');
        const run = await world.runAgent({
          agent,
          stream,
          prompt: 'fixed',
          imports: [PRELOAD],
          env: { INTERCEPT_LOG: logFile },
        });
        expectEndState('fixed', run, await world.state());
        const seen = JSON.parse(await readFile(logFile, 'utf8')) as Array<{
          url: string;
          status: number;
          chunks: number;
        }>;
        const model = seen.filter((s) => s.url.startsWith(world.modelUrl));
        const api = seen.filter((s) => s.url.startsWith(world.apiUrl));
        expect(model).toHaveLength(8);
        expect(model.every((s) => s.status === 200 && s.chunks >= 1)).toBe(true);
        // Streamed: the preload reads the SSE bodies in pieces, not as one buffer each.
        expect(model.reduce((n, s) => n + s.chunks, 0)).toBeGreaterThan(model.length);
        expect(api.map((s) => s.status)).toEqual([200, 200, 200, 201, 200]);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
