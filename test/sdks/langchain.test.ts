// LangChain JS (`@langchain/openai` ChatOpenAI + `@langchain/core` tools), unchanged: a tool-calling
// loop over Chat Completions whose tool calls the weather API with axios and reads the clock and
// Math.random. `tapedeck record` decodes the model calls (usage bucket by bucket) and the axios
// call as a tool step; the exact replay, every server stopped, reproduces the run with zero
// divergences; a counterfactual replay sends the new system prompt to the model and answers the
// tool from the recording, with the same clock and random values.
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
});
