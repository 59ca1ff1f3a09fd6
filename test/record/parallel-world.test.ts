// World changes of calls that overlap land on the step that made them (record --fs). The agent
// runs a model's two tool calls in one turn, as the AI SDK and Mastra do once the stream names
// them: a slow forecast API and a file read and write at once; or two file writes at once. The
// capture layer's barriers are per call, so a drain of the world at one call's boundary used to
// find the other call's write on disk before its message arrived: a "file changes" step named
// after the forecast call, and the write step with no change. Recorded many times, with quiet
// barriers and with a round trip at every boundary. The overlap is made certain: the model's
// stream ends in one write (its end, which drains, comes before the forecast call's barrier, a
// round trip then), the agent's context is large (the recorder decodes the model call before it
// drains for that barrier, while the file tool runs), and the forecast API answers late.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateRecording, parseContract } from '../../src/evaluate/index.js';
import { recordCommand } from '../../src/record/index.js';
import { canonicalJson, type Recording, readRecording, worldAt } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, type TestServer, tempDir } from './helpers.js';

const tmp = tempDir('tapedeck-parallel-world-');
afterAll(() => tmp.remove());

/** The forecast API answers after this long: the file tool's read and write happen meanwhile. */
const API_DELAY_MS = 60;
/** The agent's context (bytes): the recorder decodes the model call before it drains for the forecast call. */
const CONTEXT_BYTES = 4_000_000;

// The agent (plain Node): a streamed model answer decides get_forecast and save_note; as soon as
// the stream says so (before it has ended) both run at once; a second model call gets the results.
const AGENT = `
import fs from 'node:fs/promises';
const [model, api] = [process.env.MODEL_URL, process.env.API_URL];
const tools = [
  { type: 'function', function: { name: 'get_forecast', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  { type: 'function', function: { name: 'save_note', parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } } } } },
];
const ask = (messages, stream) => fetch(model + '/v1/chat/completions', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'fake-race-1', stream, messages, tools }),
});
const messages = [
  { role: 'system', content: 'Notes so far: ' + 'n'.repeat(Number(process.env.CONTEXT_BYTES)) },
  { role: 'user', content: 'What is the weather in Paris? Save a note.' },
];
const res = await ask(messages, true);
const reader = res.body.getReader();
let buf = '';
let running;
for (;;) {
  const { value, done } = await reader.read();
  if (done) break;
  buf += new TextDecoder().decode(value);
  if (running === undefined && buf.includes('"finish_reason":"tool_calls"')) {
    running = Promise.all([
      fetch(api + '/forecast?city=Paris').then((r) => r.json()),
      (async () => {
        const before = await fs.readFile('workspace/notes.txt', 'utf8');
        await fs.writeFile('workspace/notes.txt', before + 'paris: cloudy\\n');
        return { ok: true };
      })(),
    ]);
  }
}
const [forecast, saved] = await running;
messages.push(
  { role: 'assistant', content: null, tool_calls: [
    { id: 'call_f', type: 'function', function: { name: 'get_forecast', arguments: '{"city":"Paris"}' } },
    { id: 'call_n', type: 'function', function: { name: 'save_note', arguments: '{"path":"notes.txt","text":"paris: cloudy"}' } },
  ] },
  { role: 'tool', tool_call_id: 'call_f', content: JSON.stringify(forecast) },
  { role: 'tool', tool_call_id: 'call_n', content: JSON.stringify(saved) },
);
const final = await (await ask(messages, false)).json();
console.log(final.choices[0].message.content);
`;

// Two file tools at once: each write must be its own step's change.
const TWO_WRITES = `
import fs from 'node:fs/promises';
const api = process.env.API_URL;
await fetch(api + '/forecast?city=Paris').then((r) => r.json());
await Promise.all([
  fs.writeFile('workspace/a.txt', 'a\\n'),
  fs.writeFile('workspace/b.txt', 'b\\n'),
  new Promise((resolve, reject) => (async () => {
    const fsc = await import('node:fs');
    fsc.writeFile('workspace/c.txt', 'c\\n', (e) => (e ? reject(e) : resolve()));
  })()),
]);
await fetch(api + '/forecast?city=Paris').then((r) => r.json());
`;

/** A streamed chat completion chunk. */
const chunk = (delta: unknown, finish: string | null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'fake-race-1', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

let model: TestServer | undefined;
let api: TestServer | undefined;
beforeAll(async () => {
  // A FAKE model (the only fake): the first call streams two tool calls, the second answers.
  model = await startServer(async (_req, body, res) => {
    const json = JSON.parse(body) as { stream?: boolean };
    if (json.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'c2',
          object: 'chat.completion',
          created: 1,
          model: 'fake-race-1',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: 'Paris is cloudy, 18 C. I saved a note in notes.txt.' },
              finish_reason: 'stop',
            },
          ],
          usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 },
        }),
      );
      return;
    }
    const calls = [
      { id: 'call_f', name: 'get_forecast', arguments: '{"city":"Paris"}' },
      { id: 'call_n', name: 'save_note', arguments: '{"path":"notes.txt","text":"paris: cloudy"}' },
    ];
    const usage = { prompt_tokens: 30, completion_tokens: 20, total_tokens: 50 };
    // The whole stream in one write: the capture layer sees its end before the agent reads the
    // tool calls, so the forecast call's opening barrier is a round trip (the end drains).
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(
      [
        chunk({ role: 'assistant', content: '' }, null),
        ...calls.map((c, index) =>
          chunk(
            { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }] },
            null,
          ),
        ),
        chunk({}, 'tool_calls'),
        `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'fake-race-1', choices: [], usage })}\n\n`,
        'data: [DONE]\n\n',
      ].join(''),
    );
  });
  // A real, slow tool API.
  api = await startServer(async (_req, _body, res) => {
    await new Promise((resolve) => setTimeout(resolve, API_DELAY_MS));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"city":"paris","sky":"cloudy","tempC":18}');
  });
});
afterAll(async () => {
  await model?.close();
  await api?.close();
});

const CONTRACT = parseContract(
  `
task_id: parallel_note_001
task_name: Forecast for Paris, saved as a note
input:
  user_instruction: What is the weather in Paris? Save a note.
success_criteria:
  required_outputs: [final_answer]
expected_state:
  files:
    - { path: notes.txt, exists: true, matches: 'paris' }
rules:
  - { id: one_note, tool: save_note, max_calls: 1 }
`,
  'parallel.yaml',
);

interface Step {
  id: number;
  name: string;
  route?: string;
  stateType: string;
  toolCallId?: string;
  changes: string[];
}

function stepsOf(recording: Recording): Step[] {
  return recording.events
    .filter((e) => e.type === 'step.started')
    .map((s) => {
      const p = s.payload as { name: string; route?: string; stateType: string; toolCallId?: string };
      return {
        id: s.stepId,
        name: p.name,
        ...(p.route === undefined ? {} : { route: p.route }),
        stateType: p.stateType,
        ...(p.toolCallId === undefined ? {} : { toolCallId: p.toolCallId }),
        changes: recording.events
          .filter((e) => e.stepId === s.stepId && e.type === 'fs.changed')
          .map((e) => {
            const c = e.payload as { op: string; path: string };
            return `${c.op} ${c.path}`;
          }),
      };
    });
}

/** Records `agent` once in a fresh workspace; `roundTrips`: a round trip at every boundary (no quiet barriers). */
async function record(name: string, agent: string, roundTrips: boolean) {
  const dir = path.join(tmp.dir, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.join(dir, 'workspace'), { recursive: true });
  writeFileSync(path.join(dir, 'workspace', 'notes.txt'), 'notes\n');
  const file = path.join(dir, 'agent.mjs');
  writeFileSync(file, agent);
  const out = path.join(dir, 'rec');
  const result = await recordCommand({
    command: [process.execPath, file],
    cwd: dir,
    env: { MODEL_URL: model?.url ?? '', API_URL: api?.url ?? '', CONTEXT_BYTES: String(CONTEXT_BYTES) },
    fsRoot: path.join(dir, 'workspace'),
    out,
    stdio: 'ignore',
    // onEvent turns quiet barriers off: a round trip at every boundary.
    ...(roundTrips ? { onEvent: () => {} } : {}),
  });
  expect(result.exitCode).toBe(0);
  const recording = await readRecording(out);
  expect(canonicalJson(worldAt(recording, stepsOf(recording).length).fs)).toBe(canonicalJson(recording.post.fs));
  return { dir, out, recording, steps: stepsOf(recording) };
}

const RUNS = 6;

describe.each([
  ['quiet barriers', false],
  ['a round trip at every boundary', true],
])('record --fs, calls that overlap (%s)', (mode, roundTrips) => {
  it('puts the note on the write step under save_note, with no step of its own, every time', async () => {
    for (let i = 0; i < RUNS; i++) {
      const { steps } = await record(`note-${roundTrips}-${i}`, AGENT, roundTrips);
      const summary = steps.map((s) => `${s.name}${s.route ? ` (${s.route})` : ''} ${s.stateType} [${s.changes}]`);
      // One model step, the forecast call, the read and the write (in whatever order), the last model step.
      expect(
        steps.filter((s) => s.route === 'file changes' || s.name === 'file changes'),
        summary.join('\n'),
      ).toEqual([]);
      const write = steps.find((s) => s.route === 'write_file' || s.name === 'write_file');
      expect(write, summary.join('\n')).toMatchObject({
        name: 'save_note',
        toolCallId: 'call_n',
        stateType: 'FILE_WRITE',
        changes: ['modify notes.txt'],
      });
      const forecast = steps.find((s) => s.route === 'GET /forecast');
      expect(forecast, summary.join('\n')).toMatchObject({ name: 'get_forecast', toolCallId: 'call_f', changes: [] });
      expect(steps.length, `${mode}\n${summary.join('\n')}`).toBe(5);
    }
  });

  it('gives each of two writes at once its own change', async () => {
    for (let i = 0; i < RUNS; i++) {
      const { steps } = await record(`two-${roundTrips}-${i}`, TWO_WRITES, roundTrips);
      const writes = steps
        .filter((s) => s.stateType === 'FILE_WRITE')
        .map((s) => `${s.name} ${s.changes.join(',')}`)
        .sort();
      expect(writes, steps.map((s) => `${s.name} [${s.changes}]`).join('\n')).toEqual([
        'write_file create a.txt',
        'write_file create b.txt',
        'write_file create c.txt',
      ]);
    }
  });
});

describe('a recording of calls that overlap', () => {
  it('passes its contract and replays exactly', async () => {
    const { dir, out, recording } = await record('eval-replay', AGENT, false);
    const evaluation = evaluateRecording(recording, CONTRACT);
    expect(evaluation.findings.filter((f) => f.hard)).toEqual([]);
    expect(evaluation.task.hardSuccess).toBe(true);
    expect(evaluation.diff.sideEffects).toEqual([]);
    const replayed = await replay({
      recording: out,
      mode: 'exact',
      out: path.join(dir, 'replay'),
      stdio: 'ignore',
      isolation: 'none',
      timeoutMs: 120_000,
    });
    expect(replayed.divergences).toEqual([]);
    const again = await readRecording(path.join(dir, 'replay'));
    expect(canonicalJson(again.post.fs)).toBe(canonicalJson(recording.post.fs));
  });
});
