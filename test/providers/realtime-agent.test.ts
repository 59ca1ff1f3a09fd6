// A Realtime agent's model calls are model calls: an agent on the openai SDK's Realtime client
// (OpenAIRealtimeWS) talks to a deterministic fake Realtime server (realtime-server.ts, a real `ws`
// server over TLS on 127.0.0.1); recorded, each response.done is a model.called with the session's
// model, instructions and tools, the conversation so far, the tool call or the answer, the usage
// and the latency from response.create; `tapedeck ledger --json` shows them as steps with their
// tokens, and the replay (the server stopped) writes the same calls, served from the recording.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecording } from '../../src/recording/index.js';
import type { ModelCalledPayload, Recording } from '../../src/recording/types.js';
import { runCli } from '../ledger/run-cli.js';
import { tempDir } from '../record/helpers.js';
import { allText } from '../record/websocket-helpers.js';
import { ANSWER, startRealtimeServer } from './realtime-server.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'realtime-agent.mjs');
const KEY = 'sk-realtime-secret-0123456789abcdefghij';
const DELAY_MS = 40;

const modelCalls = (recording: Recording): ModelCalledPayload[] =>
  recording.events.flatMap((e) => (e.type === 'model.called' ? [e.payload] : []));

interface LedgerJson {
  steps: Array<Record<string, unknown>>;
  run: Record<string, unknown>;
  warnings: string[];
}

describe('an OpenAI Realtime agent (the openai SDK client, a fake Realtime server)', () => {
  const tmp = tempDir('tapedeck-realtime-');
  const recorded = path.join(tmp.dir, 'recorded');
  const replayed = path.join(tmp.dir, 'replayed');
  let answer = '';
  let connections = 0;

  beforeAll(async () => {
    const server = await startRealtimeServer(tmp.dir, DELAY_MS);
    const { recordCommand } = await import('../../src/record/index.js');
    let stdout = '';
    const result = await recordCommand({
      command: [process.execPath, AGENT],
      env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.baseURL, NODE_EXTRA_CA_CERTS: server.caFile },
      out: recorded,
      stdio: 'pipe',
      onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
    });
    expect(result.exitCode).toBe(0);
    answer = (JSON.parse(stdout) as { answer: string }).answer;
    connections = server.connections;
    await server.close();
  }, 120_000);
  afterAll(() => tmp.remove());

  it('records one model call per response.done, with tokens, tool calls, answer and latency', async () => {
    expect(answer).toBe(ANSWER.join(''));
    const recording = await readRecording(recorded);
    const calls = modelCalls(recording);
    expect(calls).toHaveLength(2);
    const [first, second] = calls as [ModelCalledPayload, ModelCalledPayload];
    for (const call of calls) {
      expect(call).toMatchObject({ provider: 'openai', api: 'realtime', model: 'gpt-realtime', streamed: true });
      expect(call.system).toBe('You are a weather agent. Answer in one sentence.');
      expect(call.tools).toHaveLength(1);
      // From the agent's response.create to the server's response.done, which the server held back DELAY_MS.
      expect(call.latencyMs).toBeGreaterThanOrEqual(DELAY_MS - 5);
      expect(call.ttftMs).toBeGreaterThanOrEqual(DELAY_MS - 5);
      expect(call.ttftMs).toBeLessThanOrEqual(call.latencyMs);
    }
    expect(first.output.toolCalls).toEqual([{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }]);
    expect(first.stopReason).toBe('tool_calls');
    expect(first.usage).toEqual({ inputUncached: 120, cacheRead: 0, cacheWrite: 0, output: 15, reasoning: 0 });
    expect(second.output).toEqual({ text: ANSWER.join(''), toolCalls: [] });
    expect(second.usage).toEqual({ inputUncached: 116, cacheRead: 64, cacheWrite: 0, output: 9, reasoning: 0 });
    // The conversation so far: the user's message (the server's copy, once), the call, its output.
    expect(first.messages).toHaveLength(1);
    expect((second.messages as Array<{ type: string }>).map((m) => m.type)).toEqual([
      'message',
      'function_call',
      'function_call_output',
    ]);
    // The model steps are THINK (a tool decided) and FINALIZE (the answer), named by the model.
    const steps = recording.events.flatMap((e) =>
      e.type === 'step.started' && recording.events.some((m) => m.stepId === e.stepId && m.type === 'model.called')
        ? [[e.payload.stateType, e.payload.name]]
        : [],
    );
    expect(steps).toEqual([
      ['THINK', 'gpt-realtime'],
      ['FINALIZE', 'gpt-realtime'],
    ]);
    expect(allText(recorded)).not.toContain(KEY);
  });

  it('tapedeck ledger --json shows them as steps with their tokens, and says gpt-realtime has no price', async () => {
    const ledger = JSON.parse(await runCli('ledger', recorded, '--json')) as LedgerJson;
    const rows = ledger.steps.filter((r) => r.model_name === 'gpt-realtime');
    expect(
      rows.map((r) => [r.input_tokens_total, r.input_tokens_cached, r.output_tokens, r.total_tokens, r.state_type]),
    ).toEqual([
      [120, 0, 15, 135, 'THINK'],
      [180, 64, 9, 189, 'FINALIZE'],
    ]);
    expect(ledger.run.total_input_tokens).toBe(300);
    expect(ledger.run.total_output_tokens).toBe(24);
    expect(ledger.warnings.join('\n')).toMatch(/no price for model gpt-realtime/);
  });

  it('costs them at a price table that has the model', async () => {
    const { writeFileSync } = await import('node:fs');
    const prices = path.join(tmp.dir, 'prices.json');
    const entry = { model: 'gpt-realtime', inputPerMillion: 4, cachedInputPerMillion: 0.4, outputPerMillion: 16 };
    writeFileSync(prices, JSON.stringify({ version: 't', currency: 'USD', models: [entry] }));
    const ledger = JSON.parse(await runCli('ledger', recorded, '--prices', prices, '--json')) as LedgerJson;
    const expected = (120 * 4 + 15 * 16 + 116 * 4 + 64 * 0.4 + 9 * 16) / 1e6;
    expect(ledger.run.total_llm_cost).toBeCloseTo(expected, 12);
  });

  it('replays with the server stopped: the same calls, served from the recording, costing nothing', {
    timeout: 120_000,
  }, async () => {
    const { replay } = await import('../../src/replay/index.js');
    const result = await replay({
      recording: recorded,
      mode: 'exact',
      out: replayed,
      stdio: 'pipe',
      isolation: 'none',
      // The key was redacted: a replay is given one, as a user exports theirs (it reaches no server).
      env: { OPENAI_API_KEY: 'sk-replay-placeholder' },
      timeoutMs: 90_000,
    });
    expect(result.divergences).toEqual([]);
    expect(JSON.parse(result.output?.stdout ?? 'null')).toEqual({ answer: ANSWER.join('') });
    expect(connections).toBe(1);
    const calls = modelCalls(await readRecording(replayed));
    const strip = (c: ModelCalledPayload) => ({ ...c, exchangeId: '', latencyMs: 0, ttftMs: 0 });
    expect(calls.map(strip)).toEqual(modelCalls(await readRecording(recorded)).map(strip));
    const ledger = JSON.parse(await runCli('ledger', replayed, '--json')) as LedgerJson;
    const rows = ledger.steps.filter((r) => r.model_name === 'gpt-realtime');
    expect(rows.map((r) => [r.input_tokens_total, r.served_from])).toEqual([
      [120, 'recording'],
      [180, 'recording'],
    ]);
    expect(ledger.run.replay_cost).toBe(0);
  });
});
