// A request a counterfactual replay held back was never sent, whichever way the replay held it back:
// an HTTP call (fetch, axios over node:http), an in-process tool() call, an MCP call over a WebSocket.
// Eval still shows what the agent tried, but no held-back request meets a request expectation or
// counts as a verified execution, and each verdict says it was held back. The same contract passes
// on the recording, where every one of them was sent.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectHttpEffects } from '../../src/diff/index.js';
import { type Contract, evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import { answerProvenance, type Recording, readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { recordAgent, startServer, tempDir } from '../record/helpers.js';
import { startWsServer } from '../record/websocket-helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'order-agent.mjs');

/** How a contract names each of the agent's four calls, and the step it is. */
const CALLS = [
  { selector: { method: 'POST', url: '/orders' }, step: 1 },
  { selector: { method: 'POST', url: '/payments' }, step: 2 },
  { selector: { url: 'reserve_stock' }, step: 3 },
  { selector: { tool: 'ship' }, step: 5 },
] as const;

const BASE = parseContract(`
task_id: order_item
task_name: Order an item four ways
input: { user_instruction: order a banana }
success_criteria: { required_outputs: [] }
`);

const expecting = (requests: NonNullable<Contract['expected_state']>['requests']): Contract => ({
  ...BASE,
  expected_state: { requests, side_effects: 'ignore' },
});

const executing = (action: Record<string, string>): Contract => ({
  ...BASE,
  success_criteria: { ...BASE.success_criteria, execution_result: { required: true } },
  execution: { action },
});

const tmp = tempDir('tapedeck-held-back-eval-');
let recorded: Recording;
let replayed: Recording;

beforeAll(async () => {
  const api = await startServer((req, _body, res) => {
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true, path: req.url }));
  });
  const ws = await startWsServer();
  const env = { API_URL: api.url, WS_URL: ws.url };
  const rec = await recordAgent(AGENT, path.join(tmp.dir, 'recorded'), env);
  expect(rec.exitCode).toBe(0);
  await api.close();
  await ws.close();
  // Another item: no call matches the recording, and nothing may answer it, so each is held back.
  const result = await replay({
    recording: path.join(tmp.dir, 'recorded'),
    mode: 'counterfactual',
    out: path.join(tmp.dir, 'replayed'),
    stdio: 'pipe',
    isolation: 'none',
    env: { ...env, ITEM: 'banana' },
    timeoutMs: 120_000,
  });
  expect(result.exitCode).toBe(0);
  recorded = await readRecording(path.join(tmp.dir, 'recorded'));
  replayed = await readRecording(result.dir);
}, 180_000);

afterAll(() => tmp.remove());

describe('a request a replay held back', () => {
  it('is, in every way a replay holds one back, a request effect never executed', () => {
    // The class: every step the replay's provenance says was held back (`blocked`).
    const held = [...answerProvenance(replayed).steps].filter(([, from]) => from === 'blocked').map(([s]) => s);
    expect(held).toEqual(CALLS.map((c) => c.step));
    const kinds = replayed.events.flatMap((e) =>
      e.type === 'tool.called' && held.includes(e.stepId) ? [`${e.payload.kind} ${e.payload.name}`] : [],
    );
    expect(kinds).toEqual(['http POST /orders', 'http POST /payments', 'http TOOL reserve_stock', 'mcp ship']);
    const effects = collectHttpEffects(replayed.events, (sha) => replayed.readBlob(sha), { reads: true });
    for (const step of held)
      expect(effects.filter((x) => x.stepId === step)).toMatchObject([{ heldBack: true, executed: false }]);
    // The WebSocket's open was served from the recording: sent, as recorded.
    expect(effects.find((x) => x.stepId === 4)).toMatchObject({ heldBack: false, executed: true });
  });

  it('meets no request expectation, and each says it was held back', () => {
    const contract = expecting(CALLS.map((c) => ({ ...c.selector, exists: true })));
    const onRecording = evaluateRecording(recorded, contract).diff.expectations;
    expect(onRecording.map((x) => [x.id, x.passed])).toEqual(
      CALLS.map((_, i) => [`expected_state.requests[${i}]`, true]),
    );

    const e = evaluateRecording(replayed, contract);
    expect(e.diff.expectations.map((x) => [x.passed, x.codes, x.steps])).toEqual(
      CALLS.map((c) => [false, ['ACTION_NOT_EXECUTED'], [c.step]]),
    );
    for (const [i, x] of e.diff.expectations.entries())
      expect(x.message).toMatch(new RegExp(`was held back by the replay \\(never sent\\) at step ${CALLS[i]!.step}$`));
    expect(e.task.hardSuccess).toBe(false);
    expect(e.task.failureReasonCodes).toContain('ACTION_NOT_EXECUTED');
  });

  it('still breaks an expectation that it was not made: the agent tried it', () => {
    const e = evaluateRecording(replayed, expecting(CALLS.map((c) => ({ ...c.selector, absent: true }))));
    for (const [i, x] of e.diff.expectations.entries()) {
      expect(x.codes).toEqual(['UNAUTHORIZED_ACTION']);
      expect(x.message).toMatch(
        new RegExp(`was tried and held back by the replay \\(never sent\\) at step ${CALLS[i]!.step}$`),
      );
    }
  });

  for (const call of CALLS)
    it(`is no verified execution (${JSON.stringify(call.selector)})`, () => {
      const contract = executing(call.selector);
      const validator = (r: Recording) =>
        evaluateRecording(r, contract).validators.find((v) => v.validatorName === 'execution')!;
      const sent = validator(recorded);
      expect(sent.failureReasonCodes).toEqual([]);
      expect(sent.diagnosticMessage).toMatch(/^1 execution\(s\) verified/);

      const held = validator(replayed);
      expect(held.failureReasonCodes).toEqual(['STATE_CHANGE_FAILED']);
      expect(held.diagnosticMessage).toMatch(new RegExp(`^held back by the replay, never sent: step ${call.step} `));
      expect(held.diagnosticMessage).not.toContain('verified');
    });
});
