// A counterfactual replay of an agent whose tool makes a model call of its own with no system
// message (a RAG answer writer): the new prompt (or the patch) changes the agent's own calls and
// leaves the tool's call as it was; a patch that does not fit a prompt is a divergence at its
// step; and steps the replay answers itself are named as the recorder names them.
import { createPatch } from 'diff';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareDivergence } from '../../src/bisect/index.js';
import { type Recording, readRecording } from '../../src/recording/index.js';
import { type Answerer, type ReplayOptions, replay } from '../../src/replay/index.js';
import { type CliRecording, recordWithCli, stepNamesOf, tempDir } from '../sdks/harness.js';
import { type FakeCall, type FakeOpenAI, startFakeOpenAI } from '../sdks/servers/fake-openai.js';
import { startWeatherApi, type WeatherApi } from '../sdks/servers/weather-api.js';

const PARIS = 'You are a weather desk for Paris. Use docs_search before answering.';
const OSLO = 'You are a weather desk for Oslo. Use docs_search before answering.';

let tmp: ReturnType<typeof tempDir>;
let model: FakeOpenAI;
let weather: WeatherApi;
let env: Record<string, string>;
let recorded: CliRecording;
let original: Recording;

beforeAll(async () => {
  tmp = tempDir();
  model = await startFakeOpenAI({ toolArgs: { docs_search: { query: 'weather policy' } } });
  weather = await startWeatherApi();
  env = { OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'sk-fake-rag', WEATHER_URL: weather.url };
  recorded = await recordWithCli({ agent: 'rag-tool-agent.mjs', env, out: `${tmp.dir}/recorded` });
  original = await readRecording(recorded.dir);
}, 180_000);

afterAll(async () => {
  await model?.close();
  await weather?.close();
  tmp?.remove();
});

/** A counterfactual replay; returns it with the model requests the FAKE server received meanwhile. */
async function counterfactual(name: string, options: Partial<ReplayOptions>) {
  const before = model.calls.length;
  const result = await replay({
    recording: recorded.dir,
    mode: 'counterfactual',
    env,
    out: `${tmp.dir}/${name}`,
    stdio: 'pipe',
    timeoutMs: 120_000,
    ...options,
  });
  return { result, replayed: await readRecording(result.dir), sent: model.calls.slice(before) };
}

const messagesOf = (call: FakeCall) => call.body.messages as Array<{ role: string; content: unknown }>;

/** The step of the tool's own model call (no system message) in a run, and how it was answered. */
function innerCall(run: Recording) {
  const call = run.events.find((e) => e.type === 'model.called' && e.payload.system === undefined);
  const exchange = run.events.find((e) => e.type === 'http.exchange' && e.stepId === call?.stepId);
  return {
    step: call?.stepId,
    messages: call?.type === 'model.called' ? call.payload.messages : undefined,
    servedFrom: exchange?.type === 'http.exchange' ? exchange.payload.servedFrom : undefined,
  };
}

/** The id of the tool call the model decided at `step`. */
function decidedAt(run: Recording, step: number): string | undefined {
  const call = run.events.find((e) => e.type === 'model.called' && e.stepId === step);
  return call?.type === 'model.called' ? call.payload.output.toolCalls[0]?.id : undefined;
}

describe('an agent whose tool calls the model without a system message', () => {
  it('records the tool step after the tool and the inner model call with no system prompt', () => {
    expect(recorded.status).toBe('complete');
    expect(stepNamesOf(original).map(([, name, route]) => [name, route])).toEqual([
      ['fake-gpt-1', undefined],
      ['docs_search', 'GET /forecast'],
      ['fake-gpt-1', undefined],
      ['fake-gpt-1', undefined],
    ]);
    expect(innerCall(original).step).toBe(3);
  });

  it('--system-prompt: the agent calls carry the new prompt; the tool call is left as recorded', async () => {
    const { result, replayed, sent } = await counterfactual('system-prompt', { systemPrompt: OSLO });
    // Only the agent's own calls went live, each with the new prompt in place of the old one.
    expect(sent.map((c) => messagesOf(c)[0])).toEqual([
      { role: 'system', content: OSLO },
      { role: 'system', content: OSLO },
    ]);
    // The tool's call was the recorded request, byte for byte: served from the recording.
    expect(innerCall(replayed)).toEqual({ ...innerCall(original), servedFrom: 'recording' });
    expect(result.output?.stdout).toContain('FINAL: FAKE final');
  });

  it('--prompt-patch: the agent calls are patched; the tool call, which has no prompt, is left as recorded', async () => {
    const patch = createPatch('prompt', PARIS, OSLO);
    const { result, replayed, sent } = await counterfactual('patch', { promptPatch: patch });
    expect(sent.map((c) => messagesOf(c)[0])).toEqual([
      { role: 'system', content: OSLO },
      { role: 'system', content: OSLO },
    ]);
    expect(innerCall(replayed)).toEqual({ ...innerCall(original), servedFrom: 'recording' });
    expect(result.divergences.filter((d) => d.message.includes('prompt patch'))).toEqual([]);
    expect(result.output?.stdout).toContain('FINAL: FAKE final');
  });

  it('a patch that does not apply to a prompt the agent sends is a divergence at that step, the call sent unpatched', async () => {
    const patch = createPatch('prompt', PARIS, OSLO);
    const other = 'You are a weather desk for Lima. Use docs_search before answering.';
    const { result, replayed, sent } = await counterfactual('patch-misfit', {
      promptPatch: patch,
      env: { ...env, AGENT_PROMPT: other },
    });
    const misfits = result.divergences.filter((d) => d.message.includes('prompt patch does not apply'));
    expect(misfits.map((d) => d.step)).toEqual([1, 4]);
    // The agent's calls went on as it made them; no step is missing and the agent finished.
    expect(sent.map((c) => messagesOf(c)[0])).toEqual([
      { role: 'system', content: other },
      { role: 'system', content: other },
    ]);
    expect(stepNamesOf(replayed).map(([step, name]) => [step, name])).toEqual([
      [1, 'fake-gpt-1'],
      [2, 'docs_search'],
      [3, 'fake-gpt-1'],
      [4, 'fake-gpt-1'],
    ]);
    expect(result.output?.stdout).toContain('FINAL: FAKE final');
  });

  it('a held-back tool request keeps the tool name; the changed tool model call goes live without a system message', async () => {
    const { result, replayed, sent } = await counterfactual('held-back', {
      systemPrompt: OSLO,
      env: { ...env, DOCS_CITY: 'oslo' },
    });
    expect(result.heldBack.map((h) => [h.step, h.method])).toEqual([[2, 'GET']]);
    expect(stepNamesOf(replayed)[1]).toEqual([2, 'docs_search', 'GET /forecast', decidedAt(replayed, 1)]);
    // The tool's call changed (it quotes the held-back answer), so it went live, as the agent made it.
    const inner = sent.filter((c) => messagesOf(c).every((m) => m.role !== 'system'));
    expect(inner.map((c) => messagesOf(c).map((m) => m.role))).toEqual([['user']]);
    expect(innerCall(replayed).servedFrom).toBe('live');

    // Bisect names the step alike in both runs: the divergence stays at the same step.
    const shift = await compareDivergence(original, replayed, () => ({
      name: 'after retrieval',
      evaluate: ({ step }) => ({ verdict: step >= 2 ? 'bad' : 'good' }),
    }));
    expect(shift.summary).toBe('the divergence stayed at step 2 (API_CALL docs_search)');
  });

  it('a tool request an answerer serves keeps the tool name', async () => {
    const direct: Answerer = {
      name: 'direct',
      servedFrom: 'sandbox',
      accepts: (ask) => !ask.isModel && ask.request.url.startsWith(weather.url),
      async answer(ask) {
        const started = Date.now();
        const res = await fetch(ask.request.url);
        const bytes = Buffer.from(await res.arrayBuffer());
        return {
          url: ask.request.url,
          started,
          durationMs: Date.now() - started,
          response: {
            status: res.status,
            statusText: res.statusText,
            headers: { 'content-type': 'application/json' },
            bytes,
          },
        };
      },
    };
    const { replayed } = await counterfactual('answered', {
      systemPrompt: OSLO,
      env: { ...env, DOCS_CITY: 'lima' },
      answerers: [direct],
    });
    expect(stepNamesOf(replayed)[1]).toEqual([2, 'docs_search', 'GET /forecast', decidedAt(replayed, 1)]);
  });
});
