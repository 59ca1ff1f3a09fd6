// A crash of the agent mid-run (SIGKILL while a streamed model call is open) leaves a readable
// recording marked incomplete that holds every step finished before the crash.
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { FIXTURES, startFakeModel, startServer, type TestServer, tempDir } from './helpers.js';

let model: Awaited<ReturnType<typeof startFakeModel>>;
let tools: TestServer;
const tmp = tempDir();

beforeAll(async () => {
  model = await startFakeModel({ toolTurns: 5, hangOnCall: 3 });
  tools = await startServer((req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ found: req.url }));
  });
});
afterAll(async () => {
  await model.close();
  await tools.close();
  tmp.remove();
});

it('leaves an incomplete recording with every finished step when the agent is killed mid-stream', async () => {
  const out = path.join(tmp.dir, 'rec');
  const result = await recordCommand({
    command: [process.execPath, path.join(FIXTURES, 'chat-agent.mjs')],
    env: { MODEL_URL: model.url, TOOL_URL: tools.url, STREAM: '1', CRASH_ON_CALL: '3' },
    out,
    stdio: 'ignore',
  });
  expect(result.signal).toBe('SIGKILL');
  const recording = await readRecording(out);
  expect(recording.manifest.status).toBe('incomplete');
  const completed = recording.events.filter((e) => e.type === 'step.completed').map((e) => e.stepId);
  const started = recording.events.filter((e) => e.type === 'step.started');
  // Model call 1, its tool call, model call 2, its tool call; model call 3 never finished.
  expect(completed).toEqual([1, 2, 3, 4]);
  expect(started.map((e) => (e.payload as { stateType: string }).stateType)).toEqual([
    'THINK',
    'RETRIEVE', // GET /lookup: a lookup-like path
    'THINK',
    'RETRIEVE',
  ]);
  expect(recording.events.filter((e) => e.type === 'model.called')).toHaveLength(2);
  const end = recording.events.at(-1);
  expect(end?.type).toBe('run.completed');
  expect(end?.payload).toMatchObject({ status: 'failed', signal: 'SIGKILL' });
});
