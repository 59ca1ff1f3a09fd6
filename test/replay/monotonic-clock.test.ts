// The monotonic clock (performance.now(), performance.timeOrigin, and process.hrtime and
// process.uptime on its scale) the agent reads is recorded and handed back: durations it reports and the span times an OpenTelemetry exporter posts are the
// recorded ones in a replay, so those requests match. Node's own reads (fetch's timing info,
// performance.eventLoopUtilization(), console.time()) are left out, recorded and replayed alike: a
// replay answers fetch without them, and the other two, which a replay reads as the recorded run
// did, took the agent's recorded values before it. Values drawn past the recorded ones are said.
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
    const { elapsed, origin, t0, hrNs, hr, up, enumerable } = JSON.parse(recorded.stdout.trim()) as {
      elapsed: number;
      origin: number;
      t0: number;
      hrNs: string;
      hr: [number, number];
      up: number;
      enumerable: string[];
    };
    expect(enumerable).toEqual([]);
    // t0, the read after the calls (elapsed = it - t0), timeOrigin, then hrtime.bigint, hrtime,
    // uptime before a call and after it, on performance.now()'s scale: five fetches read it more.
    const values = valuesOf(out, 'hrtime');
    expect(values).toHaveLength(9);
    const at = (i: number) => values[i] as number;
    expect(at(0)).toBe(t0);
    expect(at(1) - at(0)).toBeCloseTo(elapsed, 6);
    expect(at(2)).toBe(origin);
    expect(at(3)).toBeGreaterThanOrEqual(at(1));
    expect(Number(hrNs) / 1e6).toBeCloseTo(at(6) - at(3), 5);
    expect(hr[0] * 1e3 + hr[1] / 1e6).toBeCloseTo(at(7) - at(4), 5);
    expect(hr[1]).toBeLessThan(1e9);
    expect(up * 1e3).toBeCloseTo(at(8) - at(5), 5);
  });

  it('hands the recorded readings back: durations and OpenTelemetry span times match', {
    timeout: 180_000,
  }, async () => {
    const plain = path.join(tmp.dir, 'replayed-plain');
    const traced = path.join(tmp.dir, 'replayed-otel');
    hits = [];
    const printed = new Map<string, string>();
    for (const [dir, env] of [
      [plain, { API_URL: api.url }],
      [traced, { API_URL: api.url, TRACE: 'otel' }],
    ] as const) {
      const recorded = await recordAgent(AGENT, dir, env);
      expect(recorded.exitCode).toBe(0);
      printed.set(dir, recorded.stdout);
    }
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
        // Every duration the agent measured, through any of the clocks, is the recorded one.
        const measured = (text: string) => {
          const { elapsed, hrNs, hr, up } = JSON.parse(text.trim()) as Record<string, unknown>;
          return { elapsed, hrNs, hr, up };
        };
        expect(measured(result.output?.stdout ?? '')).toEqual(measured(printed.get(dir) ?? ''));
      }
    }
    expect(hits).toEqual([]);
  });

  it('says so when the agent draws past the recorded values', { timeout: 120_000 }, async () => {
    const dir = path.join(tmp.dir, 'extra');
    expect((await recordAgent(AGENT, dir, { API_URL: api.url })).exitCode).toBe(0);
    const same = await replayExact(dir, path.join(tmp.dir, 'extra-same'), 'none', { API_URL: api.url });
    expect(same.divergences).toEqual([]);
    expect((same.warnings ?? []).join('\n')).not.toMatch(/past the recorded ones/);
    const more = await replayExact(dir, path.join(tmp.dir, 'extra-more'), 'none', {
      API_URL: api.url,
      EXTRA_READS: '3',
    });
    expect((more.warnings ?? []).join('\n')).toMatch(
      /the agent drew 3 monotonic clock \(performance\.now, process\.hrtime\) values past the recorded ones/,
    );
  });
});
