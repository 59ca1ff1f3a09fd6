// Where a replay does not copy the recorded steps (counterfactual mode, past --fork-at K, past a
// divergence in exact mode) the agent's own file reads and writes under the fs root are steps of
// the replay as the recorder makes them: named as recorded, with their tool call and the changes
// they made in the sandbox, so the ledger and the evaluator see them; one the recording did not
// hold was served by the sandbox, and the ledger, the provenance and the timeline say so. In exact
// mode with no divergence the recorded file steps are copied as before.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trajectoryOf } from '../../src/evaluate/index.js';
import { buildLedger } from '../../src/ledger/index.js';
import { recordCommand } from '../../src/record/index.js';
import { answerProvenance, type Recording, readRecording, type ServedFrom } from '../../src/recording/index.js';
import { type ReplayOptions, replay } from '../../src/replay/index.js';
import { indexSteps } from '../../tui/data/steps.js';
import { tempDir } from '../record/helpers.js';
import { type FakeOpenAI, startFakeOpenAI } from '../sdks/servers/fake-openai.js';
import { startWeatherApi, type WeatherApi } from '../sdks/servers/weather-api.js';

const AGENT = fileURLToPath(new URL('./fixtures/notes-agent.mjs', import.meta.url));
const LOGGING = 'You are a weather desk. Save a note of the forecast and keep a log.';
/** Makes the agent read a file the recording never read, read notes.txt again once written, and keep a log. */
const CHECKING = 'You are a weather desk. Check the archive, save a note of the forecast, verify it and keep a log.';
const tmp = tempDir('tapedeck-file-steps-');
const workspace = path.join(tmp.dir, 'ws');
let model: FakeOpenAI;
let weather: WeatherApi;
let env: Record<string, string>;
let recording: Recording;

beforeAll(async () => {
  model = await startFakeOpenAI({ toolArgs: { save_note: { city: 'oslo' } } });
  weather = await startWeatherApi();
  env = { OPENAI_BASE_URL: `${model.url}/v1`, WEATHER_URL: weather.url, WORKSPACE: workspace };
  rmSync(workspace, { recursive: true, force: true });
  mkdirSync(workspace, { recursive: true });
  writeFileSync(path.join(workspace, 'notes.txt'), 'old note\n');
  writeFileSync(path.join(workspace, 'archive.txt'), 'oslo: rain\n');
  const out = path.join(tmp.dir, 'rec');
  const result = await recordCommand({
    command: [process.execPath, AGENT],
    env,
    fsRoot: workspace,
    out,
    stdio: 'ignore',
  });
  expect(result.exitCode).toBe(0);
  recording = await readRecording(out);
}, 60_000);

afterAll(async () => {
  await model?.close();
  await weather?.close();
  if (!process.env.KEEP) tmp.remove();
});

async function replayed(name: string, options: Partial<ReplayOptions>) {
  const result = await replay({
    recording: recording.dir,
    mode: 'counterfactual',
    env,
    out: path.join(tmp.dir, name),
    stdio: 'pipe',
    timeoutMs: 60_000,
    ...options,
  });
  return { result, run: await readRecording(result.dir) };
}

/** Each step: [step, state type, step name, the tool call's name and args]. */
function stepsOf(run: Recording): Array<[number, string, string, string?, unknown?]> {
  return run.events.flatMap((e): Array<[number, string, string, string?, unknown?]> => {
    if (e.type !== 'step.started') return [];
    const tool = run.events.find((t) => t.type === 'tool.called' && t.stepId === e.stepId);
    const call = tool?.type === 'tool.called' ? [tool.payload.name, tool.payload.args] : [];
    return [[e.stepId, e.payload.stateType, e.payload.name, ...call] as [number, string, string, string?, unknown?]];
  });
}

/** The fs.changed events of a run: [step, path, op, content after]. */
function changesOf(run: Recording): Array<[number, string, string, string?]> {
  return run.events.flatMap(
    (e): Array<[number, string, string, string?]> =>
      e.type === 'fs.changed' ? [[e.stepId, e.payload.path, e.payload.op, e.payload.after?.text]] : [],
  );
}

const FORECAST = 'oslo: {"city":"oslo","tempC":4,"sky":"snow"}';
/** The run with the logging prompt: the recorded steps, and the log written in a step of its own. */
const LOGGED = [
  [1, 'THINK', 'fake-gpt-1'],
  [2, 'API_CALL', 'save_note', 'GET /forecast', { city: 'oslo' }],
  [3, 'FILE_READ', 'read_file', 'read_file', { path: 'notes.txt' }],
  [4, 'FILE_WRITE', 'write_file', 'write_file', { path: 'notes.txt' }],
  [5, 'FILE_WRITE', 'append_file', 'append_file', { path: 'log.txt' }],
  [6, 'FINALIZE', 'fake-gpt-1'],
];
const LOGGED_CHANGES = [
  [4, 'notes.txt', 'modify', `old note\n${FORECAST}\n`],
  [5, 'log.txt', 'create', 'noted oslo\n'],
];

describe("a replay's own file steps", () => {
  it('records the file read and write the tool made after the model decided it', () => {
    expect(stepsOf(recording)).toEqual(LOGGED.filter(([step]) => step !== 5).map((s, i) => [i + 1, ...s.slice(1)]));
    expect(changesOf(recording)).toEqual([LOGGED_CHANGES[0]]);
  });

  it('counterfactual with a new prompt: the file steps are the replay’s, named as recorded, with their changes', async () => {
    const { result, run } = await replayed('cf', { systemPrompt: LOGGING });
    expect(result.served.live).toBeGreaterThan(0);
    expect(stepsOf(run)).toEqual(LOGGED);
    expect(changesOf(run)).toEqual(LOGGED_CHANGES);
    // Each file step is the recorder's: the same tool call (result included) under the model step.
    const recordedRead = recording.events.find((e) => e.type === 'tool.called' && e.stepId === 3);
    const read = run.events.find((e) => e.type === 'tool.called' && e.stepId === 3);
    const { latencyMs: _a, ...recordedCall } = recordedRead?.type === 'tool.called' ? recordedRead.payload : {};
    const { latencyMs: _b, ...call } = read?.type === 'tool.called' ? read.payload : {};
    expect(call).toEqual(recordedCall);
    expect(read?.parentStepId).toBe(1);
    // The engines read them: the ledger's steps and the evaluator's trajectory.
    expect(buildLedger(run).steps.map((s) => s.state_type)).toEqual(LOGGED.map(([, type]) => type));
    expect(trajectoryOf(run).toolSteps.map((s) => [s.stepId, s.stateType])).toEqual([
      [2, 'API_CALL'],
      [3, 'FILE_READ'],
      [4, 'FILE_WRITE'],
      [5, 'FILE_WRITE'],
    ]);
  }, 60_000);

  it('--fork-at K: the steps before K come from the recording, the file steps after it are the replay’s', async () => {
    const { result, run } = await replayed('fork', { systemPrompt: LOGGING, forkAt: 3, isolation: 'none' });
    const servedFrom = run.events.flatMap((e) =>
      e.type === 'http.exchange' ? [[e.stepId, e.payload.servedFrom]] : [],
    );
    expect(servedFrom).toEqual([
      [1, 'recording'],
      [2, 'recording'],
      [6, 'live'],
    ]);
    expect(result.divergences.every((d) => d.step >= 3)).toBe(true);
    expect(stepsOf(run)).toEqual(LOGGED);
    expect(changesOf(run)).toEqual(LOGGED_CHANGES);
  }, 60_000);

  it('exact mode past a divergence: the file steps are the replay’s', async () => {
    // The agent reads the logging prompt from its env: its model requests differ from the recorded ones.
    const { result, run } = await replayed('exact-diverged', {
      mode: 'exact',
      env: { ...env, SYSTEM_PROMPT: LOGGING },
    });
    expect(result.divergences[0]).toMatchObject({ kind: 'different-request', step: 1 });
    expect(stepsOf(run)).toEqual(LOGGED);
    expect(changesOf(run)).toEqual(LOGGED_CHANGES);
  }, 60_000);

  it('counterfactual: a file step the recording did not hold was served by the sandbox, one it held by the recording', async () => {
    const { result, run } = await replayed('served-from', { systemPrompt: CHECKING });
    const steps = [
      [1, 'THINK', 'fake-gpt-1'],
      [2, 'API_CALL', 'save_note', 'GET /forecast', { city: 'oslo' }],
      [3, 'FILE_READ', 'read_file', 'read_file', { path: 'archive.txt' }],
      [4, 'FILE_READ', 'read_file', 'read_file', { path: 'notes.txt' }],
      [5, 'FILE_WRITE', 'write_file', 'write_file', { path: 'notes.txt' }],
      [6, 'FILE_READ', 'read_file', 'read_file', { path: 'notes.txt' }],
      [7, 'FILE_WRITE', 'append_file', 'append_file', { path: 'log.txt' }],
      [8, 'FINALIZE', 'fake-gpt-1'],
    ];
    expect(stepsOf(run)).toEqual(steps);
    // A file never read in the recording (3), a file the recording read once read again with what the
    // step before wrote (6), a file it never wrote (7): the sandbox's copy of the workspace answered.
    const served: Array<[number, ServedFrom]> = [
      [1, 'live'],
      [2, 'recording'],
      [3, 'sandbox'],
      [4, 'recording'],
      [5, 'recording'],
      [6, 'sandbox'],
      [7, 'sandbox'],
      [8, 'live'],
    ];
    expect(buildLedger(run).steps.map((s) => [s.step_id, s.served_from])).toEqual(served);
    const provenance = answerProvenance(run);
    expect([...provenance.steps].sort(([a], [b]) => a - b)).toEqual(served);
    expect(provenance.counts).toMatchObject({ recording: 3, sandbox: 3, live: 2 });
    expect(result.served.sandbox).toBe(3);
    expect(indexSteps(run).rows.map((r) => [r.stepId, r.servedFrom])).toEqual(served);
  }, 60_000);

  it('exact mode with no divergence copies the recorded file steps', async () => {
    const { result, run } = await replayed('exact', { mode: 'exact' });
    expect(result.divergences).toEqual([]);
    // The steps themselves as recorded (their latencies too); their changes as the replay saw them.
    const fileSteps = (r: Recording) =>
      r.events
        .filter((e) => (e.stepId === 3 || e.stepId === 4) && e.type !== 'nondeterminism')
        .map(({ seq: _s, traceId: _t, time: _time, ...e }) => (e.type === 'fs.changed' ? e.payload : e));
    expect(fileSteps(run)).toEqual(fileSteps(recording));
    expect(buildLedger(run).steps.map((s) => [s.step_id, s.served_from])).toEqual([
      [1, 'recording'],
      [2, 'recording'],
      [3, 'recording'],
      [4, 'recording'],
      [5, 'recording'],
    ]);
  }, 60_000);
});
