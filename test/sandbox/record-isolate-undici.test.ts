// record --isolate with an agent that uses the npm undici package directly (request, Pool, Client,
// its fetch, stream, a composed dispatcher, an EnvHttpProxyAgent, a streamed body, an SSE answer). Its dispatchers are
// neither fetch's nor node:http's, and in the OS sandbox the only way out is the recording proxy:
// every dispatch must be handed to it, recorded as a step, and replayed exactly with the real API
// stopped — the real API's hit counter is the sentinel.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, type TestServer } from '../record/helpers.js';
import { realDir } from './helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'undici-agent.mjs');

describe.runIf(detectIsolation().level === 'bwrap')('record --isolate (npm undici agent)', () => {
  let api: TestServer;
  let dir: { dir: string; remove(): Promise<void> };
  let hits = 0;

  beforeAll(async () => {
    dir = await realDir('isolate-undici-');
    api = await startServer((req, body, res) => {
      hits++;
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/moved') {
        res.writeHead(302, { location: '/orders/9' }).end();
        return;
      }
      if (url.pathname === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"n":1}\n\n');
        setTimeout(() => res.end('data: {"n":2}\n\ndata: [DONE]\n\n'), 20);
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ path: url.pathname, query: url.search, tool: req.headers['x-tool'], body, by: 'real api' }),
      );
    });
  });
  afterAll(async () => {
    await api?.close();
    await dir?.remove();
  });

  it('hands every dispatch to the proxy, records it, and replays it with the API stopped', async () => {
    const out = path.join(dir.dir, 'rec');
    let recorded = '';
    const result = await recordCommand({
      command: [process.execPath, AGENT],
      env: { TOOL_API_URL: api.url },
      out,
      stdio: 'pipe',
      isolate: true,
      onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (recorded += d.toString())),
    });
    expect(result.exitCode, recorded).toBe(0);
    const lines = recorded
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { what: string; value: unknown });
    expect(lines.map((l) => l.what)).toEqual([
      'request',
      'pool',
      'client',
      'fetch',
      'stream',
      'redirected',
      'upload',
      'sse',
      'proxy-agent',
    ]);
    expect(lines.find((l) => l.what === 'upload')?.value).toMatchObject({ body: 'part one, part two' });
    expect(lines.find((l) => l.what === 'redirected')?.value).toMatchObject({ path: '/orders/9' });
    expect(lines.find((l) => l.what === 'sse')?.value).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n');
    // A real run: the API saw all ten requests (the redirect is two).
    expect(hits).toBe(10);

    const rec = await readRecording(out);
    const calls = rec.events
      .filter((e) => e.type === 'http.exchange')
      .map((e) => (e.payload as { request: { method: string; url: string } }).request)
      .map((r) => `${r.method} ${new URL(r.url).pathname}`);
    expect(calls).toEqual([
      'POST /orders',
      'GET /orders/7',
      'GET /stock',
      'GET /price',
      'GET /notes',
      'GET /moved',
      'GET /orders/9',
      'PUT /upload',
      'GET /events',
      'GET /via-proxy-agent',
    ]);

    await api.close();
    const again = await replay({
      recording: out,
      mode: 'exact',
      out: path.join(dir.dir, 'replay'),
      stdio: 'pipe',
      env: { TOOL_API_URL: api.url },
    });
    expect(again.divergences, again.output?.stderr).toEqual([]);
    expect(again.exitCode).toBe(0);
    expect(again.output?.stdout).toBe(recorded);
    expect(hits).toBe(10);
  });
});
