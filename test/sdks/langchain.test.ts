// LangChain JS (`@langchain/openai` ChatOpenAI + `@langchain/core` tools), unchanged: a tool-calling
// loop over Chat Completions whose tool calls the weather API with axios and reads the clock and
// Math.random. `tapedeck record` decodes the model calls (usage bucket by bucket) and the axios
// call as a tool step; the exact replay, every server stopped, reproduces the run with zero
// divergences; a counterfactual replay sends the new system prompt to the model and answers the
// tool from the recording, with the same clock and random values.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alignRuns } from '../../src/bisect/index.js';
import { trajectoryOf } from '../../src/evaluate/index.js';
import { buildLedger } from '../../src/ledger/index.js';
import { emptyProvenanceCounts, readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import {
  expectedBuckets,
  installedVersion,
  modelCalls,
  recordWithCli,
  replayExact,
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

const FORECAST = { city: 'paris', tempC: 18, sky: 'cloudy' };
/** What the tool returned, as the final answer quotes it. */
const toolResult = (stdout: string) =>
  JSON.parse(/^FINAL: FAKE final: the tool said (\{.*\})$/m.exec(stdout)?.[1] ?? '{}') as Record<string, unknown>;

describe(`LangChain JS (@langchain/openai ${installedVersion('@langchain/openai')}) with an axios tool`, () => {
  it('is recorded with its model and tool calls, and replays exactly and with a new prompt, the tool API stopped', async () => {
    const model = await startFakeOpenAI({ toolArgs: { get_forecast: { city: 'Paris' } } });
    const weather = await startWeatherApi();
    const env = { OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'sk-fake-langchain', WEATHER_URL: weather.url };
    try {
      const recorded = await recordWithCli({ agent: 'langchain-agent.mjs', env, out: path.join(tmp.dir, 'rec') });
      expect(recorded.exitCode, recorded.stderr).toBe(0);
      expect(recorded.status).toBe('complete');
      const said = toolResult(recorded.agentStdout);
      expect(said).toEqual({ ...FORECAST, checkedAt: expect.stringMatching(/^\d{4}-/), draw: expect.any(Number) });

      const recording = await readRecording(recorded.dir);
      expect(recording.manifest.runtime.sdkVersions).toMatchObject({
        '@langchain/openai': installedVersion('@langchain/openai'),
        openai: expect.any(String),
      });
      expect(stepTypes(recording)).toEqual([
        [1, 'THINK'],
        [2, 'API_CALL'],
        [3, 'FINALIZE'],
      ]);
      const calls = modelCalls(recording);
      expect(calls.map((c) => c.usage)).toEqual(model.calls.map((c) => expectedBuckets(c.usage)));
      expect(calls[0]).toMatchObject({ provider: 'openai', api: 'chat.completions', model: 'fake-gpt-1' });
      expect(calls[0]?.output.toolCalls).toEqual([
        { id: 'call_fake_1', name: 'get_forecast', arguments: '{"city":"Paris"}' },
      ]);
      expect(toolCalls(recording)).toEqual([
        expect.objectContaining({
          kind: 'http',
          name: 'GET /forecast',
          args: { city: 'Paris' },
          result: FORECAST,
          step: 2,
        }),
      ]);

      // Exact: both servers down, everything from the recording, the same output byte for byte.
      await weather.close();
      const modelCallsBefore = model.calls.length;
      const exact = await replayExact(recorded.dir, env, path.join(tmp.dir, 'exact'));
      expect(exact.divergences).toEqual([]);
      expect(exact.served).toEqual({ ...emptyProvenanceCounts(), recording: 3 });
      expect(exact.output?.stdout).toBe(recorded.agentStdout);
      expect(model.calls.length).toBe(modelCallsBefore);
      expect(steps(await readRecording(exact.dir))).toEqual(steps(recording));

      // Counterfactual: the model (up) gets the new prompt; the tool (its API down) is answered from
      // the recording, and its clock and random reads get the recorded values.
      const counterfactual = await replay({
        recording: recorded.dir,
        mode: 'counterfactual',
        systemPrompt: 'You are a terse weather desk.',
        env,
        out: path.join(tmp.dir, 'counterfactual'),
        stdio: 'pipe',
        timeoutMs: 120_000,
      });
      expect(counterfactual.status).toBe('complete');
      expect(
        model.calls.slice(modelCallsBefore).map((c) => (c.body.messages as Array<{ content: string }>)[0]?.content),
      ).toEqual(['You are a terse weather desk.', 'You are a terse weather desk.']);
      expect(counterfactual.served).toEqual({ ...emptyProvenanceCounts(), recording: 1, live: 2 });
      expect(counterfactual.heldBack).toEqual([]);
      expect(toolResult(counterfactual.output?.stdout ?? '')).toEqual(said);
    } finally {
      await model.close();
      await weather.close().catch(() => {});
    }
  });
  // Traced to LangSmith (its real client, a local collector): what the tracer sends, how it is
  // batched and what it draws (run ids, the multipart boundary, times) depend on when its batches
  // flush. Recorded against a slow tool API, replayed with everything answered at once: the
  // exports are answered whatever they carry, at the side of the run's steps, and the tracer's
  // draws are not the agent's, so the agent's own clock and random values stay aligned.
  it('traced to LangSmith, replays exactly although the tracer batches differently', async () => {
    const model = await startFakeOpenAI({ toolArgs: { get_forecast: { city: 'Paris' } } });
    const weather = await startWeatherApi({ delayMs: 1500 });
    const exports: string[] = [];
    const collector = http.createServer((req, res) => {
      exports.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const env = {
      OPENAI_BASE_URL: `${model.url}/v1`,
      OPENAI_API_KEY: 'sk-fake-langchain',
      WEATHER_URL: weather.url,
      LANGSMITH_TRACING: 'true',
      LANGSMITH_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      LANGSMITH_API_KEY: 'lsv2-fake-key',
    };
    try {
      const recorded = await recordWithCli({ agent: 'langchain-agent.mjs', env, out: path.join(tmp.dir, 'traced') });
      expect(recorded.exitCode, recorded.stderr).toBe(0);
      // The tracer flushed while the tool waited on its API, and again at the end.
      expect(exports.filter((e) => e.startsWith('POST /runs')).length).toBeGreaterThanOrEqual(2);
      const recording = await readRecording(recorded.dir);
      const telemetry = steps(recording).filter(([, , name]) => name.startsWith('telemetry '));
      expect(telemetry.length).toBeGreaterThanOrEqual(2);
      expect(telemetry.every(([, type]) => type === 'OBSERVE')).toBe(true);
      const run = steps(recording).filter(([, , name]) => !name.startsWith('telemetry '));
      expect(run.map(([, type]) => type)).toEqual(['THINK', 'API_CALL', 'FINALIZE']);
      // The ledger's tool events are the agent's tools: the tracer's exports are not among them.
      expect(buildLedger(recording).tools.map((t) => t.tool_name)).toEqual(['get_forecast']);
      // Nor are they tool steps, or steps at all, for an eval contract.
      const trajectory = trajectoryOf(recording);
      expect(trajectory.toolSteps.map((t) => t.name)).toEqual(['get_forecast']);
      expect(trajectory.stepCount).toBe(3);

      const before = exports.length;
      for (const isolation of ['auto', 'none'] as const) {
        const result = await replay({
          recording: recorded.dir,
          mode: 'exact',
          env,
          out: path.join(tmp.dir, `traced-${isolation}`),
          stdio: 'pipe',
          timeoutMs: 120_000,
          ...(isolation === 'none' ? { isolation } : {}),
        });
        expect(result.divergences, `${isolation}: ${result.output?.stderr}`).toEqual([]);
        expect(result.output?.stdout).toBe(recorded.agentStdout);
        // The run's own steps keep their numbers, and the two runs do not part (telemetry is not an action).
        const replayedRecording = await readRecording(result.dir);
        const replayed = steps(replayedRecording).filter(([, , name]) => !name.startsWith('telemetry '));
        expect(replayed.sort((a, b) => a[0] - b[0])).toEqual(run.sort((a, b) => a[0] - b[0]));
        expect(alignRuns(recording, replayedRecording).firstDivergence).toBeUndefined();
      }
      expect(exports.length).toBe(before);
      expect(weather.hits()).toBe(1);
    } finally {
      await model.close();
      await weather.close();
      collector.closeAllConnections();
      await new Promise((resolve) => collector.close(resolve));
    }
  });
});
