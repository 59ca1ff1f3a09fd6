// The OpenAI Agents SDK (`@openai/agents` 0.14), unchanged: an Agent with one function tool,
// run() over the Responses API (its default), streamed and not. `tapedeck record` decodes the
// Responses calls into model.called (tool calls, final text, usage bucket by bucket) and the
// tool's HTTP call into a tool step; the exact replay, with every server stopped, reproduces
// the run — including the SDK's own clock/random/uuid reads — with zero divergences. A
// counterfactual replay with a new system prompt rewrites the Responses `instructions`.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyProvenanceCounts, readRecording } from '../../src/recording/index.js';
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
import { startWeatherApi } from './servers/weather-api.js';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.remove());

const FORECAST = { city: 'oslo', tempC: 4, sky: 'snow' };
const FINAL = `FAKE final: the tool said ${JSON.stringify(FORECAST)}`;

describe('@openai/agents 0.14 run() over the Responses API', () => {
  it.concurrent.each([
    { label: 'run()', args: [] as string[], streamed: false },
    { label: 'run({ stream: true })', args: ['--stream'], streamed: true },
  ])('$label is recorded and replays exactly with the servers stopped', async ({ label, args, streamed }) => {
    const model = await startFakeOpenAI({ toolArgs: { get_forecast: { city: 'Oslo' } } });
    const weather = await startWeatherApi();
    const env = { OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'sk-fake-agents', WEATHER_URL: weather.url };
    const name = streamed ? 'stream' : 'plain';
    let recorded: Awaited<ReturnType<typeof recordWithCli>>;
    try {
      recorded = await recordWithCli({ agent: 'openai-agents-agent.mjs', args, env, out: path.join(tmp.dir, name) });
    } finally {
      await model.close();
      await weather.close();
    }
    expect(recorded.exitCode, `${label}: ${recorded.stderr}`).toBe(0);
    expect(recorded.agentStdout).toContain(`FINAL: ${FINAL}`);
    expect(model.calls.map((c) => [c.path, c.stream])).toEqual([
      ['/v1/responses', streamed],
      ['/v1/responses', streamed],
    ]);

    const recording = await readRecording(recorded.dir);
    expect(recording.manifest.status).toBe('complete');
    expect(recording.manifest.runtime.sdkVersions['@openai/agents']).toBe(installedVersion('@openai/agents'));
    expect(stepTypes(recording)).toEqual([
      [1, 'THINK'],
      [2, 'API_CALL'],
      [3, 'FINALIZE'],
    ]);
    const [think, final] = modelCalls(recording);
    for (const [i, call] of [think, final].entries()) {
      expect(call).toMatchObject({ provider: 'openai', api: 'responses', streamed, model: 'fake-gpt-1' });
      expect(call?.usage).toEqual(expectedBuckets(model.calls[i]?.usage ?? {}));
      // Responses `instructions` are the system prompt; the function tool is offered.
      expect(call?.system).toBe('You are a weather desk. Use get_forecast before answering.');
      expect(call?.tools).toEqual([expect.objectContaining({ type: 'function', name: 'get_forecast' })]);
      // Time to first token is measured on streamed calls.
      expect(call?.ttftMs !== undefined).toBe(streamed);
    }
    expect(think?.output.toolCalls).toEqual([
      { id: 'call_fake_1', name: 'get_forecast', arguments: '{"city":"Oslo"}' },
    ]);
    expect(final?.output).toEqual({ text: FINAL, toolCalls: [] });
    // The second request carries the tool result back as a function_call_output item.
    expect(final?.messages).toContainEqual(
      expect.objectContaining({ type: 'function_call_output', call_id: 'call_fake_1' }),
    );
    expect(toolCalls(recording)).toEqual([
      expect.objectContaining({
        kind: 'http',
        name: 'GET /forecast',
        stateType: 'API_CALL',
        args: { city: 'Oslo' },
        result: FORECAST,
        step: 2,
        parentStepId: 1,
      }),
    ]);
    // The tool step is named after the agent's tool and linked to the call it answers; the route is detail.
    expect(stepNamesOf(recording)).toContainEqual([2, 'get_forecast', 'GET /forecast', 'call_fake_1']);
    // The SDK reads the clock, Math.random and randomUUID (ids): recorded to be handed back.
    const kinds = new Set(recording.events.flatMap((e) => (e.type === 'nondeterminism' ? [e.payload.kind] : [])));
    expect(kinds).toContain('uuid');

    const result = await replayExact(recorded.dir, env, path.join(tmp.dir, `${name}-replay`));
    expect(result.divergences).toEqual([]);
    expect(result.status).toBe('complete');
    expect(result.output?.stdout).toBe(recorded.agentStdout);
    expect(result.served).toEqual({ ...emptyProvenanceCounts(), recording: 3, live: 0 });
    expect(result.blockedConnections).toEqual([]);
    expect(weather.hits()).toBe(1);
    expect(model.calls.length).toBe(2);
    const replayed = await readRecording(result.dir);
    expect(replayed.manifest.replayOf).toBe(recording.manifest.id);
    expect(steps(replayed)).toEqual(steps(recording));
    // Streamed Responses answers are re-streamed chunk by chunk, as recorded.
    const chunksOf = (r: typeof recording) =>
      r.events.flatMap((e) =>
        e.type === 'http.exchange' && e.payload.request.url.endsWith('/responses')
          ? [(e.payload.response?.chunks ?? []).map((c) => c.data)]
          : [],
      );
    expect(chunksOf(replayed)).toEqual(chunksOf(recording));
    expect(
      chunksOf(recording).every((c) => (streamed ? c.join('').includes('response.completed') : c.length === 0)),
    ).toBe(true);
  });

  it.concurrent('a counterfactual replay rewrites the Responses instructions; the tool comes from the recording', async () => {
    const model = await startFakeOpenAI({ toolArgs: { get_forecast: { city: 'Oslo' } } });
    const weather = await startWeatherApi();
    const env = { OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'sk-fake-agents', WEATHER_URL: weather.url };
    try {
      const recorded = await recordWithCli({ agent: 'openai-agents-agent.mjs', env, out: path.join(tmp.dir, 'cf') });
      expect(recorded.exitCode, recorded.stderr).toBe(0);
      await weather.close();
      const result = await replay({
        recording: recorded.dir,
        mode: 'counterfactual',
        systemPrompt: 'You are a terse weather desk.',
        env,
        out: path.join(tmp.dir, 'cf-replay'),
        stdio: 'pipe',
        timeoutMs: 30_000,
      });
      expect(result.status).toBe('complete');
      // The model (still up) got the new prompt as `instructions`; the weather API (down) was
      // answered from the recording.
      expect(model.calls.slice(2).map((c) => c.body.instructions)).toEqual([
        'You are a terse weather desk.',
        'You are a terse weather desk.',
      ]);
      expect(result.served).toEqual({ ...emptyProvenanceCounts(), recording: 1, live: 2 });
      expect(result.heldBack).toEqual([]);
      expect(weather.hits()).toBe(1);
      expect(result.output?.stdout).toBe(recorded.agentStdout);
      const replayed = await readRecording(result.dir);
      expect(replayed.manifest.replay?.mode).toBe('counterfactual');
      expect(modelCalls(replayed).map((c) => c.system)).toEqual([
        'You are a terse weather desk.',
        'You are a terse weather desk.',
      ]);
    } finally {
      await model.close();
      await weather.close().catch(() => {});
    }
  });
});
