// Values drawn by branches that run at once: while a slow call (fetch, node:http, a tool()) was in
// flight when recorded, another branch read the clock, random and uuids on timers. An exact replay
// answers at once, but holds each answer until the process has drawn as many values as it had when
// the answer came (src/replay/drawn.ts, replay-nondeterminism.mjs `hold`): each branch then takes
// the values it took when recorded, and the next request carries the same ones.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAgent, replayExact, startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = fileURLToPath(new URL('fixtures/nd-order-agent.mjs', import.meta.url));
const CLIENTS_AGENT = fileURLToPath(new URL('fixtures/nd-order-clients-agent.mjs', import.meta.url));
/** The replay's warning for answers that waited out the bound (src/replay/finish.ts, orderWarnings). */
const atBound = (warnings: readonly string[] | undefined) => (warnings ?? []).filter((w) => w.includes('at the bound'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Replays `dir` exactly five times (into `tmp`): no divergence, the recorded output, no answer at the bound. */
async function replayCleanFiveTimes(dir: string, stdout: string, tmp: string): Promise<void> {
  for (let n = 0; n < 5; n++) {
    const result = await replayExact(dir, path.join(tmp, `replay-${n}`), 'none');
    expect(result.divergences, result.output?.stderr).toEqual([]);
    expect(result.output?.stdout.trim()).toBe(stdout);
    expect(atBound(result.warnings)).toEqual([]);
  }
}

describe('values drawn by concurrent branches in an exact replay', () => {
  const tmp = tempDir('tapedeck-nd-order-');
  let api: TestServer;
  const recordings: Record<string, { dir: string; stdout: string }> = {};

  beforeAll(async () => {
    api = await startServer(async (req, _body, res) => {
      if (req.url?.startsWith('/slow')) await sleep(40);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
    for (const wait of ['0', '1']) {
      const dir = path.join(tmp.dir, `rec-wait-${wait}`);
      const recorded = await recordAgent(AGENT, dir, { API_URL: api.url, ND_WAIT: wait });
      expect(recorded.exitCode).toBe(0);
      recordings[wait] = { dir, stdout: recorded.stdout.trim() };
    }
    // The replays never reach it: every answer comes from the recording.
    await api.close();
  }, 120_000);
  afterAll(() => tmp.remove());

  it('takes the recorded values in the recorded order, replay after replay', { timeout: 180_000 }, async () => {
    const { dir, stdout } = recordings['0'] ?? { dir: '', stdout: '' };
    // While each slow call was in flight the timer branch drew its values: they are written before the call's step.
    const seen = JSON.parse(stdout) as Record<string, { ticks: unknown[] }>;
    for (const via of ['fetch', 'http', 'tool']) expect(seen[via]?.ticks).toHaveLength(12);
    const events = readFileSync(path.join(dir, 'events.jsonl'), 'utf8');
    expect(events).toContain('/slow?via=fetch');
    await replayCleanFiveTimes(dir, stdout, tmp.dir);
  });

  it('does not hold an answer a branch waits on before it draws', { timeout: 120_000 }, async () => {
    const { dir, stdout } = recordings['1'] ?? { dir: '', stdout: '' };
    const result = await replayExact(dir, path.join(tmp.dir, 'replay-wait'), 'none', { ND_WAIT: '1' });
    expect(result.divergences, result.output?.stderr).toEqual([]);
    expect(result.output?.stdout.trim()).toBe(stdout);
  });

  it('hands an answer over after a short bound when the values recorded before it never come', {
    timeout: 120_000,
  }, async () => {
    // Recorded with the timer branch drawing during each call; replayed with it waiting on the
    // answer first: the values cannot come before the answer, which goes at the bound (no deadlock),
    // and the branches then take each other's values, which the replay reports.
    const { dir } = recordings['0'] ?? { dir: '' };
    const started = Date.now();
    const result = await replayExact(dir, path.join(tmp.dir, 'replay-changed'), 'none', { ND_WAIT: '1' });
    expect(result.exitCode).not.toBeNull();
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(result.divergences.map((d) => d.kind)).toContain('unmatched-request');
    expect(atBound(result.warnings)).toHaveLength(1);
  });
});

describe('values drawn by concurrent branches around node:http clients that read the clock at the head', () => {
  const tmp = tempDir('tapedeck-nd-order-clients-');
  let dir = '';
  let stdout = '';

  beforeAll(async () => {
    const api = await startServer(async (req, _body, res) => {
      if (req.url?.startsWith('/slow')) await sleep(40);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true }));
    });
    dir = path.join(tmp.dir, 'rec');
    const recorded = await recordAgent(CLIENTS_AGENT, dir, { API_URL: api.url });
    expect(recorded.exitCode).toBe(0);
    stdout = recorded.stdout.trim();
    await api.close();
  }, 120_000);
  afterAll(() => tmp.remove());

  it('holds each answer for the values drawn before its head came, not before its body ended', {
    timeout: 180_000,
  }, async () => {
    // The `head` client reads the clock once the head has come, as got does: counted when the head
    // came, the answer does not wait for that read (counted when the body ended, it waited out the
    // bound, its process then held no more answers, and the next call's branches swapped values).
    const seen = JSON.parse(stdout) as Record<string, { ticks: unknown[] }>;
    for (const via of ['head0', 'head2', 'axios0', 'axios2']) expect(seen[via]?.ticks).toHaveLength(12);
    const events = readFileSync(path.join(dir, 'events.jsonl'), 'utf8');
    expect(events).toContain('"drawn":{');
    await replayCleanFiveTimes(dir, stdout, tmp.dir);
  });
});
