// Requests in flight together replay as a set (25 concurrent POSTs, no divergence, in any order
// of arrival); repeated response headers keep their values apart (three Set-Cookie stay three),
// through fetch and node:http, with the API stopped at replay.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replayExact, startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'concurrent-agent.mjs');

describe('concurrent requests and repeated headers', () => {
  const tmp = tempDir('tapedeck-concurrency-');
  let api: TestServer;
  let hits = 0;

  beforeAll(async () => {
    api = await startServer(async (req, body, res) => {
      hits++;
      if (req.url === '/login') {
        res.setHeader('set-cookie', [
          'session=abc; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Path=/',
          'theme=dark',
          'lang=en',
        ]);
        res.end('{}');
        return;
      }
      // Answers come back in another order than asked.
      const { item } = JSON.parse(body) as { item: number };
      await new Promise((r) => setTimeout(r, (25 - item) * 3));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ item, id: `it-${item}` }));
    });
  });
  afterAll(async () => {
    await api?.close();
    tmp.remove();
  });

  it('records 25 concurrent POSTs and three Set-Cookie, and replays them exactly with the API stopped', async () => {
    const out = path.join(tmp.dir, 'rec');
    const recorded = await recordCommand({
      command: [process.execPath, AGENT],
      env: { API_URL: api.url },
      out,
      stdio: 'pipe',
    });
    expect(recorded.exitCode).toBe(0);
    const rec = await readRecording(out);
    const login = rec.events.find(
      (e) => e.type === 'http.exchange' && (e.payload as { request: { url: string } }).request.url.endsWith('/login'),
    );
    expect(
      String(
        (login!.payload as { response: { headers: Record<string, string> } }).response.headers['set-cookie'],
      ).split('\n'),
    ).toHaveLength(3);
    await api.close();
    const before = hits;
    for (const isolation of ['bwrap', 'none'] as const) {
      const result = await replayExact(out, path.join(tmp.dir, `replay-${isolation}`), isolation);
      expect(result.divergences, isolation).toEqual([]);
      expect(result.exitCode).toBe(0);
      const seen = JSON.parse(result.output?.stdout.trim().split('\n').pop() ?? '{}');
      expect(seen.items).toEqual(Array.from({ length: 25 }, (_, i) => i));
      expect(seen.cookies).toBe(3);
      expect(seen.httpCookies).toBe(3);
    }
    expect(hits).toBe(before);
  });
});
