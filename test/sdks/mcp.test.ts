// MCP over Streamable HTTP (`@modelcontextprotocol/sdk` 1.x): a real McpServer with one tool on
// node:http, and an agent whose tools come from it (Client + StreamableHTTPClientTransport) and
// whose decisions come from the FAKE model (openai SDK). `tapedeck record` turns the JSON-RPC
// `tools/call` into an MCP_CALL step (tool name, arguments, result) under its THINK step; the
// protocol chatter (initialize, tools/list, the server-notification GET stream) is recorded too.
// The exact replay, with the MCP server and the model stopped, reproduces the run.
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import {
  expectedBuckets,
  installedVersion,
  modelCalls,
  recordWithCli,
  replayExact,
  stepNamesOf,
  steps,
  stepTypes,
  tempDir,
  toolCalls,
} from './harness.js';
import { startFakeOpenAI } from './servers/fake-openai.js';
import { startMcpServer } from './servers/mcp-server.js';
import { startWeatherApi } from './servers/weather-api.js';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.remove());

/**
 * A copy of a recording whose `method` exchanges took `ms` (as a loaded server would answer),
 * with the manifest's integrity updated.
 */
function slowedDown(dir: string, out: string, method: string, ms: number): string {
  cpSync(dir, out, { recursive: true });
  const lines = readFileSync(path.join(out, 'events.jsonl'), 'utf8').split('\n');
  const edited = lines.map((line) => {
    if (!line.includes('"http.exchange"')) return line;
    const event = JSON.parse(line);
    if (event.payload.request?.method !== method) return line;
    event.payload.durationMs = ms;
    event.payload.ttfbMs = ms;
    return JSON.stringify(event);
  });
  const text = edited.join('\n');
  expect(text).not.toBe(lines.join('\n'));
  writeFileSync(path.join(out, 'events.jsonl'), text);
  const manifest = JSON.parse(readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  manifest.integrity.eventsSha256 = createHash('sha256').update(text).digest('hex');
  writeFileSync(path.join(out, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return out;
}

/** What the MCP client reports when it closes its server-notification stream itself. */
const CLOSE_ERROR = 'MCP ERROR: SSE stream disconnected: AbortError: This operation was aborted\n';

describe('MCP over Streamable HTTP (@modelcontextprotocol/sdk 1.x)', () => {
  it.concurrent.each([
    { label: 'client closes', endSession: false, closeError: CLOSE_ERROR },
    { label: 'session ended with DELETE first', endSession: true, closeError: '' },
  ])(
    '$label: tools/call is recorded as an MCP_CALL step and replays exactly with the MCP server stopped',
    async ({ endSession, closeError }) => {
      const model = await startFakeOpenAI({ toolArgs: { get_forecast: { city: 'Lima' } } });
      const mcp = await startMcpServer();
      const env = { OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'sk-fake-mcp', MCP_URL: mcp.url };
      let recorded: Awaited<ReturnType<typeof recordWithCli>>;
      try {
        recorded = await recordWithCli({
          agent: 'mcp-agent.mjs',
          args: endSession ? ['--end-session'] : [],
          env,
          out: path.join(tmp.dir, `mcp-${endSession}`),
        });
      } finally {
        await model.close();
        await mcp.close();
      }
      expect(recorded.exitCode, recorded.stderr).toBe(0);
      expect(recorded.agentStdout).toBe('FINAL: FAKE final: the tool said Lima: 22C sunny\n');
      expect(mcp.toolCalls()).toBe(1);
      expect(recorded.stderr).toContain(closeError);

      const recording = await readRecording(recorded.dir);
      expect(recording.manifest.status).toBe('complete');
      expect(recording.manifest.runtime.sdkVersions['@modelcontextprotocol/sdk']).toBe(
        installedVersion('@modelcontextprotocol/sdk'),
      );
      const tools = toolCalls(recording);
      const byName = (name: string) => tools.find((t) => t.name === name);
      // The tool call the model asked for: an MCP_CALL step under the THINK step that decided it.
      const [think, final] = modelCalls(recording);
      expect(think?.output.toolCalls).toEqual([
        { id: 'call_fake_1', name: 'get_forecast', arguments: '{"city":"Lima"}' },
      ]);
      // The MCP tool list was offered to the model as function tools.
      expect(think?.tools).toEqual([
        expect.objectContaining({ type: 'function', function: expect.objectContaining({ name: 'get_forecast' }) }),
      ]);
      const call = byName('get_forecast');
      expect(call).toMatchObject({
        kind: 'mcp',
        stateType: 'MCP_CALL',
        args: { city: 'Lima' },
        result: { content: [{ type: 'text', text: 'Lima: 22C sunny' }] },
        parentStepId: think?.step,
      });
      expect(final?.output.text).toBe('FAKE final: the tool said Lima: 22C sunny');
      for (const [i, m] of [think, final].entries())
        expect(m?.usage).toEqual(expectedBuckets(model.calls[i]?.usage ?? {}));
      // The protocol chatter is recorded as observation steps, not as tool calls of the agent.
      expect(byName('mcp initialize')).toMatchObject({ kind: 'mcp', stateType: 'OBSERVE', mutating: false });
      expect(byName('mcp tools/list')).toMatchObject({ kind: 'mcp', stateType: 'OBSERVE' });
      expect(tools.filter((t) => t.stateType === 'MCP_CALL')).toHaveLength(1);
      // The transport's own GET stream and session DELETE are MCP chatter too: not API calls, and
      // the DELETE is not a side effect of the agent.
      expect(byName('mcp notification stream')).toMatchObject({ kind: 'mcp', stateType: 'OBSERVE', mutating: false });
      if (endSession) {
        expect(byName('mcp session end')).toMatchObject({ kind: 'mcp', stateType: 'OBSERVE', mutating: false });
      }
      expect(tools.filter((t) => t.stateType !== 'OBSERVE').map((t) => t.name)).toEqual(['get_forecast']);
      // The MCP_CALL step answers the decided call (same name, so no route); chatter is never linked to it.
      const named = stepNamesOf(recording);
      expect(named.filter(([, name]) => name === 'get_forecast')).toEqual([
        [call?.step, 'get_forecast', undefined, 'call_fake_1'],
      ]);
      const order = stepTypes(recording).map(([, type]) => type);
      expect(order.filter((t) => t === 'THINK' || t === 'MCP_CALL' || t === 'FINALIZE')).toEqual([
        'THINK',
        'MCP_CALL',
        'FINALIZE',
      ]);

      // Exact replay with the MCP server and the model down.
      const result = await replayExact(recorded.dir, env, path.join(tmp.dir, `mcp-${endSession}-replay`));
      expect(result.divergences).toEqual([]);
      expect(result.status).toBe('complete');
      expect(result.output?.stdout).toBe(recorded.agentStdout);
      // The notification stream stays open until the client closes it, and ends as it did: the
      // agent sees the same transport error at close, and no other.
      expect(result.output?.stderr).toBe(closeError);
      expect(result.served.live).toBe(0);
      expect(result.blockedConnections).toEqual([]);
      expect(mcp.toolCalls()).toBe(1);
      expect(model.calls.length).toBe(2);
      const replayed = await readRecording(result.dir);
      // Same steps with the same numbers (the long-lived GET stream keeps its recorded step).
      expect(stepTypes(replayed)).toEqual(stepTypes(recording));
      expect(
        steps(replayed)
          .map(([, , name]) => name)
          .sort(),
      ).toEqual(
        steps(recording)
          .map(([, , n]) => n)
          .sort(),
      );
      expect(toolCalls(replayed).find((t) => t.stateType === 'MCP_CALL')).toMatchObject({
        name: 'get_forecast',
        result: call?.result,
      });

      // A slow replay (recorded latencies x10): a stream the server ended late must not end
      // early, or the client would reconnect (a repeated GET) before the run is over.
      const slow = await replay({
        recording: recorded.dir,
        mode: 'exact',
        env,
        out: path.join(tmp.dir, `mcp-${endSession}-slow`),
        stdio: 'pipe',
        timing: { kind: 'scaled', factor: 10 },
        timeoutMs: 30_000,
      });
      expect(slow.divergences).toEqual([]);
      expect(slow.output?.stderr).toBe(closeError);

      // A session end that was answered slowly (a loaded server: 200 ms, replayed x10 = 2 s, past
      // the client's 1 s reconnection delay): the server ended the stream while the DELETE was on
      // its way, so the stream stays open until the DELETE is answered and the client never
      // reconnects (it did when the stream ended with the step before its own).
      if (endSession) {
        const slowEnd = slowedDown(recorded.dir, path.join(tmp.dir, 'mcp-slow-delete'), 'DELETE', 200);
        const late = await replay({
          recording: slowEnd,
          mode: 'exact',
          env,
          out: path.join(tmp.dir, 'mcp-slow-delete-replay'),
          stdio: 'pipe',
          timing: { kind: 'scaled', factor: 10 },
          timeoutMs: 30_000,
        });
        expect(late.divergences).toEqual([]);
        expect(late.output?.stderr).toBe('');
      }
    },
  );

  it.concurrent('an @openai/agents Agent with MCPServerStreamableHttp is recorded and replays exactly', async () => {
    const model = await startFakeOpenAI({ toolArgs: { get_forecast: { city: 'Lima' } } });
    const mcp = await startMcpServer();
    const env = { OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'sk-fake-mcp', MCP_URL: mcp.url };
    let recorded: Awaited<ReturnType<typeof recordWithCli>>;
    try {
      recorded = await recordWithCli({
        agent: 'openai-agents-mcp-agent.mjs',
        env,
        out: path.join(tmp.dir, 'agents-mcp'),
      });
    } finally {
      await model.close();
      await mcp.close();
    }
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    expect(recorded.agentStdout).toBe('FINAL: FAKE final: the tool said Lima: 22C sunny\n');
    const recording = await readRecording(recorded.dir);
    const [think, final] = modelCalls(recording);
    expect(think).toMatchObject({
      api: 'responses',
      output: { toolCalls: [expect.objectContaining({ name: 'get_forecast' })] },
    });
    expect(final?.output.text).toBe('FAKE final: the tool said Lima: 22C sunny');
    const tools = toolCalls(recording);
    expect(tools.filter((t) => t.stateType !== 'OBSERVE')).toEqual([
      expect.objectContaining({
        kind: 'mcp',
        stateType: 'MCP_CALL',
        name: 'get_forecast',
        args: { city: 'Lima' },
        parentStepId: think?.step,
      }),
    ]);

    const result = await replayExact(recorded.dir, env, path.join(tmp.dir, 'agents-mcp-replay'));
    expect(result.divergences).toEqual([]);
    expect(result.status).toBe('complete');
    expect(result.output?.stdout).toBe(recorded.agentStdout);
    expect(result.served.live).toBe(0);
    expect(mcp.toolCalls()).toBe(1);
    expect(stepTypes(await readRecording(result.dir))).toEqual(stepTypes(recording));
  });
  it.concurrent.each(['auto', 'none'] as const)(
    'an @openai/agents Agent with MCPServerStdio (a Node server started with an env of its own): its tool calls are MCP_CALL steps, and it replays exactly at isolation %s',
    async (isolation) => {
      const model = await startFakeOpenAI({ toolArgs: { get_forecast: { city: 'Lima' } } });
      const weather = await startWeatherApi();
      const env = { OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'sk-fake-mcp', WEATHER_URL: weather.url };
      let recorded: Awaited<ReturnType<typeof recordWithCli>>;
      try {
        recorded = await recordWithCli({
          agent: 'openai-agents-mcp-agent.mjs',
          args: ['--stdio'],
          env,
          out: path.join(tmp.dir, `agents-mcp-stdio-${isolation}`),
        });
      } finally {
        await model.close();
        await weather.close();
      }
      expect(recorded.exitCode, recorded.stderr).toBe(0);
      expect(recorded.agentStdout).toMatch(/^FINAL: FAKE final: the tool said Lima: 22C sunny \(0\.\d{6} \d{4}-/);
      expect(weather.hits()).toBe(1);
      const recording = await readRecording(recorded.dir);
      // The server's own call and values are in the recording, as its process's (the first the agent started).
      const forecast = recording.events.filter(
        (e) => e.type === 'http.exchange' && e.payload.request.url.includes('/forecast'),
      );
      expect(forecast).toHaveLength(1);
      const values = recording.events.filter((e) => e.type === 'nondeterminism' && e.payload.process === '1');
      expect(values.map((e) => (e.type === 'nondeterminism' ? e.payload.kind : '')).sort()).toEqual(
        expect.arrayContaining(['clock', 'random']),
      );
      // The JSON-RPC over the server's stdio: the tool call an MCP_CALL step under the THINK step
      // that decided it, with the answer the agent read; the protocol chatter OBSERVE steps.
      const [think] = modelCalls(recording);
      const tools = toolCalls(recording).filter((t) => t.kind === 'mcp');
      expect(tools.filter((t) => t.stateType === 'MCP_CALL')).toEqual([
        expect.objectContaining({
          name: 'get_forecast',
          args: { city: 'Lima' },
          mutating: true,
          parentStepId: think?.step,
          result: {
            content: [
              { type: 'text', text: recorded.agentStdout.replace(/^FINAL: FAKE final: the tool said /, '').trim() },
            ],
          },
        }),
      ]);
      expect(tools.filter((t) => t.stateType === 'OBSERVE').map((t) => t.name)).toEqual(
        expect.arrayContaining(['mcp initialize', 'mcp tools/list']),
      );

      // Replayed with the model and the weather API gone: the server runs again, answered from the recording.
      const result = await replay({
        recording: recorded.dir,
        mode: 'exact',
        env,
        out: path.join(tmp.dir, `agents-mcp-stdio-${isolation}-replay`),
        stdio: 'pipe',
        timeoutMs: 120_000,
        ...(isolation === 'none' ? { isolation } : {}),
      });
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(result.status).toBe('complete');
      expect(result.output?.stdout).toBe(recorded.agentStdout);
      expect(result.served.live).toBe(0);
      expect(result.blockedConnections).toEqual([]);
      expect(weather.hits()).toBe(1);
      expect(stepTypes(await readRecording(result.dir))).toEqual(stepTypes(recording));
    },
  );
  it.concurrent('MCPServerStdio in a counterfactual replay: the new tool call goes to the server again and is a step of the replay', async () => {
    const recordedModel = await startFakeOpenAI({ toolArgs: { get_forecast: { city: 'Lima' } } });
    const weather = await startWeatherApi();
    const env = { OPENAI_API_KEY: 'sk-fake-mcp', WEATHER_URL: weather.url };
    let recorded: Awaited<ReturnType<typeof recordWithCli>>;
    try {
      recorded = await recordWithCli({
        agent: 'openai-agents-mcp-agent.mjs',
        args: ['--stdio'],
        env: { ...env, OPENAI_BASE_URL: `${recordedModel.url}/v1` },
        out: path.join(tmp.dir, 'agents-mcp-stdio-cf'),
      });
    } finally {
      await recordedModel.close();
    }
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    // With a new prompt the model (live) asks for another city: the server (in the sandbox) is
    // asked for it, and its call to the weather API, which the recording cannot answer, is held back.
    const model = await startFakeOpenAI({ toolArgs: { get_forecast: { city: 'Oslo' } } });
    try {
      const result = await replay({
        recording: recorded.dir,
        mode: 'counterfactual',
        systemPrompt: 'You are a terse weather desk.',
        env: { ...env, OPENAI_BASE_URL: `${model.url}/v1` },
        out: path.join(tmp.dir, 'agents-mcp-stdio-cf-replay'),
        stdio: 'pipe',
        timeoutMs: 120_000,
      });
      expect(result.exitCode, result.output?.stderr).toBe(0);
      expect(result.heldBack.map((h) => h.target)).toEqual([expect.stringContaining('/forecast?city=Oslo')]);
      expect(weather.hits()).toBe(1);
      const replayed = await readRecording(result.dir);
      const calls = toolCalls(replayed).filter((t) => t.stateType === 'MCP_CALL');
      expect(calls).toEqual([
        expect.objectContaining({
          kind: 'mcp',
          name: 'get_forecast',
          args: { city: 'Oslo' },
          // What the server made of the held-back answer, as the agent read it.
          result: { content: [{ type: 'text', text: expect.stringMatching(/^Oslo: /) }] },
        }),
      ]);
    } finally {
      await model.close();
      await weather.close();
    }
  });
});
