// Two agents in one run (`@openai/agents`: a front desk whose tool is a forecaster agent, each
// with its own instructions). The forecaster's model calls run inside the desk's tool call: its
// answer is THINK, the desk's is the run's FINALIZE. A prompt override changes ONE agent's prompt:
// the desk's by default, the forecaster's with promptFor; the other agent's calls go out as they
// were made, so they match the recording and are served from it.
import path from 'node:path';
import { createPatch } from 'diff';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyProvenanceCounts, readRecording, TapedeckError } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { modelCalls, recordWithCli, replayExact, stepTypes, tempDir } from './harness.js';
import { type FakeOpenAI, startFakeOpenAI } from './servers/fake-openai.js';
import { startWeatherApi } from './servers/weather-api.js';

const DESK = 'You are the front desk. Ask the forecaster, then answer the guest politely.';
const FORECASTER = 'You are the forecaster. Call get_forecast and report the sky in one line.';

let tmp: ReturnType<typeof tempDir>;
let model: FakeOpenAI;
let env: Record<string, string>;
let dir: string;
let agentStdout: string;
beforeAll(async () => {
  tmp = tempDir();
  model = await startFakeOpenAI({ toolArgs: { get_forecast: { city: 'Oslo' }, ask_forecaster: { input: 'Oslo' } } });
  const weather = await startWeatherApi();
  env = { OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'sk-fake-team', WEATHER_URL: weather.url };
  try {
    const recorded = await recordWithCli({
      agent: 'openai-agents-team-agent.mjs',
      env,
      out: path.join(tmp.dir, 'rec'),
    });
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    dir = recorded.dir;
    agentStdout = recorded.agentStdout;
  } finally {
    // Replays answer the forecast from the recording; the model stays up for live calls.
    await weather.close();
  }
}, 120_000);
afterAll(async () => {
  await model?.close();
  tmp?.remove();
});

/** The instructions each model request of a replay carried, in order. */
async function counterfactual(
  name: string,
  options: { systemPrompt?: string; promptPatch?: string; promptFor?: string },
) {
  const before = model.calls.length;
  const result = await replay({
    recording: dir,
    mode: 'counterfactual',
    ...options,
    env,
    out: path.join(tmp.dir, name),
    stdio: 'pipe',
    timeoutMs: 60_000,
  });
  expect(result.status, result.output?.stderr).toBe('complete');
  expect(result.output?.stdout).toBe(agentStdout);
  const replayed = await readRecording(result.dir);
  return {
    result,
    live: model.calls.slice(before).map((c) => c.body.instructions),
    sent: modelCalls(replayed).map((c) => c.system),
  };
}

describe('two agents in one run (@openai/agents, an agent used as a tool)', () => {
  it('the inner agent’s answer is THINK; the run has one FINALIZE; the exact replay reproduces it', async () => {
    const recording = await readRecording(dir);
    expect(modelCalls(recording).map((c) => c.system)).toEqual([DESK, FORECASTER, FORECASTER, DESK]);
    const types = [
      [1, 'THINK'],
      [2, 'THINK'],
      [3, 'API_CALL'],
      [4, 'THINK'],
      [5, 'FINALIZE'],
    ];
    expect(stepTypes(recording)).toEqual(types);
    const result = await replayExact(dir, env, path.join(tmp.dir, 'exact'));
    expect(result.divergences).toEqual([]);
    expect(stepTypes(await readRecording(result.dir))).toEqual(types);
  });

  it('--system-prompt changes the desk’s prompt only; the forecaster’s calls are served from the recording', async () => {
    const { result, live, sent } = await counterfactual('cf-replace', { systemPrompt: 'You are a terse desk.' });
    expect(live).toEqual(['You are a terse desk.', 'You are a terse desk.']);
    expect(sent).toEqual(['You are a terse desk.', FORECASTER, FORECASTER, 'You are a terse desk.']);
    expect(result.served).toEqual({ ...emptyProvenanceCounts(), recording: 3, live: 2 });
  });

  it('a patch made against the desk’s prompt patches the desk’s calls and leaves the forecaster’s, with no divergence for them', async () => {
    const patched = DESK.replace('politely', 'tersely');
    const { result, sent } = await counterfactual('cf-patch', {
      promptPatch: createPatch('prompt', DESK, patched),
    });
    expect(sent).toEqual([patched, FORECASTER, FORECASTER, patched]);
    expect(result.divergences.filter((d) => d.message.includes('does not apply'))).toEqual([]);
  });

  it('promptFor picks the forecaster: its calls go live with the new prompt, the desk’s are served as recorded', async () => {
    const { result, live, sent } = await counterfactual('cf-for', {
      systemPrompt: 'You are a forecaster who answers in haiku.',
      promptFor: 'the forecaster.',
    });
    expect(live).toEqual(['You are a forecaster who answers in haiku.', 'You are a forecaster who answers in haiku.']);
    expect(sent).toEqual([
      DESK,
      'You are a forecaster who answers in haiku.',
      'You are a forecaster who answers in haiku.',
      DESK,
    ]);
    expect(result.served).toEqual({ ...emptyProvenanceCounts(), recording: 3, live: 2 });
  });

  it('promptFor naming no recorded prompt is refused before the agent starts, naming the prompts there are', async () => {
    const error = await replay({
      recording: dir,
      mode: 'counterfactual',
      systemPrompt: 'x',
      promptFor: 'the concierge',
      env,
      out: path.join(tmp.dir, 'cf-none'),
      stdio: 'pipe',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TapedeckError);
    expect((error as TapedeckError).code).toBe('PROMPT_TARGET_NOT_FOUND');
    expect((error as TapedeckError).message).toContain('"You are the forecaster.');
  });

  it('a handoff: the specialist answers the guest (FINALIZE); --system-prompt changes the front desk only', async () => {
    const recorded = await recordWithCli({
      agent: 'openai-agents-team-agent.mjs',
      args: ['--handoff'],
      env,
      out: path.join(tmp.dir, 'handoff'),
    });
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    const recording = await readRecording(recorded.dir);
    const handoffDesk = 'You are the front desk. Hand weather questions to the forecaster.';
    expect(modelCalls(recording).map((c) => c.system)).toEqual([handoffDesk, FORECASTER]);
    expect(stepTypes(recording)).toEqual([
      [1, 'THINK'],
      [2, 'FINALIZE'],
    ]);
    const before = model.calls.length;
    const result = await replay({
      recording: recorded.dir,
      mode: 'counterfactual',
      systemPrompt: 'You are a terse desk.',
      env,
      out: path.join(tmp.dir, 'handoff-cf'),
      stdio: 'pipe',
      timeoutMs: 60_000,
    });
    expect(result.status).toBe('complete');
    expect(model.calls.slice(before).map((c) => c.body.instructions)).toEqual(['You are a terse desk.', FORECASTER]);
  });
});
