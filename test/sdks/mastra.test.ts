// Mastra (`@mastra/core` Agent + createTool), unchanged: an agent on Mastra's own OpenAI-compatible
// model router, streaming (Agent.stream), with two tools — one calls the weather API with fetch, one
// reads and appends to a notes file — driven through the whole CLI journey (test/sdks/journey.ts).
// Its stream asks for no usage (no `stream_options.include_usage`): the FAKE model, as the real
// API, then sends none.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecording } from '../../src/recording/index.js';
import { tapedeck } from '../cli/run-cli.js';
import { installedVersion, recordWithCli, tempDir } from './harness.js';
import { runJourney } from './journey.js';
import { startFakeOpenAI } from './servers/fake-openai.js';
import { startWeatherApi } from './servers/weather-api.js';

const PROMPT = 'You are a weather desk. Use get_forecast, then save_note, then answer.';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.remove());

const CONTRACT = `task_id: weather_note_001
input: { user_instruction: What is the weather in Paris today? Note it down. }
success_criteria:
  required_outputs: [final_answer]
  must_include: [saved]
fields: { saved: 'saved' }
expected_state:
  files:
    - { path: notes.txt, exists: true, matches: 'Paris: cloudy, 18C' }
  side_effects: fail
rules:
  - { id: order, order: [get_forecast, save_note] }
`;

describe(`Mastra (@mastra/core ${installedVersion('@mastra/core')}) Agent.stream`, () => {
  it('goes through record, verify, exact and changed-prompt replays, ledger, eval and bisect with the CLI', {
    timeout: 400_000,
  }, async () => {
    const model = await startFakeOpenAI({
      toolPlan: ['get_forecast', 'save_note'],
      toolArgs: { get_forecast: { city: 'Paris' }, save_note: { note: 'Paris: cloudy, 18C' } },
      streamUsage: 'when-asked',
    });
    const weather = await startWeatherApi();
    const workspace = path.join(tmp.dir, 'desk');
    mkdirSync(workspace);
    const notes = path.join(workspace, 'notes.txt');
    writeFileSync(notes, 'Oslo: snow\n');
    try {
      const { recorded } = await runJourney({
        agent: 'mastra-agent.mjs',
        env: {
          OPENAI_BASE_URL: `${model.url}/v1`,
          OPENAI_API_KEY: 'sk-fake-mastra',
          WEATHER_URL: weather.url,
          NOTES_DIR: workspace,
        },
        worldFlags: ['--fs', workspace],
        steps: [
          ['THINK', 'fake-gpt-1'],
          ['API_CALL', 'get_forecast'],
          ['THINK', 'fake-gpt-1'],
          ['FILE_READ', 'save_note'],
          ['FILE_WRITE', 'write_file'],
          ['FINALIZE', 'fake-gpt-1'],
        ],
        prompt: PROMPT,
        model,
        weather,
        world: async () => readFileSync(notes, 'utf8'),
        contract: CONTRACT,
        dir: tmp.dir,
      });
      expect(readFileSync(notes, 'utf8')).toBe('Oslo: snow\nParis: cloudy, 18C\n');
      expect(recorded.agentStdout).toContain('FINAL: FAKE final: the tool said {"saved":true,"line":2}');
      const recording = await readRecording(recorded.dir);
      expect(recording.manifest.runtime.sdkVersions).toMatchObject({
        '@mastra/core': installedVersion('@mastra/core'),
      });
      expect(weather.hits()).toBe(1);
    } finally {
      await model.close();
      await weather.close();
    }
  });

  it('is bisected by `tapedeck bisect` to the answer that claims a note the world does not hold', {
    timeout: 200_000,
  }, async () => {
    const model = await startFakeOpenAI({
      toolPlan: ['get_forecast', 'save_note'],
      toolArgs: { get_forecast: { city: 'Paris' }, save_note: { note: 'Paris: cloudy, 18C' } },
      streamUsage: 'when-asked',
      finalText: 'I saved the reading as note N-7042.',
    });
    const weather = await startWeatherApi();
    const workspace = path.join(tmp.dir, 'claims');
    mkdirSync(workspace);
    try {
      const recorded = await recordWithCli({
        agent: 'mastra-agent.mjs',
        flags: ['--fs', workspace],
        env: {
          OPENAI_BASE_URL: `${model.url}/v1`,
          OPENAI_API_KEY: 'sk-fake-mastra',
          WEATHER_URL: weather.url,
          NOTES_DIR: workspace,
        },
        out: path.join(tmp.dir, 'claims-rec'),
      });
      expect(recorded.exitCode, recorded.stderr).toBe(0);
      const found = await tapedeck(['bisect', recorded.dir]);
      expect(found.code, found.stderr).toBe(1);
      expect(found.stdout).toContain('first bad step: 6 (FINALIZE fake-gpt-1)');
      expect(found.stdout).toMatch(/\[claims\] step 6 claims .*N-7042/);
      expect(found.stdout).toContain('last good step: 5');
    } finally {
      await model.close();
      await weather.close();
    }
  });
});
