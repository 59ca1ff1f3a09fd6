// The agent's own database writes are its own, whatever call is in flight when they commit: the
// recorder marks them (`own`), and a replay, which runs the agent again against its sandbox, never
// applies them as a call's effect. A tool server writing the same database is another process:
// its write stays the effect of the call that caused it. An effect that cannot be applied is a
// divergence on the step, never a call that silently disappears.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { type DbChangedPayload, readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, type TestServer, tempDir } from '../record/helpers.js';
import { createShopDb, type ShopDb } from './db-fixture.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('./fixtures/own-writes-agent.mjs', import.meta.url));
const RECORDINGS = 3;

/** The db.changed events of a recording with the step each is on and that step's name. */
async function changesOf(dir: string): Promise<Array<DbChangedPayload & { step: string }>> {
  const recording = await readRecording(dir);
  const names = new Map<number, string>();
  for (const e of recording.events) if (e.type === 'step.started') names.set(e.stepId, e.payload.name);
  return recording.events.flatMap((e) =>
    e.type === 'db.changed' ? [{ ...e.payload, step: names.get(e.stepId) ?? '' }] : [],
  );
}

describe.runIf(PG_URL)("the agent's own database writes", () => {
  const tmp = tempDir('tapedeck-own-writes-');
  let shop: ShopDb;
  let server: pg.Pool;
  let api: TestServer;
  const recordings: string[] = [];

  beforeAll(async () => {
    shop = await createShopDb(PG_URL as string, 'own');
    await shop.query(`CREATE TABLE shop.checkpoints (id serial PRIMARY KEY, n int NOT NULL);
      CREATE TABLE shop.bookings (id int PRIMARY KEY, who text NOT NULL)`);
    // The tool API: another process as far as the agent is concerned, with connections of its own.
    server = new pg.Pool({ connectionString: shop.url, max: 2 });
    // An idle client the database's forced drop ends says so as the pool's error: not the test's.
    server.on('error', () => {});
    api = await startServer(async (req, body, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      let out: unknown;
      if (req.method === 'POST') {
        const { id } = JSON.parse(body) as { id: number };
        await server.query("INSERT INTO shop.bookings (id, who) VALUES ($1, 'the tool server')", [id]);
        out = { booked: id };
      } else {
        await new Promise((resolve) => setTimeout(resolve, 300));
        out = { city: url.searchParams.get('city'), tempC: 4 };
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out));
    });
    for (let i = 0; i < RECORDINGS; i++) {
      await shop.query('TRUNCATE shop.items, shop.checkpoints, shop.bookings RESTART IDENTITY');
      const out = path.join(tmp.dir, `rec-${i}`);
      const result = await recordCommand({
        command: [process.execPath, AGENT],
        env: { APP_DB_URL: shop.url, TOOL_URL: api.url },
        dbUrl: shop.url,
        out,
        stdio: 'pipe',
      });
      expect(result.exitCode).toBe(0);
      recordings.push(out);
    }
  }, 120_000);

  afterAll(async () => {
    await api?.close();
    await server?.end();
    await shop?.drop();
    tmp.remove();
  });

  it('are marked own on whatever step they land, and the tool server’s write is not', async () => {
    let duringCalls = 0;
    for (const dir of recordings) {
      const changes = await changesOf(dir);
      const agents = changes.filter((c) => c.table !== 'bookings');
      // The insert and update of items, and five checkpoints: all the agent's own.
      expect(agents).toHaveLength(7);
      for (const change of agents) expect(change.own).toBe(true);
      duringCalls += agents.filter((c) => c.step === 'GET /forecast').length;
      const booking = changes.filter((c) => c.table === 'bookings');
      expect(booking).toEqual([
        expect.objectContaining({
          op: 'insert',
          key: { id: 7 },
          step: 'POST /book',
          after: { id: 7, who: 'the tool server' },
        }),
      ]);
      expect(booking[0]?.own).toBeUndefined();
    }
    // The race this is about did happen: the agent's writes committed while a GET was in flight.
    expect(duringCalls).toBeGreaterThan(0);
  });

  for (const sandbox of ['PGlite', 'server'] as const) {
    it(`replay exactly in a ${sandbox} sandbox: clean, the same end state, the server's write applied`, async () => {
      for (const [i, dir] of recordings.entries()) {
        const out = path.join(tmp.dir, `replay-${sandbox}-${i}`);
        const result = await replay({
          recording: dir,
          mode: 'exact',
          out,
          stdio: 'pipe',
          ...(sandbox === 'server' ? { db: PG_URL as string } : {}),
        });
        expect(result.output?.stderr ?? '').not.toMatch(/duplicate key/);
        expect(result.divergences).toEqual([]);
        expect(result.exitCode).toBe(0);
        expect(result.status).toBe('complete');
        expect(result.worldMatches, (result.worldDiff ?? []).join('\n')).toBe(true);
        const changes = await changesOf(out);
        // The booking came from the recording (the tool server was not asked), as its effect.
        expect(changes.filter((c) => c.table === 'bookings')).toEqual([
          expect.objectContaining({ op: 'insert', key: { id: 7 }, step: 'POST /book' }),
        ]);
        for (const c of changes) expect(c.own, `${c.table} ${c.op}`).toBe(c.table === 'bookings' ? undefined : true);
      }
    }, 240_000);
  }

  it('reports an effect that cannot be applied as a divergence on the step, which is written', async () => {
    const out = path.join(tmp.dir, 'replay-conflict');
    // The agent now takes the booking's key itself before the POST: the recorded effect conflicts.
    const result = await replay({
      recording: recordings[0] as string,
      mode: 'exact',
      out,
      stdio: 'pipe',
      env: { PRE_BOOK: '1' },
    });
    const failed = result.divergences.filter((d) => d.kind === 'effect-not-applied');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.message).toMatch(/POST \/book.*could not be applied.*different row/);
    const recording = await readRecording(out);
    const step = failed[0]?.step;
    const onStep = recording.events.filter((e) => e.stepId === step);
    expect(onStep.map((e) => e.type)).toEqual(
      expect.arrayContaining(['step.started', 'tool.called', 'http.exchange', 'divergence', 'step.completed']),
    );
    expect(onStep.find((e) => e.type === 'tool.called')?.payload).toMatchObject({ name: 'POST /book' });
    // The agent got the recorded answer and went on.
    expect(result.output?.stdout).toContain('"booked":{"booked":7}');
  }, 120_000);
});
