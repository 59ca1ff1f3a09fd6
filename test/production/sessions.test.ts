// Acceptance: a server recording 50 concurrent agent sessions. The desk server (real HTTP, a
// child process) runs each session with the real openai SDK against the example model server
// and a real Postgres database (its own, uniquely named, through a role of its own). Every
// recording holds exactly its own session's model calls, tool calls, clock/random/uuid values
// and database changes, and every one replays exactly (no divergence, the same world).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelServer } from '../../examples/world/model-server.js';
import {
  createRedactor,
  type DbChangedPayload,
  type ModelCalledPayload,
  type NondeterminismPayload,
  readRecording,
  type ToolCalledPayload,
} from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { tempDir } from '../record/helpers.js';
import {
  createDeskDatabase,
  type DeskDatabase,
  type DeskServer,
  postSession,
  sessionInput,
  startDeskModel,
  startDeskServer,
} from './desk-world.js';

const ADMIN = process.env.TAPEDECK_PG_URL;
const SESSIONS = 50;
const TEAM_KEY = 'team-redaction-key-for-the-desk-tests';
const API_KEY = `sk-test-${'desk'.repeat(8)}`;
const tmp = tempDir('tapedeck-sessions-');
let db: DeskDatabase;
let model: ModelServer;
let server: DeskServer;

beforeAll(async () => {
  if (!ADMIN) return;
  db = await createDeskDatabase(ADMIN, { items: 20_000 });
  model = await startDeskModel(20);
  server = await startDeskServer({
    DATABASE_URL: db.url,
    RECORDINGS: `${tmp.dir}/recordings`,
    OPENAI_API_KEY: API_KEY,
    TAPEDECK_REDACTION_KEY: TEAM_KEY,
  });
}, 120_000);

afterAll(async () => {
  if (!ADMIN) return;
  await server?.stop();
  await model?.close();
  await db?.drop();
  tmp.remove();
}, 60_000);

const valuesOf = (events: Array<{ type: string; payload: unknown }>, kind: string) =>
  events
    .filter((e) => e.type === 'nondeterminism' && (e.payload as NondeterminismPayload).kind === kind)
    .flatMap((e) => (e.payload as NondeterminismPayload).values);

describe.skipIf(!ADMIN)('a server recording 50 concurrent sessions', () => {
  it('gives each session a recording of exactly its own calls, values and changes, and each replays exactly', async () => {
    const inputs = Array.from({ length: SESSIONS }, (_, n) =>
      sessionInput(n, model.url, `sk-live-${String(n).padStart(4, '0')}${'s'.repeat(20)}`),
    );
    const answers = await Promise.all(inputs.map((input) => postSession(server.url, input)));
    // Each recording is finished (the server says so) a moment after its answer.
    for (let i = 0; i < 600 && server.recorded.length < SESSIONS; i++) await new Promise((r) => setTimeout(r, 100));
    expect(server.recorded).toHaveLength(SESSIONS);
    const teamKeyId = createRedactor({ key: TEAM_KEY }).keyId;

    for (const [n, answer] of answers.entries()) {
      const input = inputs[n]!;
      expect(answer.status).toBe(200);
      expect(answer.body.answer).toContain(`Reserved ${input.qty} of ${input.sku} for customer ${input.customer}`);
      expect(server.recorded).toContain(answer.id);
      const recording = await readRecording(`${tmp.dir}/recordings/${answer.id}`);
      expect(recording.manifest).toMatchObject({ status: 'complete', name: `desk ${n}` });
      expect(recording.manifest.redaction.keyId).toBe(teamKeyId);
      const events = recording.events;
      // Model calls: three, each carrying this session's own conversation.
      const calls = events.filter((e) => e.type === 'model.called').map((e) => e.payload as ModelCalledPayload);
      expect(calls).toHaveLength(3);
      for (const call of calls) expect(JSON.stringify(call.messages)).toContain(`(session ${n}, token`);
      // Tool calls: its own item and customer.
      const tools = events.filter((e) => e.type === 'tool.called').map((e) => e.payload as ToolCalledPayload);
      expect(tools.map((t) => t.name)).toEqual(['lookup_item', 'reserve_item']);
      expect(tools[0]?.args).toEqual({ sku: input.sku });
      expect(tools[1]?.args).toMatchObject({ qty: input.qty, customer: input.customer });
      const itemId = (tools[1]?.args as { item_id?: string } | undefined)?.item_id;
      // Values: the ones this session's agent drew (the uuid it made, its clock reads).
      const drawn = answer.body.drawn!;
      expect(valuesOf(events, 'uuid')).toEqual(drawn.uuid);
      expect(valuesOf(events, 'clock')).toEqual(expect.arrayContaining(drawn.clock));
      expect(valuesOf(events, 'random')).toEqual(expect.arrayContaining(drawn.random));
      // Database changes: its own item, order and audit row, as the reserve tool's effects.
      const changes = events.filter((e) => e.type === 'db.changed');
      const reserveStep = events.find(
        (e) => e.type === 'tool.called' && (e.payload as ToolCalledPayload).name === 'reserve_item',
      )?.stepId;
      expect(changes.every((e) => e.stepId === reserveStep)).toBe(true);
      const payloads = changes.map((e) => e.payload as DbChangedPayload);
      expect(payloads.map((c) => `${c.op} ${c.table}`)).toEqual(['update items', 'insert orders', 'insert audit']);
      expect(payloads[0]).toMatchObject({
        key: { id: itemId },
        before: { sku: input.sku, qty: 1000 },
        after: { sku: input.sku, qty: 1000 - input.qty },
      });
      expect(payloads[1]?.after).toMatchObject({ item_id: itemId, customer_id: input.customer, qty: input.qty });
      expect(payloads[2]?.after).toMatchObject({ what: 'reserve', order_id: payloads[1]?.key.id });
      // Its world: the rows it touched, nobody else's.
      const pre = new Map(recording.pre.db?.tables.map((t) => [t.name, t.rows]));
      expect(pre.get('items')).toEqual([expect.objectContaining({ id: itemId, sku: input.sku, qty: 1000 })]);
      expect(pre.get('customers')).toEqual([{ id: input.customer, name: `customer ${input.customer}` }]);
      expect(pre.get('policies')?.map((r) => r.id)).toEqual([1]);
      expect(pre.get('orders')).toEqual([]);
    }

    // Every recording replays exactly: sandboxes cloned on the same server, three at a time.
    const ids = answers.map((a) => a.id as string);
    const outcomes: Array<{ id: string; divergences: unknown[]; worldDiff?: string[]; stdout: string }> = [];
    const queue = [...ids];
    process.env.TAPEDECK_REDACTION_KEY = TEAM_KEY;
    try {
      await Promise.all(
        [0, 1, 2].map(async () => {
          for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
            const result = await replay({
              recording: `${tmp.dir}/recordings/${id}`,
              mode: 'exact',
              out: `${tmp.dir}/replays/${id}`,
              stdio: 'pipe',
              env: { OPENAI_API_KEY: API_KEY },
              dbSandbox: 'template',
              db: ADMIN,
              timeoutMs: 120_000,
            });
            expect(result.warnings ?? []).toEqual([]);
            outcomes.push({
              id,
              divergences: result.divergences,
              ...(result.worldDiff ? { worldDiff: result.worldDiff } : {}),
              stdout: result.output?.stdout ?? '',
            });
          }
        }),
      );
    } finally {
      delete process.env.TAPEDECK_REDACTION_KEY;
    }
    expect(outcomes).toHaveLength(SESSIONS);
    for (const outcome of outcomes) {
      expect(outcome, outcome.id).toMatchObject({ divergences: [], worldDiff: [] });
      const n = ids.indexOf(outcome.id);
      expect(JSON.parse(outcome.stdout).answer).toBe(answers[n]?.body.answer);
    }
  }, 900_000);
});
