// record --isolate: an agent whose tools run curl and psql. Recorded in the OS sandbox, every
// call of every process is a step; replayed exactly — with the real API and database running
// (0 hits, 0 rows) and with them stopped. Recorded without --isolate, the same agent's tool calls
// leave no trace, and the recording says so (honest accounting).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordCommand } from '../../src/record/index.js';
import { readRecording, silentToolCallWarnings } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { startFakeModel, startServer, type TestServer } from '../record/helpers.js';
import { realDir, startDbSentinel } from './helpers.js';

const AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'shell-agent.mjs');
const PG_URL = process.env.TAPEDECK_PG_URL;

/** The trace FIFOs the OS sandbox's init makes (sandbox/os/init.mjs) that are in the real /tmp. */
const traceFifos = () => readdirSync('/tmp').filter((name) => name.startsWith('.tapedeck-trace-'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(detectIsolation().level === 'bwrap' && PG_URL)('record --isolate (curl + psql agent)', () => {
  let api: TestServer;
  let model: Awaited<ReturnType<typeof startFakeModel>>;
  let db: Awaited<ReturnType<typeof startDbSentinel>>;
  let dir: { dir: string; remove(): Promise<void> };
  let hits = 0;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = await realDir('isolate-');
    api = await startServer((req, body, res) => {
      hits++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ refunded: JSON.parse(body || '{}').order, by: 'real api' }));
    });
    model = await startFakeModel({ toolTurns: 2 });
    db = await startDbSentinel(PG_URL as string);
    env = { MODEL_URL: model.url, API_URL: api.url, DATABASE_URL: db.url, OPENAI_API_KEY: 'sk-test' };
  });
  afterAll(async () => {
    await api?.close();
    await model?.close();
    await db?.drop().catch(() => undefined);
    await dir?.remove();
  });

  it('without --isolate the tools leave no trace, and recording and verify say so', async () => {
    const out = path.join(dir.dir, 'plain');
    const result = await recordCommand({ command: [process.execPath, AGENT], env, out, stdio: 'pipe' });
    expect(result.exitCode).toBe(0);
    const rec = await readRecording(out);
    const warnings = silentToolCallWarnings(rec.events);
    // Both calls of the one tool, in one line: a tool asked for many times is one warning.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^steps \d+, \d+: the model asked for tool "lookup" 2 times .*--isolate/);
    // What `record` says is kept as it writes: the same as reading the recording back.
    expect(result.silentToolCalls).toEqual(warnings);
  });

  it('records every call as a step and replays exactly with the API and database running, then stopped', async () => {
    const out = path.join(dir.dir, 'isolated');
    const hitsBefore = hits;
    const rowsBefore = await db.rows();
    const fifosBefore = new Set(traceFifos());
    const result = await recordCommand({
      command: [process.execPath, AGENT],
      env,
      out,
      stdio: 'pipe',
      isolate: true,
      dbUrl: db.url,
    });
    expect(result.exitCode).toBe(0);
    // The recording's sandbox shares the real /tmp: the FIFO strace reported through is gone. (Another
    // test's, made meanwhile, goes when its program ends: each new one must be gone within 10 s.)
    for (let i = 0; i < 100 && traceFifos().some((f) => !fifosBefore.has(f)); i++) await sleep(100);
    expect(traceFifos().filter((f) => !fifosBefore.has(f))).toEqual([]);
    // A real run: the API and the database saw it.
    expect(hits - hitsBefore).toBe(2);
    expect((await db.rows()) - rowsBefore).toBe(2);
    const rec = await readRecording(out);
    const calls = rec.events
      .filter((e) => e.type === 'http.exchange')
      .map((e) => (e.payload as { request: { method: string; url: string } }).request)
      .map((r) => `${r.method} ${new URL(r.url).pathname}`);
    expect(calls.filter((c) => c === 'POST /refunds')).toHaveLength(2);
    expect(calls.filter((c) => c === 'POST /v1/chat/completions')).toHaveLength(3);
    expect(silentToolCallWarnings(rec.events)).toEqual([]);
    expect(result.silentToolCalls).toBeUndefined();
    expect(rec.post.db?.tables.find((t) => t.schema === 'public' && t.name === 'refunds')?.rows).toHaveLength(
      rowsBefore + 2,
    );

    // Replayed with everything real still running: nothing reaches it.
    const running = await replay({
      recording: out,
      mode: 'exact',
      out: path.join(dir.dir, 'replay-running'),
      stdio: 'pipe',
    });
    expect(running.divergences, running.output?.stderr).toEqual([]);
    expect(running.worldMatches).toBe(true);
    expect(hits - hitsBefore).toBe(2);
    expect((await db.rows()) - rowsBefore).toBe(2);

    // Replayed with the API, the model server and the database gone.
    await api.close();
    await model.close();
    await db.drop();
    const stopped = await replay({
      recording: out,
      mode: 'exact',
      out: path.join(dir.dir, 'replay-stopped'),
      stdio: 'pipe',
    });
    expect(stopped.divergences, stopped.output?.stderr).toEqual([]);
    expect(stopped.worldMatches).toBe(true);
    expect(stopped.exitCode).toBe(0);
  });
});
