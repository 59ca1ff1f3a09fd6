// fetch is recorded at undici's dispatcher where it can be and from a clone of the response where
// it cannot; whichever way a call goes, it is recorded once, with its request body, and the agent
// reads exactly what it reads unrecorded. Also: what the agent finished just before it crashed
// is in the recording (events are written at the end of each turn of its event loop, and at exit).
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { bodyText, type HttpExchangePayload, readRecording } from '../../src/recording/index.js';
import { FIXTURES, startServer, type TestServer, tempDir } from './helpers.js';

const AGENT = path.join(FIXTURES, 'fetch-paths-agent.mjs');
const SSE = ['data: {"n":1}\n\n', 'data: {"n":2}\n\n', 'data: [DONE]\n\n'];
let server: TestServer;
const tmp = tempDir();

beforeAll(async () => {
  server = await startServer(async (req, body, res) => {
    if (req.url === '/redirect') {
      res.writeHead(302, { location: '/target' });
      res.end();
    } else if (req.url === '/sse-gzip') {
      // One gzip member per event, flushed as it is written, like a compressing proxy would.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      for (const event of SSE) {
        res.write(gzipSync(event));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      res.end();
    } else {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`${req.method} ${req.url} <${body}>`);
    }
  });
});
afterAll(async () => {
  await server.close();
  tmp.remove();
});

function runPlain(env: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [AGENT], { env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', () => resolve(out.trim()));
  });
}

async function record(name: string, env: Record<string, string>, fsRoot?: string) {
  const out = path.join(tmp.dir, name);
  let stdout = '';
  const result = await recordCommand({
    command: [process.execPath, AGENT],
    env,
    out,
    ...(fsRoot === undefined ? {} : { fsRoot }),
    stdio: 'pipe',
    onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
  });
  const recording = await readRecording(out);
  const exchanges = recording.events
    .filter((e) => e.type === 'http.exchange')
    .map((e) => e.payload as HttpExchangePayload);
  return { result, stdout: stdout.trim(), recording, exchanges };
}

// With world capture (--fs) fetch is observed the same way, each call held at its step barriers.
it.each([
  ['without world capture', undefined],
  ['with --fs', 'ws'],
])('records every fetch once, with its body, whichever way it is dispatched (%s)', async (_, ws) => {
  const env = { TOOL_URL: server.url };
  const fsRoot = ws === undefined ? undefined : path.join(tmp.dir, ws);
  if (fsRoot !== undefined) mkdirSync(fsRoot, { recursive: true });
  const { result, stdout, recording, exchanges } = await record(`paths-${ws ?? 'plain'}`, env, fsRoot);
  expect(result.exitCode).toBe(0);
  expect(stdout).toBe(await runPlain(env));
  const calls = exchanges.map((x) => `${x.request.method} ${x.request.url.replace(server.url, '')}`);
  // A redirect fetch follows is two exchanges on the wire.
  expect(calls).toEqual([
    'POST /early',
    'POST /late',
    'POST /own',
    'POST /stream',
    'GET /redirect',
    'GET /target',
    'GET /sse-gzip',
    'PUT /replaced',
  ]);
  const byPath = new Map(exchanges.map((x) => [new URL(x.request.url).pathname, x]));
  for (const [pathname, sent] of [
    ['/early', 'early-body'],
    ['/late', 'late-body'],
    ['/own', 'own-body'],
    ['/stream', 'stream-body'],
    ['/replaced', 'replaced-body'],
  ] as const) {
    const exchange = byPath.get(pathname);
    expect(bodyText(recording, exchange?.request.body), pathname).toBe(sent);
    expect(bodyText(recording, exchange?.response?.body), pathname).toBe(
      `${exchange?.request.method} ${pathname} <${sent}>`,
    );
  }
  expect(byPath.get('/redirect')?.response?.status).toBe(302);
  expect(byPath.get('/target')?.response?.status).toBe(200);
  // The compressed event stream is kept as the agent read it: decoded, event by event.
  const sse = byPath.get('/sse-gzip');
  expect(sse?.response?.chunks?.map((c) => c.data).join('')).toBe(SSE.join(''));
  expect(sse?.response?.chunks?.length).toBeGreaterThanOrEqual(2);
});

it('keeps the exchange the agent finished in the very turn it crashed', async () => {
  const { result, exchanges } = await record('throws', { TOOL_URL: server.url, THROW_AFTER: '1' });
  expect(result.exitCode).not.toBe(0);
  expect(exchanges.at(-1)?.request.url).toBe(`${server.url}/last`);
  expect(exchanges.at(-1)?.response?.status).toBe(200);
});
