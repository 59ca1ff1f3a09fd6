// Worker threads, recorded and replayed: Node runs `--import` preloads in the main thread only,
// so both preloads load themselves into every worker first (sandbox/preload/shared-process.mjs
// loadInWorkers). A worker's calls are recorded as the agent's (ids of their own) and answered
// from the recording; its values are recorded apart (named after the thread) and handed back.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordAgent, replayExact, startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = fileURLToPath(new URL('fixtures/worker-calls-agent.mjs', import.meta.url));
const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);

describe('worker threads in a recording and its replay', () => {
  const tmp = tempDir('tapedeck-worker-calls-');
  let api: TestServer;
  let hits: string[] = [];
  beforeAll(async () => {
    api = await startServer((req, _body, res) => {
      hits.push(req.url ?? '');
      res.end(`answer to ${req.url} #${hits.length}`);
    });
  });
  afterAll(async () => {
    await api?.close().catch(() => undefined);
    tmp.remove();
  });

  it("records the workers' calls and values, and replays them from the recording", { timeout: 180_000 }, async () => {
    const out = path.join(tmp.dir, 'rec');
    const recorded = await recordAgent(AGENT, out, { API_URL: api.url });
    expect(recorded.exitCode).toBe(0);
    const seen = JSON.parse(recorded.stdout.trim()) as Record<string, unknown[]>;
    expect(seen.file?.[0]).toBe('file worker');
    expect(hits.sort()).toEqual(['/a', '/b', '/w1', '/w2']);
    const events = readFileSync(path.join(out, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; payload: { request?: { url: string }; process?: string } });
    const urls = events
      .filter((e) => e.type === 'http.exchange')
      .map((e) => new URL(e.payload.request?.url ?? '').pathname);
    expect(urls).toEqual(['/a', '/w1', '/w2', '/b']);
    const names = new Set(events.filter((e) => e.type === 'nondeterminism').map((e) => e.payload.process ?? 'agent'));
    expect([...names].sort()).toEqual(['agent', 'w1', 'w2']);
    hits = [];
    for (const isolation of LEVELS) {
      const result = await replayExact(out, path.join(tmp.dir, `replay-${isolation}`), isolation, { API_URL: api.url });
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(result.served.recording).toBe(4);
      expect(JSON.parse(result.output?.stdout.trim() ?? '{}'), isolation).toEqual(seen);
    }
    expect(hits).toEqual([]);
  });
});
