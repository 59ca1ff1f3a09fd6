// The replay preload loads its interceptor (@mswjs/interceptors) at the first call its fast paths
// do not answer, not at the start: an exact replay whose calls are all the recorded ones never
// applies it, and one that needs it (a ClientRequest made directly, a changed body) gets the same
// answers and the same drawn values as with it applied from the start (its loading draws none of
// the agent's values).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { replay } from '../../src/replay/index.js';
import { recordAgent, startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = fileURLToPath(new URL('fixtures/lazy-interceptor-agent.mjs', import.meta.url));
const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);

interface Seen {
  seen: Array<string | number>;
  applied: boolean;
}
const lastLine = (text: string | undefined): Seen => JSON.parse(text?.trim().split('\n').pop() ?? '{}') as Seen;

describe('the replay interceptor, loaded when first needed', () => {
  const tmp = tempDir('tapedeck-lazy-interceptor-');
  let api: TestServer;
  let hits = 0;
  beforeAll(async () => {
    api = await startServer((req, body, res) => {
      hits++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ url: req.url, body: body || null }));
    });
  });
  afterAll(async () => {
    await api?.close().catch(() => undefined);
    tmp.remove();
  });

  async function record(name: string, env: Record<string, string>): Promise<{ out: string; seen: Seen }> {
    const out = path.join(tmp.dir, name);
    const recorded = await recordAgent(AGENT, out, { API_URL: api.url, ...env });
    expect(recorded.exitCode).toBe(0);
    return { out, seen: lastLine(recorded.stdout) };
  }
  const replayOf = (out: string, name: string, isolation: 'bwrap' | 'none', env: Record<string, string>) =>
    replay({
      recording: out,
      mode: 'exact',
      out: path.join(tmp.dir, name),
      stdio: 'pipe',
      isolation,
      env: { API_URL: api.url, ...env },
      onMiss: 'error-response',
      timeoutMs: 60_000,
    });

  const exact: Array<{ name: string; env: Record<string, string>; served: number; applied: boolean }> = [
    { name: 'is never applied when every call is the recorded one', env: {}, served: 3, applied: false },
    {
      name: 'answers a ClientRequest made directly through it, loaded then, with the values drawn as recorded',
      env: { DIRECT: '1' },
      served: 4,
      applied: true,
    },
  ];
  for (const [n, c] of exact.entries()) {
    it(c.name, { timeout: 120_000 }, async () => {
      const { out, seen } = await record(`exact-${n}`, c.env);
      expect(seen.seen).toHaveLength(2 * c.served);
      hits = 0;
      for (const isolation of LEVELS) {
        const result = await replayOf(out, `exact-${n}-${isolation}`, isolation, c.env);
        expect(result.divergences, result.output?.stderr).toEqual([]);
        expect(result.served.recording).toBe(c.served);
        expect(lastLine(result.output?.stdout)).toEqual({ seen: seen.seen, applied: c.applied });
      }
      expect(hits).toBe(0);
    });
  }

  it('takes a changed body at the call where it changed, and the values drawn after it are the recorded ones', {
    timeout: 120_000,
  }, async () => {
    const { out, seen } = await record('changed', {});
    hits = 0;
    const result = await replayOf(out, 'changed-replay', 'none', { BODY_SUFFIX: '-changed' });
    expect(JSON.stringify(result.divergences[0])).toContain('1-changed');
    const replayed = lastLine(result.output?.stdout);
    expect(replayed.applied).toBe(true);
    // The changed call got the on-miss answer; every draw, and every other answer, is the recorded one.
    expect(replayed.seen.filter((_, i) => i !== 2)).toEqual(seen.seen.filter((_, i) => i !== 2));
    expect(String(replayed.seen[2])).toMatch(/^503 /);
    expect(hits).toBe(0);
  });
});
