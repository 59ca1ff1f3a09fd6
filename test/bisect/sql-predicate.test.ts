import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bisectBelief, evaluationBound, openWorldDb, sqlPredicate, type WorldDb } from '../../src/bisect/index.js';
import { readRecording, TapedeckError } from '../../src/recording/index.js';
import { baselineRun, boardingPassRun, doubleBookingRun, fixedRun } from './fixtures.js';

// One embedded Postgres for the file: PGlite takes seconds to start on a shared machine.
let db: WorldDb;
beforeAll(async () => {
  db = await openWorldDb();
});
afterAll(async () => db.close());

describe('SQL predicates against the world database at step k', () => {
  it('a duplicate-booking query finds the step that inserted the second booking', async () => {
    const sql = 'SELECT passenger, count(*) FROM bookings GROUP BY passenger HAVING count(*) > 1';
    const result = await bisectBelief(await doubleBookingRun(), sqlPredicate(sql, { db }));
    expect(result.firstBad?.step).toBe(6);
    expect(result.firstBad?.reason).toMatch(/returned 1 row/);
    expect(result.evaluations).toBeLessThanOrEqual(evaluationBound(7));
  });

  it('a boolean "good" or "bad" column decides', async () => {
    const good = await bisectBelief(
      await fixedRun(),
      sqlPredicate('SELECT count(*) = 0 AS good FROM bookings', { db }),
    );
    expect(good.firstBad?.step).toBe(6);
    expect(good.firstBad?.reason).toMatch(/good = false/);
    const bad = await bisectBelief(
      await fixedRun(),
      sqlPredicate("SELECT count(*) > 1 AS bad FROM bookings WHERE status = 'confirmed'", { db }),
    );
    expect(bad.firstBad).toBeUndefined();
  });

  it('each step sees only its own world: nothing loaded for one probe leaks into the next', async () => {
    await db.queryAt((await fixedRun()).pre.db!, "INSERT INTO bookings VALUES ('BK-9', 'FL200', 'Zed', 'confirmed')");
    const rows = await db.queryAt((await fixedRun()).pre.db!, 'SELECT * FROM bookings');
    expect(rows.rows).toEqual([]);
  });

  it('loads a world with bytea rows, and the query sees their bytes: the empty pass came at step 4', async () => {
    const sql = "SELECT booking_id FROM boarding_passes WHERE length(pass) = 0 OR pass <> '\\x504153530a'::bytea";
    const result = await bisectBelief(await boardingPassRun(), sqlPredicate(sql, { db }));
    expect(result.firstBad?.step).toBe(4);
    const rows = await db.queryAt(
      (await boardingPassRun()).pre.db,
      "SELECT booking_id, encode(pass, 'escape') AS pass FROM boarding_passes",
    );
    expect(rows.rows).toEqual([{ booking_id: 'BK-0', pass: 'PASS\n' }]);
  });

  it('an error in the query is a clear TapedeckError and the database stays usable', async () => {
    const error = await bisectBelief(await fixedRun(), sqlPredicate('SELECT * FROM no_such_table', { db })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TapedeckError);
    expect((error as TapedeckError).message).toMatch(/the SQL predicate failed: .*no_such_table/);
    const rows = await db.queryAt((await fixedRun()).pre.db!, 'SELECT id FROM flights ORDER BY id');
    expect(rows.rows.map((r) => r.id)).toEqual(['FL100', 'FL200']);
  });
});

describe('SQL predicates over belief and world together', () => {
  it('joins the decisions the agent made with the world: who did it decide to book?', async () => {
    const sql = `SELECT d.step FROM tapedeck.decisions d
      JOIN flights f ON f.id = d.args->>'flight_id'
      WHERE d.name = 'book_flight' AND f.seats = 0`;
    const result = await bisectBelief(await baselineRun(), sqlPredicate(sql, { db }));
    expect(result.firstBad?.step).toBe(3);
    expect(result.firstBad?.stateType).toBe('THINK');
  });

  it('sees the claims and observations of the prefix', async () => {
    const sql = "SELECT 1 FROM tapedeck.claims WHERE text LIKE '%booked%' AND NOT EXISTS (SELECT 1 FROM bookings)";
    const result = await bisectBelief(await baselineRun(), sqlPredicate(sql, { db }));
    expect(result.firstBad?.step).toBe(5);
  });
});

describe('on the example baseline recording (divergent step 3)', () => {
  const BASELINE = join(resolve(import.meta.dirname, '../..'), 'recordings/examples/anthropic-baseline-stream');

  it('a SQL predicate over belief and world finds step 3 within ceil(log2 9)+1 evaluations', async () => {
    const sql =
      "SELECT d.step, p.name FROM tapedeck.decisions d JOIN travel.passengers p ON p.id = d.args->>'passenger_id' WHERE p.name <> 'Dana Reyes'";
    const result = await bisectBelief(await readRecording(BASELINE), sqlPredicate(sql, { db }));
    expect(result.firstBad).toMatchObject({ step: 3, stateType: 'THINK' });
    expect(result.firstBad?.reason).toMatch(/Priya Natarajan/);
    expect(result.evaluations).toBeLessThanOrEqual(5);
    expect(result.maxEvaluations).toBe(5);
  });

  it('a world-only SQL predicate sees the contradiction where the world changed: step 4', async () => {
    const sql =
      "SELECT b.id FROM travel.bookings b JOIN travel.passengers p ON p.id = b.passenger_id WHERE p.name <> 'Dana Reyes'";
    const result = await bisectBelief(await readRecording(BASELINE), sqlPredicate(sql, { db }));
    expect(result.firstBad).toMatchObject({ step: 4, stateType: 'API_CALL' });
  });
});
