// A request in absolute form (`GET http://host/x` sent to a forward proxy) is what a client
// configured with HTTP_PROXY sends — axios does, and `record --isolate` gives every agent an
// HTTP_PROXY (the recording proxy). Each capture layer records it as a call of the URL asked for,
// and the agent reads what it reads unrecorded: without world capture (the recorder used to crash
// on the URL), with --fs (the interceptor failed the call with "Invalid URL") and under --isolate
// (the same, so the tool's call never happened). The exact replay answers it from the recording.
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordCommand } from '../../src/record/index.js';
import { bodyText, type HttpExchangePayload, readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { FIXTURES, startServer, type TestServer, tempDir } from './helpers.js';

const AGENT = path.join(FIXTURES, 'proxied-agent.mjs');
const tmp = tempDir();
let tool: TestServer;
let toolHits = 0;
let proxy: http.Server;
let proxied = 0;
let env: Record<string, string>;

beforeAll(async () => {
  tool = await startServer((req, body, res) => {
    toolHits++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ method: req.method, url: req.url, body }));
  });
  // A real forward proxy: it reads the absolute-form request line and makes the call.
  proxy = http.createServer((req, res) => {
    proxied++;
    const target = new URL(req.url ?? '');
    const up = http.request(
      {
        hostname: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(up);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  env = { TOOL_URL: tool.url, HTTP_PROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, NO_PROXY: '' };
});
afterAll(async () => {
  await tool.close();
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
  tmp.remove();
});

function runPlain(): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [AGENT], { env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', () => resolve(out));
  });
}

const bwrap = detectIsolation().level === 'bwrap';

describe('a request in absolute form (a client configured with HTTP_PROXY)', () => {
  it.each([
    ['without world capture', {}],
    ['with --fs', { fsRoot: 'world' }],
    ...(bwrap ? [['under --isolate', { isolate: true }] as const] : []),
  ] as Array<[string, { fsRoot?: string; isolate?: boolean }]>)(
    'is recorded as a call of the URL asked for, and replayed from it (%s)',
    { timeout: 120_000 },
    async (name, how) => {
      const plain = await runPlain();
      expect(plain).toContain('axios-get:200');
      const out = path.join(tmp.dir, name.replace(/\W+/g, '-'));
      const fsRoot =
        how.fsRoot === undefined ? undefined : path.join(tmp.dir, `${name.replace(/\W+/g, '-')}-${how.fsRoot}`);
      if (fsRoot !== undefined) (await import('node:fs')).mkdirSync(fsRoot, { recursive: true });
      let stdout = '';
      const result = await recordCommand({
        command: [process.execPath, AGENT],
        env,
        out,
        ...(fsRoot === undefined ? {} : { fsRoot }),
        ...(how.isolate ? { isolate: true } : {}),
        stdio: 'pipe',
        onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
      });
      expect(result.exitCode).toBe(0);
      // What the tool API answered does not depend on the layer: the agent read the same.
      expect(stdout).toBe(plain);
      const recording = await readRecording(out);
      const exchanges = recording.events
        .filter((e) => e.type === 'http.exchange')
        .map((e) => e.payload as HttpExchangePayload);
      expect(exchanges.map((x) => `${x.request.method} ${x.request.url}`)).toEqual([
        `GET ${tool.url}/price?sku=W-1`,
        `POST ${tool.url}/orders`,
        `GET ${tool.url}/raw?x=1`,
      ]);
      expect(JSON.parse(bodyText(recording, exchanges[1]?.request.body) ?? '{}')).toEqual({ sku: 'W-1', qty: 2 });
      expect(recording.events.filter((e) => e.type === 'step.started')).toHaveLength(3);

      const hits = toolHits;
      const replayed = await replay({
        recording: out,
        mode: 'exact',
        env,
        out: `${out}-replay`,
        stdio: 'pipe',
        timeoutMs: 90_000,
      });
      expect(replayed.divergences).toEqual([]);
      expect(replayed.served.recording).toBe(3);
      expect(replayed.output?.stdout).toBe(plain);
      expect(toolHits).toBe(hits);
    },
  );

  it('went through the agent’s forward proxy when recorded without --isolate', () => {
    expect(proxied).toBeGreaterThan(0);
  });
});
