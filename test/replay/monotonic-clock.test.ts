// The monotonic clock (performance.now(), performance.timeOrigin) the agent reads is recorded and
// handed back: durations it reports and the span times an OpenTelemetry exporter posts are the
// recorded ones in a replay, so those requests match. Node's own reads (fetch's timing info) are
// left out: a replay answers fetch without them.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordAgent, replayExact, startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = fileURLToPath(new URL('fixtures/monotonic-agent.mjs', import.meta.url));
const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);

const valuesOf = (dir: string, kind: string) =>
  readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; payload: { kind?: string; values?: number[] } })
    .filter((e) => e.type === 'nondeterminism' && e.payload.kind === kind)
    .flatMap((e) => e.payload.values ?? []);

describe('the monotonic clock', () => {
  const tmp = tempDir('tapedeck-monotonic-');
  let api: TestServer;
  let hits: string[] = [];
  beforeAll(async () => {
    api = await startServer((req, _body, res) => {
      hits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  afterAll(async () => {
    await api?.close().catch(() => undefined);
    tmp.remove();
  });

  it("records the agent's reads only, not fetch's own", { timeout: 120_000 }, async () => {
    const out = path.join(tmp.dir, 'plain');
    const recorded = await recordAgent(AGENT, out, { API_URL: api.url });
    expect(recorded.exitCode).toBe(0);
    const { elapsed, origin, t0, enumerable } = JSON.parse(recorded.stdout.trim()) as Record<string, number> & {
      enumerable: string[];
    };
    expect(enumerable).toEqual([]);
    // t0, the read after the calls (elapsed = it - t0), timeOrigin: four fetches read it more.
    const values = valuesOf(out, 'hrtime');
    expect(values).toHaveLength(3);
    expect(values[0]).toBe(t0);
    expect((values[1] as number) - (values[0] as number)).toBeCloseTo(elapsed as number, 6);
    expect(values[2]).toBe(origin);
  });

  it('hands the recorded readings back: durations and OpenTelemetry span times match', {
    timeout: 180_000,
  }, async () => {
    const plain = path.join(tmp.dir, 'replayed-plain');
    const traced = path.join(tmp.dir, 'replayed-otel');
    hits = [];
    expect((await recordAgent(AGENT, plain, { API_URL: api.url })).exitCode).toBe(0);
    expect((await recordAgent(AGENT, traced, { API_URL: api.url, TRACE: 'otel' })).exitCode).toBe(0);
    expect(hits).toContain('/report');
    expect(hits).toContain('/v1/traces');
    hits = [];
    for (const isolation of LEVELS) {
      for (const [dir, env] of [
        [plain, { API_URL: api.url }],
        [traced, { API_URL: api.url, TRACE: 'otel' }],
      ] as const) {
        const result = await replayExact(dir, path.join(tmp.dir, `${path.basename(dir)}-${isolation}`), isolation, env);
        expect(result.divergences, `${path.basename(dir)} ${isolation}: ${result.output?.stderr}`).toEqual([]);
      }
    }
    expect(hits).toEqual([]);
  });
});
