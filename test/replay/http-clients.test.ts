// node:http (also as named ESM imports) and the clients built on it (axios, got) replayed exactly: the preload answers the
// recorded calls itself (sandbox/preload/replay-http.mjs) in the OS sandbox and with the
// in-process preload alone, and the agent sees what it saw when recorded (status, body, repeated
// headers) with 0 hits on the running API; a call whose body differs goes the interceptor's way
// and is a divergence, and the random values the agent draws after each call are still the
// recorded ones (the interceptor's own request ids are not the agent's).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordCommand } from '../../src/record/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'http-clients-agent.mjs');
const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);

describe('node:http, axios and got replayed from the preload', () => {
  const tmp = tempDir('tapedeck-http-clients-');
  let api: TestServer;
  let apiUrl = '';
  let hits = 0;

  beforeAll(async () => {
    api = await startServer((req, body, res) => {
      hits++;
      if (req.url === '/missing') {
        res.statusCode = 404;
        res.end('no such thing');
        return;
      }
      if (req.url === '/login') res.setHeader('set-cookie', ['a=1; Path=/', 'b=2; Path=/']);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ url: req.url, method: req.method, body: body || null }));
    });
    apiUrl = api.url;
  });
  afterAll(async () => {
    await api?.close().catch(() => undefined);
    tmp.remove();
  });

  for (const client of ['http', 'named', 'axios', 'got']) {
    it(`${client}: replays what the agent saw with the API stopped, and reports a changed body`, {
      timeout: 300_000,
    }, async () => {
      const out = path.join(tmp.dir, `rec-${client}`);
      let stdout = '';
      const recorded = await recordCommand({
        command: [process.execPath, AGENT],
        env: { API_URL: apiUrl, CLIENT: client },
        out,
        stdio: 'pipe',
        onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
      });
      expect(recorded.exitCode).toBe(0);
      const seen = stdout.trim().split('\n').pop() ?? '';
      expect(JSON.parse(seen)).toMatchObject([
        { status: 200, text: expect.stringContaining('"body":"{\\"sku\\":\\"A-1\\"}"') },
        { status: 200, text: expect.stringContaining('/orders?page=2') },
        { status: 404, text: 'no such thing' },
        { status: 200, cookies: ['a=1; Path=/', 'b=2; Path=/'] },
        { status: 200, text: expect.stringContaining('/audit') },
      ]);
      hits = 0;
      for (const isolation of LEVELS) {
        const result = await replay({
          recording: out,
          mode: 'exact',
          out: path.join(tmp.dir, `replay-${client}-${isolation}`),
          stdio: 'pipe',
          isolation,
          env: { API_URL: apiUrl, CLIENT: client },
          timeoutMs: 120_000,
        });
        expect(result.divergences, `${isolation}: ${result.output?.stderr}`).toEqual([]);
        expect(result.exitCode).toBe(0);
        // Every answer went as soon as its process had drawn what it had when recorded.
        expect(result.warnings ?? []).not.toContainEqual(expect.stringContaining('at the bound'));
        expect(result.served.recording).toBe(5);
        // The first cookie's value is a secret to the recorder: the agent gets its placeholder.
        const replayed = result.output?.stdout.trim().split('\n').pop() ?? '';
        expect(replayed.replace(/a=\[REDACTED:hmac:[0-9a-f]+\]/, 'a=1')).toBe(seen);
      }
      expect(hits).toBe(0);
      const changed = await replay({
        recording: out,
        mode: 'exact',
        out: path.join(tmp.dir, `replay-${client}-changed`),
        stdio: 'pipe',
        isolation: 'none',
        env: { API_URL: apiUrl, CLIENT: client, BODY_SUFFIX: '-changed' },
        // The changed POST gets a 503 instead of a connection error, so the agent goes on.
        onMiss: 'error-response',
        timeoutMs: 120_000,
      });
      expect(changed.divergences.length).toBeGreaterThan(0);
      expect(JSON.stringify(changed.divergences[0])).toContain('A-1-changed');
      const draws = (line: string) => (JSON.parse(line) as Array<{ draw: number }>).map((s) => s.draw);
      expect(draws(changed.output?.stdout.trim().split('\n').pop() ?? '[]')).toEqual(draws(seen));
    });

    it(`${client}: recorded with --fs (the interceptor path), the values drawn after each call replay as recorded`, {
      timeout: 300_000,
    }, async () => {
      const out = path.join(tmp.dir, `rec-fs-${client}`);
      const workspace = path.join(tmp.dir, `ws-${client}`);
      mkdirSync(workspace, { recursive: true });
      let stdout = '';
      const recorded = await recordCommand({
        command: [process.execPath, AGENT],
        env: { API_URL: apiUrl, CLIENT: client },
        out,
        fsRoot: workspace,
        stdio: 'pipe',
        onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
      });
      expect(recorded.exitCode).toBe(0);
      const seen = stdout.trim().split('\n').pop() ?? '';
      const result = await replay({
        recording: out,
        mode: 'exact',
        out: path.join(tmp.dir, `replay-fs-${client}`),
        stdio: 'pipe',
        isolation: 'none',
        env: { API_URL: apiUrl, CLIENT: client },
        timeoutMs: 120_000,
      });
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(result.warnings ?? []).not.toContainEqual(expect.stringContaining('at the bound'));
      const replayed = result.output?.stdout.trim().split('\n').pop() ?? '';
      // The interceptors' sockets connect once the request is parsed (after a GET's 'finish', before
      // a POST's): the replay's socket connects before either, so got reads the clock as often but
      // its phases take the recorded times in another order. Everything else is as recorded.
      const withoutTimings = (line: string) =>
        (JSON.parse(line.replace(/a=\[REDACTED:hmac:[0-9a-f]+\]/, 'a=1')) as Array<Record<string, unknown>>).map(
          ({ timings: _t, ...rest }) => rest,
        );
      expect(withoutTimings(replayed)).toEqual(withoutTimings(seen));
    });
  }
});
