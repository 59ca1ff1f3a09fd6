// The Vercel AI SDK (`ai` 6 + `@ai-sdk/openai` 3), unchanged: generateText with a tool over
// Chat Completions and streamText with the same tool over the Responses API are recorded by
// `tapedeck record` (model calls with usage bucket by bucket, the tool's HTTP call as a tool
// step under its THINK step), then replayed exactly with every server stopped.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyProvenanceCounts, readRecording } from '../../src/recording/index.js';
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

const AI_VERSION = installedVersion('ai');
const AI_OPENAI_VERSION = installedVersion('@ai-sdk/openai');
const FORECAST = { city: 'paris', tempC: 18, sky: 'cloudy' };

describe('ai SDK 6 with @ai-sdk/openai 3', () => {
  it.concurrent.each([
    { mode: 'generate', api: 'chat.completions', path: '/v1/chat/completions', streamed: false },
    { mode: 'stream', api: 'responses', path: '/v1/responses', streamed: true },
  ])(
    '$mode ($api) is recorded with its model and tool calls and replays exactly with the servers stopped',
    async ({ mode, api, path: apiPath, streamed }) => {
      const model = await startFakeOpenAI({ toolArgs: { get_forecast: { city: 'Paris' } } });
      const weather = await startWeatherApi();
      const env = { OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'sk-fake-ai-sdk', WEATHER_URL: weather.url };
      let recorded: Awaited<ReturnType<typeof recordWithCli>>;
      try {
        recorded = await recordWithCli({
          agent: 'ai-sdk-agent.mjs',
          args: [mode],
          env,
          out: path.join(tmp.dir, `${mode}-recorded`),
        });
      } finally {
        await model.close();
        await weather.close();
      }
      expect(recorded.exitCode, recorded.stderr).toBe(0);
      expect(recorded.status).toBe('complete');
      const answer = /^FINAL: FAKE final: the tool said (\{.*\})$/m.exec(recorded.agentStdout)?.[1] ?? '{}';
      // The tool stamps the time after its fetch (a clock read the replay must hand back unchanged).
      expect(JSON.parse(answer)).toEqual({ ...FORECAST, checkedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
      expect(model.calls.map((c) => [c.path, c.stream])).toEqual([
        [apiPath, streamed],
        [apiPath, streamed],
      ]);

      const recording = await readRecording(recorded.dir);
      expect(recording.manifest.status).toBe('complete');
      expect(recording.manifest.runtime.sdkVersions).toMatchObject({
        ai: AI_VERSION,
        '@ai-sdk/openai': AI_OPENAI_VERSION,
      });
      expect(stepTypes(recording)).toEqual([
        [1, 'THINK'],
        [2, 'API_CALL'],
        [3, 'FINALIZE'],
      ]);
      const [think, final] = modelCalls(recording);
      for (const [i, call] of [think, final].entries()) {
        expect(call).toMatchObject({ provider: 'openai', api, streamed, model: 'fake-gpt-1' });
        // The recorded usage is what the model server reported, bucket by bucket.
        expect(call?.usage).toEqual(expectedBuckets(model.calls[i]?.usage ?? {}));
        expect(call?.tools?.length).toBe(1);
        expect(call?.system).toContain('weather desk');
      }
      expect(think?.output.toolCalls).toEqual([
        { id: 'call_fake_1', name: 'get_forecast', arguments: '{"city":"Paris"}' },
      ]);
      expect(final?.output).toEqual({ text: `FAKE final: the tool said ${answer}`, toolCalls: [] });
      const [forecast, ...others] = toolCalls(recording);
      expect(others).toEqual([]);
      expect(forecast).toMatchObject({
        kind: 'http',
        name: 'GET /forecast',
        stateType: 'API_CALL',
        args: { city: 'Paris' },
        result: FORECAST,
        mutating: false,
        step: 2,
        parentStepId: 1,
      });

      expect(stepNamesOf(recording)).toContainEqual([2, 'get_forecast', 'GET /forecast', 'call_fake_1']);

      // Exact replay: model and tool API are down; everything comes from the recording.
      const weatherHits = weather.hits();
      const result = await replayExact(recorded.dir, env, path.join(tmp.dir, `${mode}-replay`));
      expect(result.divergences).toEqual([]);
      expect(result.status).toBe('complete');
      expect(result.exitCode).toBe(0);
      expect(result.output?.stdout).toBe(recorded.agentStdout);
      expect(result.served).toEqual({ ...emptyProvenanceCounts(), recording: 3, live: 0 });
      expect(result.blockedConnections).toEqual([]);
      expect(weather.hits()).toBe(weatherHits);
      expect(model.calls.length).toBe(2);
      const replayed = await readRecording(result.dir);
      expect(replayed.manifest.replayOf).toBe(recording.manifest.id);
      expect(steps(replayed)).toEqual(steps(recording));
      expect(modelCalls(replayed).map((c) => c.usage)).toEqual(modelCalls(recording).map((c) => c.usage));
    },
  );
});
