// Inside a recorded child: in-process tool calls reported over IPC become steps, and the
// Date/Math.random/crypto values the agent read are in the recording, in the order it read them.
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import {
  type HttpExchangePayload,
  type NondeterminismPayload,
  readRecording,
  type ToolCalledPayload,
} from '../../src/recording/index.js';
import { FIXTURES, startServer, tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(() => tmp.remove());

it('records the calls of node grandchildren too (NODE_OPTIONS is inherited)', async () => {
  const server = await startServer((_req, _body, res) => {
    res.end('ok');
  });
  try {
    const out = path.join(tmp.dir, 'grandchild');
    let stdout = '';
    const result = await recordCommand({
      command: [process.execPath, path.join(FIXTURES, 'spawning-agent.mjs')],
      env: { TOOL_URL: server.url },
      out,
      stdio: 'pipe',
      onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
    });
    expect(result.exitCode).toBe(0);
    const recording = await readRecording(out);
    const calls = recording.events
      .filter((e) => e.type === 'http.exchange')
      .map((e) => (e.payload as HttpExchangePayload).request.url.replace(server.url, ''));
    expect(calls).toEqual(['/from-parent', '/from-grandchild']);
    const grandchild = recording.events.find(
      (e) => e.type === 'http.exchange' && (e.payload as HttpExchangePayload).request.url.endsWith('/from-grandchild'),
    )?.payload as HttpExchangePayload;
    expect(grandchild.exchangeId.startsWith(`${stdout.trim()}-`)).toBe(true);
  } finally {
    await server.close();
  }
});

it('records tool calls and the nondeterministic values handed to the agent', async () => {
  const out = path.join(tmp.dir, 'rec');
  let stdout = '';
  const result = await recordCommand({
    command: [process.execPath, path.join(FIXTURES, 'tool-agent.mjs')],
    out,
    stdio: 'pipe',
    onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
  });
  expect(result.exitCode).toBe(0);
  const printed = JSON.parse(stdout) as { now: number; random: number; uuid: string; sum: number; failure: string };
  expect(printed).toMatchObject({ sum: 5, failure: 'boom' });

  const recording = await readRecording(out);
  const tools = recording.events.filter((e) => e.type === 'tool.called').map((e) => e.payload as ToolCalledPayload);
  expect(tools).toEqual([
    expect.objectContaining({
      kind: 'in-process',
      name: 'add_numbers',
      stateType: 'SCRIPT_EXEC',
      args: [2, 3],
      result: 5,
    }),
    expect.objectContaining({ name: 'explode', error: { code: 'Error', message: 'boom' } }),
  ]);
  const steps = recording.events
    .filter((e) => e.type === 'step.completed')
    .map((e) => (e.payload as { status: string }).status);
  expect(steps).toEqual(['success', 'error']);

  const values = (kind: string) =>
    recording.events
      .filter((e) => e.type === 'nondeterminism' && (e.payload as NondeterminismPayload).kind === kind)
      .flatMap((e) => (e.payload as NondeterminismPayload).values);
  expect(values('clock')[0]).toBe(printed.now);
  expect(values('random')[0]).toBe(printed.random);
  expect(values('uuid')).toContain(printed.uuid);
  // new Date(0) is not nondeterministic and is not recorded.
  expect(values('clock')).toHaveLength(1);
});
