// The npm undici package (request, stream, fetch, Agent, Pool — dispatchers that are not global
// fetch's): recorded with and without world capture, and replayed exactly with the API stopped,
// in the OS sandbox and with the in-process preload alone.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'undici-agent.mjs');

describe('npm undici', () => {
  const tmp = tempDir('tapedeck-undici-');
  let api: TestServer;
  let hits = 0;

  beforeAll(async () => {
    api = await startServer((req, body, res) => {
      hits++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ url: req.url, method: req.method, body: body || null }));
    });
  });
  afterAll(async () => {
    await api?.close();
    tmp.remove();
  });

  for (const world of [false, true]) {
    it(`records every dispatch as a step${world ? ' with world capture (--fs)' : ''} and replays exactly with 0 hits on the running API`, async () => {
      const workspace = path.join(tmp.dir, `ws-${world}`);
      mkdirSync(workspace, { recursive: true });
      const out = path.join(tmp.dir, `rec-${world}`);
      const recorded = await recordCommand({
        command: [process.execPath, AGENT],
        env: { API_URL: api.url, ...(world ? { WORKSPACE: workspace } : {}) },
        out,
        stdio: 'pipe',
        ...(world ? { fsRoot: workspace } : {}),
      });
      expect(recorded.exitCode).toBe(0);
      const rec = await readRecording(out);
      const urls = rec.events
        .filter((e) => e.type === 'http.exchange')
        .map((e) => (e.payload as { request: { method: string; url: string } }).request)
        .map((r) => `${r.method} ${new URL(r.url).pathname}`);
      expect(urls.sort()).toEqual(['GET /orders/1', 'GET /orders/2', 'GET /orders/3', 'GET /orders/4', 'POST /orders']);
      if (world) {
        expect(Object.keys(rec.post.fs?.files ?? {})).toContain('order.json');
      }
      const before = hits;
      for (const isolation of ['bwrap', 'none'] as const) {
        const result = await replay({
          recording: out,
          mode: 'exact',
          out: path.join(tmp.dir, `replay-${world}-${isolation}`),
          stdio: 'pipe',
          isolation,
          // The real API is up: the replay must not reach it.
          env: { API_URL: api.url },
        });
        expect(result.divergences, `${isolation}: ${result.output?.stderr}`).toEqual([]);
        expect(result.exitCode).toBe(0);
        const seen = JSON.parse(result.output?.stdout.trim().split('\n').pop() ?? '{}');
        expect(seen.agent).toMatchObject({ method: 'POST', body: '{"sku":"A-1"}' });
        expect(seen.stream).toMatchObject({ url: '/orders/4' });
        if (world) expect(result.worldMatches).toBe(true);
      }
      expect(hits).toBe(before);
    });
  }
});
