// In-process recording with record(options, fn): the OpenAI Responses API (streamed and not)
// through the real SDK, tool() wrappers, MCP tools/call over HTTP, the body size cap and sampling.
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record, tool } from '../../src/record/index.js';
import {
  type HttpExchangePayload,
  type ModelCalledPayload,
  readRecording,
  type ToolCalledPayload,
} from '../../src/recording/index.js';
import { startFakeModel, startServer, type TestServer, tempDir } from './helpers.js';

let model: Awaited<ReturnType<typeof startFakeModel>>;
let mcp: TestServer;
const tmp = tempDir();

beforeAll(async () => {
  model = await startFakeModel();
  mcp = await startServer((_req, body, res) => {
    const message = JSON.parse(body) as { id: number; method: string; params?: { name?: string } };
    res.writeHead(200, { 'content-type': 'application/json' });
    const result =
      message.method === 'tools/call'
        ? { content: [{ type: 'text', text: `called ${message.params?.name}` }] }
        : { tools: [{ name: 'search_docs' }] };
    const padding = message.method === 'tools/list' ? 'x'.repeat(5000) : undefined;
    res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result, padding }));
  });
});
afterAll(async () => {
  await model.close();
  await mcp.close();
  tmp.remove();
});

const rpc = (id: number, method: string, params: object) =>
  fetch(`${mcp.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  }).then((r) => r.json());

describe('record() in-process', () => {
  it('records Responses API calls, tool() calls and MCP calls as steps', async () => {
    const addNumbers = tool('add_numbers', async (a: number, b: number) => a + b, { stateType: 'SCRIPT_EXEC' });
    const out = path.join(tmp.dir, 'in-process');
    const { dir, result, recorded } = await record({ out, name: 'in-process', maxBodyBytes: 1000 }, async () => {
      // SDK clients take globalThis.fetch when constructed: make them inside the recorded function.
      const client = new OpenAI({ baseURL: `${model.url}/v1`, apiKey: 'sk-test-in-process', maxRetries: 0 });
      const plain = await client.responses.create({
        model: 'fake-responses-1',
        instructions: 'Be brief.',
        input: 'hi',
      });
      const stream = await client.responses.create({ model: 'fake-responses-1', input: 'again', stream: true });
      let streamed = '';
      for await (const event of stream) if (event.type === 'response.output_text.delta') streamed += event.delta;
      const sum = await addNumbers(2, 3);
      await rpc(1, 'tools/list', {});
      const called = (await rpc(2, 'tools/call', { name: 'search_docs', arguments: { q: 'refund' } })) as {
        result: unknown;
      };
      return { plain: plain.output_text, streamed, sum, called: called.result };
    });
    expect(recorded).toBe(true);
    expect(result).toMatchObject({ plain: 'answer 1', streamed: 'answer 2', sum: 5 });

    const recording = await readRecording(dir);
    const steps = recording.events
      .filter((e) => e.type === 'step.started')
      .map((e) => `${(e.payload as { stateType: string }).stateType} ${(e.payload as { name: string }).name}`);
    expect(steps).toEqual([
      'FINALIZE fake-responses-1',
      'FINALIZE fake-responses-1',
      'SCRIPT_EXEC add_numbers',
      'OBSERVE mcp tools/list',
      'MCP_CALL search_docs',
    ]);
    const calls = recording.events.filter((e) => e.type === 'model.called').map((e) => e.payload as ModelCalledPayload);
    expect(calls[0]).toMatchObject({
      provider: 'openai',
      api: 'responses',
      streamed: false,
      system: 'Be brief.',
      output: { text: 'answer 1', toolCalls: [] },
      usage: { inputUncached: 110 - 31, cacheRead: 31, cacheWrite: 0, output: 21 - 5, reasoning: 5 },
    });
    expect(calls[1]).toMatchObject({ streamed: true, output: { text: 'answer 2' } });
    expect(calls[1]?.ttftMs).toBeGreaterThanOrEqual(0);

    const tools = recording.events.filter((e) => e.type === 'tool.called').map((e) => e.payload as ToolCalledPayload);
    expect(tools[0]).toMatchObject({ kind: 'in-process', name: 'add_numbers', args: [2, 3], result: 5 });
    expect(tools[2]).toMatchObject({
      kind: 'mcp',
      name: 'search_docs',
      stateType: 'MCP_CALL',
      args: { q: 'refund' },
      mutating: true,
      result: { content: [{ type: 'text', text: 'called search_docs' }] },
    });
    // The tools/list answer (5 KB) was cut at the cap and says so; the agent still got all of it.
    expect(tools[1]).toMatchObject({ stateType: 'OBSERVE', mutating: false, resultBody: { truncated: true } });
    const exchange = recording.events.find((e) => e.type === 'http.exchange' && e.stepId === 4)
      ?.payload as HttpExchangePayload;
    expect(exchange.response?.body).toMatchObject({ truncated: true, size: 1000 });
    // The API key never reaches the disk.
    const first = recording.events.find((e) => e.type === 'http.exchange')?.payload as HttpExchangePayload;
    expect(first.request.headers.authorization).not.toContain('sk-test-in-process');
  });

  it("names the server's time zone and locale in the recording, as a replay will run the agent in them", async () => {
    const before = process.env.TZ;
    process.env.TZ = 'Pacific/Chatham';
    try {
      const { dir } = await record({ out: path.join(tmp.dir, 'zone'), name: 'zone' }, async () => Date.now());
      expect((await readRecording(dir)).manifest.runtime).toMatchObject({
        timeZone: 'Pacific/Chatham',
        // Fixed when this process started, whatever its env says since.
        locale: new Intl.DateTimeFormat().resolvedOptions().locale,
      });
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });

  it('attributes file changes made in-process to the step during which they happened', async () => {
    const ws = path.join(tmp.dir, 'ws');
    mkdirSync(ws, { recursive: true });
    const out = path.join(tmp.dir, 'in-process-world');
    const rpcResult = await record({ out, fsRoot: ws }, async () => {
      await rpc(1, 'tools/call', { name: 'first', arguments: {} });
      await writeFile(path.join(ws, 'a.txt'), 'written between calls');
      return rpc(2, 'tools/call', { name: 'second', arguments: {} });
    });
    expect(rpcResult.recorded).toBe(true);
    const recording = await readRecording(out);
    const steps = recording.events
      .filter((e) => e.type === 'step.started')
      .map((e) => (e.payload as { stateType: string }).stateType);
    expect(steps).toEqual(['MCP_CALL', 'FILE_WRITE', 'MCP_CALL']);
    expect(recording.events.find((e) => e.type === 'fs.changed')).toMatchObject({
      stepId: 2,
      payload: { path: 'a.txt', op: 'create' },
    });
    expect(recording.post.fs?.files['a.txt']).toBeDefined();
  });

  it('a recording the recording thread cannot open: a run with onRecorderError goes on unrecorded, one without never starts', async () => {
    // The parent folder is checked once per process: replaced by a file after that check, only
    // the thread's open finds it, after a server's run has started (it does not wait for it).
    const parent = path.join(tmp.dir, 'gone-parent');
    mkdirSync(parent);
    expect((await record({ out: path.join(parent, 'first') }, async () => 1)).recorded).toBe(true);
    rmSync(parent, { recursive: true });
    writeFileSync(parent, 'a file where the folder was');
    const errors: unknown[] = [];
    let ran = 0;
    const run = await record({ out: path.join(parent, 'second'), onRecorderError: (e) => errors.push(e) }, async () => {
      ran++;
      return 42;
    });
    expect(run).toMatchObject({ recorded: false, result: 42, dir: '' });
    expect(ran).toBe(1);
    expect(errors).toHaveLength(1);
    expect(String((errors[0] as Error).message)).toMatch(/ENOTDIR|not a directory/);
    // Without onRecorderError the run must be recorded or not run at all.
    await expect(
      record({ out: path.join(parent, 'third') }, async () => {
        ran++;
      }),
    ).rejects.toThrow(/ENOTDIR|not a directory/);
    expect(ran).toBe(1);
    rmSync(parent);
    // Nothing half-made beside it.
    expect(readdirSync(tmp.dir).filter((f) => f.includes('second') || f.includes('third'))).toEqual([]);
    expect(existsSync(parent)).toBe(false);
  });

  it('just runs the function when the run is not sampled', async () => {
    const out = path.join(tmp.dir, 'not-sampled');
    const run = await record({ out, sample: 0 }, async () => 42);
    expect(run).toMatchObject({ recorded: false, result: 42, dir: '' });
  });
});
