// What the `claims` and `no-repeat` predicates count as the world and as one action. A claim is
// borne out by the words of the files the run changed (read through the recording's blob reader
// when they are blobs; binary and oversized files give their path only), not just their paths.
// Steps that carry out one decided tool call (an MCP call and the POST its server made for it),
// or are nested under a tool step, are one action, not a repeat — the rule eval pairs calls by —
// while two tool calls doing the same mutation, or one call sending its request twice, still are.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beliefAt, bisectBelief, builtinPredicate } from '../../src/bisect/index.js';
import { MAX_TEXT_BYTES } from '../../src/diff/index.js';
import { trajectoryOf } from '../../src/evaluate/trajectory.js';
import { recordCommand } from '../../src/record/index.js';
import { type Recording, readRecording, toolActions } from '../../src/recording/index.js';
import { startServer, tempDir } from '../record/helpers.js';
import { startFakeOpenAI } from '../sdks/servers/fake-openai.js';
import { RunBuilder, travelDb } from './fixtures.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const SYSTEM = 'You are a travel desk agent. Book flights with the tools.';
const TASK = 'Book Ana Lopez on FL200.';
const BOOK = { flight_id: 'FL200', passenger: 'Ana Lopez' };

const firstBad = async (run: Promise<Recording>, predicate: string) =>
  (await bisectBelief(await run, builtinPredicate(predicate))).firstBad;

/** Books FL200 (the result names BK-7) and writes `files` at that step, then claims the booking. */
function bookingRun(files: Array<{ path: string; content: string }>, pre?: { path: string; content: string }) {
  const b = new RunBuilder(SYSTEM, TASK, travelDb());
  if (pre) b.preFile(pre.path, pre.content);
  return b
    .model([{ name: 'book_flight', args: BOOK }])
    .tool({ name: 'book_flight', args: BOOK, mutating: true, result: { booking_id: 'BK-7' }, files })
    .model([], 'I booked Ana Lopez on FL200, confirmation BK-7.')
    .build('booking');
}

describe('claims: the words of the files a run changed', () => {
  it('a blob-backed file that names the booking in its content bears the claim out', async () => {
    const run = await bookingRun([{ path: 'last-booking.json', content: '{"id":"BK-7","status":"confirmed"}\n' }]);
    const written = run.post.fs?.files['last-booking.json'];
    expect(written?.text).toBeUndefined(); // its bytes are a blob: only the blob reader has them
    expect(await firstBad(Promise.resolve(run), 'claims')).toBeUndefined();
  });

  it('a file that names something else does not', async () => {
    const bad = await firstBad(bookingRun([{ path: 'last-booking.json', content: '{"id":"BK-3"}\n' }]), 'claims');
    expect(bad?.step).toBe(3);
    expect(bad?.reason).toMatch(/no row or file changed by step 3 mentions "FL200", "BK-7"$/);
  });

  it('an unchanged line of a modified file does not: only the lines the run wrote', async () => {
    const pre = { path: 'bookings.txt', content: 'BK-7 Ana Lopez FL200\n' };
    const run = bookingRun([{ path: 'bookings.txt', content: 'BK-7 Ana Lopez FL200\nBK-8 Ben Ode FL100\n' }], pre);
    expect((await firstBad(run, 'claims'))?.reason).toMatch(/mentions "FL200", "BK-7"$/);
  });

  it('a binary file, and one over the size bound, give their path only', async () => {
    const binary = bookingRun([{ path: 'pass.bin', content: '\u0000\u0001BK-7\u0000' }]);
    expect((await firstBad(binary, 'claims'))?.reason).toMatch(/mentions "FL200", "BK-7"$/);
    const huge = bookingRun([{ path: 'log.txt', content: `BK-7\n${'x'.repeat(MAX_TEXT_BYTES)}` }]);
    expect((await firstBad(huge, 'claims'))?.reason).toMatch(/mentions "FL200", "BK-7"$/);
  });
});

describe('no-repeat: one action, or a repeat', () => {
  const order = { item: 'widget', qty: 1 };
  const placeOrder = () =>
    new RunBuilder('You are a shop assistant.', 'Order one widget.', undefined).model([
      { name: 'place_order', args: order },
    ]);

  it('an MCP call and the POST its server made for the same tool call are one action', async () => {
    const run = await placeOrder()
      .tool({ name: 'place_order', stateType: 'MCP_CALL', args: order, mutating: true, result: { id: 'O-1' } })
      .tool({ name: 'place_order', args: order, mutating: true, result: { id: 'O-1' } })
      .model([], 'Placed order O-1.')
      .build('mcp-order');
    const actions = beliefAt(run, 4).actions;
    expect(actions.map((a) => [a.step, a.stateType, a.action])).toEqual([
      [2, 'MCP_CALL', 2],
      [3, 'API_CALL', 2],
    ]);
    expect(await firstBad(Promise.resolve(run), 'no-repeat')).toBeUndefined();
  });

  it('a step nested under a tool step is part of its action', async () => {
    const run = placeOrder()
      .tool({ name: 'place_order', stateType: 'SCRIPT_EXEC', args: order, mutating: true, result: { id: 'O-1' } })
      .tool({ name: 'place_order', args: order, mutating: true, result: { id: 'O-1' }, parentStep: 2 })
      .model([], 'Placed order O-1.')
      .build('nested-order');
    expect(await firstBad(run, 'no-repeat')).toBeUndefined();
  });

  it('one tool call that sends its request twice is a repeat', async () => {
    const run = placeOrder()
      .tool({ name: 'place_order', args: order, mutating: true, result: { id: 'O-1' } })
      .tool({ name: 'place_order', args: order, mutating: true, result: { id: 'O-2' } })
      .model([], 'Placed order O-2.')
      .build('sent-twice');
    expect((await firstBad(run, 'no-repeat'))?.reason).toMatch(/^step 3 .*already completed at step 2/);
  });

  it('two tool calls that each place the order through MCP are a repeat', async () => {
    const run = placeOrder()
      .tool({ name: 'place_order', stateType: 'MCP_CALL', args: order, mutating: true, result: { id: 'O-1' } })
      .tool({ name: 'place_order', args: order, mutating: true, result: { id: 'O-1' } })
      .model([{ name: 'place_order', args: order }])
      .tool({ name: 'place_order', stateType: 'MCP_CALL', args: order, mutating: true, result: { id: 'O-2' } })
      .tool({ name: 'place_order', args: order, mutating: true, result: { id: 'O-2' } })
      .model([], 'Placed orders O-1 and O-2.')
      .build('two-calls');
    expect((await firstBad(run, 'no-repeat'))?.reason).toMatch(/^step 5 \(MCP_CALL .*already completed at step 2/);
  });
});

describe('a real agent whose tool runs on an MCP server (stdio) that POSTs the order and writes it to a file', () => {
  const tmp = tempDir('tapedeck-bisect-mcp-');
  const runs: Record<'inline' | 'blobs' | 'twice', Recording> = {} as never;

  beforeAll(async () => {
    for (const [name, plan, inlineFileMax] of [
      ['inline', ['place_order'], undefined],
      ['blobs', ['place_order'], 0],
      ['twice', ['place_order', 'place_order'], undefined],
    ] as const) {
      let orders = 1000;
      const api = await startServer((_req, _body, res) => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: `ORD-${++orders}`, status: 'confirmed' }));
      });
      const model = await startFakeOpenAI({
        toolPlan: [...plan],
        toolArgs: { place_order: { item: 'widget', qty: 1 } },
        finalText:
          plan.length === 1 ? 'Done. Order ORD-1001 placed for 1 widget.' : 'Orders ORD-1001 and ORD-1002 placed.',
      });
      const workspace = path.join(tmp.dir, `${name}-ws`);
      mkdirSync(workspace);
      const out = path.join(tmp.dir, name);
      let stdout = '';
      const recorded = await recordCommand({
        command: [process.execPath, path.join(FIXTURES, 'shop-agent.mjs')],
        env: { OPENAI_BASE_URL: `${model.url}/v1`, API_URL: api.url, WORKSPACE: workspace },
        out,
        fsRoot: workspace,
        ...(inlineFileMax === undefined ? {} : { inlineFileMax }),
        stdio: 'pipe',
        onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
      });
      await Promise.all([api.close(), model.close()]);
      expect(recorded.exitCode, stdout).toBe(0);
      expect(stdout).toContain('FINAL:');
      runs[name] = await readRecording(out);
    }
  }, 180_000);
  afterAll(() => tmp.remove());

  /** The steps of each order, by tool call: its MCP call and its server's POST (whichever was numbered first). */
  const orderSteps = (run: Recording) => {
    const byCall = new Map<string, Array<{ step: number; stateType: string; route?: string }>>();
    for (const e of run.events)
      if (e.type === 'step.started' && e.payload.name === 'place_order' && e.payload.toolCallId !== undefined)
        byCall.set(e.payload.toolCallId, [
          ...(byCall.get(e.payload.toolCallId) ?? []),
          { step: e.stepId, stateType: e.payload.stateType, ...(e.payload.route && { route: e.payload.route }) },
        ]);
    return [...byCall.values()];
  };

  it('claims: the order id in the written file bears the answer out, inline or a blob', async () => {
    for (const name of ['inline', 'blobs'] as const) {
      const run = runs[name];
      const file = run.post.fs?.files['last-order.json'];
      expect(file, name).toBeDefined();
      expect(file?.text === undefined, name).toBe(name === 'blobs');
      expect(await firstBad(Promise.resolve(run), 'claims'), name).toBeUndefined();
    }
  });

  it('no-repeat: the MCP call and its POST share one tool-call id and are one action', async () => {
    const run = runs.inline;
    const calls = orderSteps(run);
    expect(calls).toHaveLength(1);
    const steps = calls[0]!;
    expect(steps.map((s) => [s.stateType, s.route]).sort()).toEqual([
      ['API_CALL', 'POST /orders'],
      ['MCP_CALL', undefined],
    ]);
    const first = Math.min(...steps.map((s) => s.step));
    const actions = toolActions(run.events);
    expect(steps.map((s) => actions.get(s.step)?.first)).toEqual([first, first]);
    // Eval pairs the decided call with the same first step: one call, not two.
    expect(trajectoryOf(run).calls.map((c) => [c.name, c.stepId])).toEqual([['place_order', first]]);
    expect(await firstBad(Promise.resolve(run), 'no-repeat')).toBeUndefined();
    expect(await firstBad(Promise.resolve(run), 'all')).toBeUndefined();
  });

  it('no-repeat: a second tool call placing the same order is a repeat, found at its first step', async () => {
    const calls = orderSteps(runs.twice);
    expect(calls.map((steps) => steps.map((s) => s.stateType).sort())).toEqual([
      ['API_CALL', 'MCP_CALL'],
      ['API_CALL', 'MCP_CALL'],
    ]);
    const [once, again] = calls.map((steps) => Math.min(...steps.map((s) => s.step)));
    const bad = await firstBad(Promise.resolve(runs.twice), 'no-repeat');
    expect(bad?.step).toBe(again);
    expect(bad?.reason).toMatch(
      new RegExp(`^step ${again} \\(\\w+ place_order\\) repeats the mutation that already completed at step ${once} `),
    );
  });
});
