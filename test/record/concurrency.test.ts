// Concurrent requests: 50 through fetch and 50 through node:http at once (Promise.all), each
// answered after a different delay so responses arrive out of order — every recorded exchange
// must pair a request with its own response.
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { bodyText, type HttpExchangePayload, readRecording } from '../../src/recording/index.js';
import { FIXTURES, startServer, type TestServer, tempDir } from './helpers.js';

let server: TestServer;
const tmp = tempDir();

beforeAll(async () => {
  server = await startServer(async (req, body, res) => {
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? '';
    const n = Number(id.slice(1));
    // Later requests answer sooner: completion order is the reverse of start order.
    await new Promise((r) => setTimeout(r, 60 - n));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id, echoed: JSON.parse(body).id }));
  });
});
afterAll(async () => {
  await server.close();
  tmp.remove();
});

it('pairs each of 100 concurrent requests (fetch and node:http) with its own response', async () => {
  let stdout = '';
  const out = path.join(tmp.dir, 'rec');
  const result = await recordCommand({
    command: [process.execPath, path.join(FIXTURES, 'concurrent-agent.mjs')],
    env: { TOOL_URL: server.url, N: '50' },
    out,
    stdio: 'pipe',
    onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
  });
  expect(result.exitCode).toBe(0);
  expect(stdout.trim()).toBe('100/100');
  const recording = await readRecording(out);
  const exchanges = recording.events
    .filter((e) => e.type === 'http.exchange')
    .map((e) => e.payload as HttpExchangePayload);
  expect(exchanges).toHaveLength(100);
  const ids = new Set<string>();
  for (const exchange of exchanges) {
    const asked = new URL(exchange.request.url).searchParams.get('id');
    const sent = JSON.parse(bodyText(recording, exchange.request.body)).id;
    const answer = JSON.parse(bodyText(recording, exchange.response?.body));
    expect(sent).toBe(asked);
    expect(answer).toEqual({ id: asked, echoed: asked });
    ids.add(String(asked));
  }
  expect(ids.size).toBe(100);
  // One tool step per exchange, each naming the same exchange.
  const tools = recording.events.filter((e) => e.type === 'tool.called');
  expect(tools).toHaveLength(100);
  for (const e of tools) {
    const exchange = recording.events.find((x) => x.type === 'http.exchange' && x.stepId === e.stepId)
      ?.payload as HttpExchangePayload;
    expect((e.payload as { exchangeId?: string }).exchangeId).toBe(exchange.exchangeId);
  }
});
