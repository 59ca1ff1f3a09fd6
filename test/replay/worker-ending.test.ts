// Worker threads ended as soon as they are done: the parent terminates a worker on its reply or
// exits, or the worker exits itself. Neither terminate() nor the parent's exit runs the worker's
// exit handlers or its next turn, so what it recorded before its reply is written before the reply
// leaves (flushBeforePosting in sandbox/preload/shared-process.mjs): every call is in the
// recording, and the replay serves them all without a divergence.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordAgent, replayExact, startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = fileURLToPath(new URL('fixtures/worker-ending-agent.mjs', import.meta.url));
const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);
const calls = (worker: string) => [1, 2, 3].map((n) => `/${worker}-${n}`);

const ENDINGS = [
  { end: 'terminate', how: 'the parent terminates the worker right after its reply', urls: [...calls('w1'), '/main'] },
  { end: 'parent-exit', how: 'the parent exits right after the reply', urls: calls('w1') },
  { end: 'worker-exit', how: 'the worker exits right after its last call', urls: [...calls('w1'), '/main'] },
  {
    end: 'many',
    how: 'four workers at once are each terminated on their reply',
    urls: [...calls('w1'), ...calls('w2'), ...calls('w3'), ...calls('w4'), '/main'],
  },
  {
    end: 'concurrent',
    how: 'four workers make their calls at once, interleaved as the scheduler picks',
    urls: [...calls('w1'), ...calls('w2'), ...calls('w3'), ...calls('w4'), '/main'],
  },
] as const;
/** In what order threads that run at once reach the server is the scheduler's: compared as sets. */
const asRun = (end: string, urls: readonly string[]) => (end === 'concurrent' ? [...urls].sort() : [...urls]);

describe('worker threads ended right after their calls', () => {
  const tmp = tempDir('tapedeck-worker-ending-');
  let api: TestServer;
  let hits: string[] = [];
  beforeAll(async () => {
    api = await startServer(async (req, _body, res) => {
      hits.push(req.url ?? '');
      const answer = `answer to ${req.url} #${hits.length}`;
      // Answers that take a few milliseconds, differently per call: threads' calls overlap.
      const n = Number(
        /(\d)-(\d)$/
          .exec(req.url ?? '')
          ?.slice(1)
          .join('') ?? 0,
      );
      await new Promise((resolve) => setTimeout(resolve, (n * 7) % 13));
      res.end(answer);
    });
  });
  afterAll(async () => {
    await api?.close().catch(() => undefined);
    tmp.remove();
  });

  it.each(ENDINGS)(
    'records every call when $how, and replays them exactly',
    { timeout: 180_000 },
    async ({ end, urls }) => {
      const env = { API_URL: api.url, WORKER_END: end };
      const out = path.join(tmp.dir, end);
      hits = [];
      const recorded = await recordAgent(AGENT, out, env);
      expect(recorded.exitCode).toBe(0);
      expect(asRun(end, hits)).toEqual(asRun(end, urls));
      const events = readFileSync(path.join(out, 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; payload: { request?: { url: string } } });
      const recordedUrls = events
        .filter((e) => e.type === 'http.exchange')
        .map((e) => new URL(e.payload.request?.url ?? '').pathname);
      expect(asRun(end, recordedUrls)).toEqual(asRun(end, urls));
      const seen: unknown = JSON.parse(recorded.stdout.trim());
      hits = [];
      for (const isolation of LEVELS) {
        const result = await replayExact(out, path.join(tmp.dir, `${end}-replay-${isolation}`), isolation, env);
        expect(result.divergences, result.output?.stderr).toEqual([]);
        expect(result.served.recording, isolation).toBe(urls.length);
        expect(JSON.parse(result.output?.stdout.trim() ?? '{}'), isolation).toEqual(seen);
      }
      expect(hits).toEqual([]);
    },
  );
});
