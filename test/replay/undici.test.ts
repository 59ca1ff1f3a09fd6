// The npm undici package (request, stream, fetch, Agent, Pool — dispatchers that are not global
// fetch's): recorded without world capture, with --fs and with --db, and replayed exactly in the
// OS sandbox and with the in-process preload alone — with the real API running (0 hits) and
// offline (the API stopped).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, type TestServer, tempDir } from '../record/helpers.js';
import { startDbSentinel } from '../sandbox/helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'undici-agent.mjs');
const PG_URL = process.env.TAPEDECK_PG_URL;
const WORLDS = ['none', 'fs', ...(PG_URL ? (['db'] as const) : [])] as const;
const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);

describe('npm undici', () => {
  const tmp = tempDir('tapedeck-undici-');
  let api: TestServer;
  let hits = 0;
  let db: Awaited<ReturnType<typeof startDbSentinel>> | undefined;
  const recorded = new Map<string, string>();

  beforeAll(async () => {
    api = await startServer((req, body, res) => {
      hits++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ url: req.url, method: req.method, body: body || null }));
    });
    if (PG_URL) db = await startDbSentinel(PG_URL);
  });
  afterAll(async () => {
    await api?.close().catch(() => undefined);
    await db?.drop();
    tmp.remove();
  });

  const replayOk = async (out: string, world: string, label: string) => {
    for (const isolation of LEVELS) {
      const result = await replay({
        recording: out,
        mode: 'exact',
        out: path.join(tmp.dir, `replay-${world}-${isolation}-${label}`),
        stdio: 'pipe',
        isolation,
        env: { API_URL: api.url },
        timeoutMs: 120_000,
      });
      expect(result.divergences, `${isolation}: ${result.output?.stderr}`).toEqual([]);
      expect(result.exitCode).toBe(0);
      const seen = JSON.parse(result.output?.stdout.trim().split('\n').pop() ?? '{}');
      expect(seen.agent).toMatchObject({ method: 'POST', body: '{"sku":"A-1"}' });
      expect(seen.stream).toMatchObject({ url: '/orders/4' });
      if (world !== 'none') expect(result.worldMatches).toBe(true);
    }
  };

  for (const world of WORLDS) {
    it(`records every dispatch as a step (world capture: ${world}) and replays exactly with 0 hits on the running API`, {
      timeout: 300_000,
    }, async () => {
      const workspace = path.join(tmp.dir, `ws-${world}`);
      mkdirSync(workspace, { recursive: true });
      const out = path.join(tmp.dir, `rec-${world}`);
      const result = await recordCommand({
        command: [process.execPath, AGENT],
        env: { API_URL: api.url, ...(world === 'fs' ? { WORKSPACE: workspace } : {}) },
        out,
        stdio: 'pipe',
        ...(world === 'fs' ? { fsRoot: workspace } : {}),
        ...(world === 'db' && db ? { dbUrl: db.url } : {}),
      });
      expect(result.exitCode).toBe(0);
      const rec = await readRecording(out);
      const urls = rec.events
        .filter((e) => e.type === 'http.exchange')
        .map((e) => (e.payload as { request: { method: string; url: string } }).request)
        .map((r) => `${r.method} ${new URL(r.url).pathname}`);
      expect(urls.sort()).toEqual(['GET /orders/1', 'GET /orders/2', 'GET /orders/3', 'GET /orders/4', 'POST /orders']);
      if (world === 'fs') expect(Object.keys(rec.post.fs?.files ?? {})).toContain('order.json');
      if (world === 'db') expect(rec.pre.db?.tables.map((t) => t.name)).toContain('refunds');
      recorded.set(world, out);
      const before = hits;
      // The real API is up: the replay must not reach it.
      await replayOk(out, world, 'running');
      expect(hits).toBe(before);
    });
  }

  it('replays every recording exactly offline (the API stopped)', { timeout: 400_000 }, async () => {
    expect([...recorded.keys()]).toEqual([...WORLDS]);
    await api.close();
    for (const [world, out] of recorded) await replayOk(out, world, 'offline');
  });
});
