// Sessions past the recorder's size caps, recorded in a server (recordHandler) and replayed: a
// streamed answer of 70 MiB (past what one event of a recording may hold), one past `maxBodyBytes`,
// a body past it, and a row value of 70 MiB in the observed world. Each recording reads (a line past
// 64 MiB would make the whole file refused), names what was cut in its manifest (`cut`), and its
// replay says so in one line, never a stack trace.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentRecording, type RecordedRun, recordHandler } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { capsSession } from './fixtures/caps-agent.mjs';
import { scratchDatabase, tempDir } from './helpers.js';

const ADMIN = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('./fixtures/caps-agent.mjs', import.meta.url));
const MIB = 1024 * 1024;
const tmp = tempDir();
let api: http.Server;
let apiUrl = '';

beforeAll(async () => {
  // GET /sse?mib=M&chunk=K: M MiB of server-sent events, K KiB each; GET /json?mib=M: one body of M MiB.
  api = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const mib = Number(url.searchParams.get('mib'));
    if (url.pathname === '/json') {
      const body = JSON.stringify({ v: 'j'.repeat(mib * MIB) });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      return res.end(body);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const size = Number(url.searchParams.get('chunk')) * 1024;
    const event = `data: ${'y'.repeat(size - 8)}\n\n`;
    for (let sent = 0; sent < mib * MIB; sent += size)
      if (!res.write(event)) await new Promise((resolve) => res.once('drain', resolve));
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => api.close(resolve));
  tmp.remove();
});

/** Serves one session through recordHandler (its input in the query) and resolves with its kept run. */
async function recordSession(
  input: Record<string, unknown>,
  options: { maxBodyBytes?: number; databaseUrl?: string },
): Promise<RecordedRun> {
  let kept!: (run: RecordedRun) => void;
  const recorded = new Promise<RecordedRun>((resolve) => (kept = resolve));
  const handler = recordHandler(
    async (_req, res) => {
      currentRecording()?.setInput(input);
      res.end(JSON.stringify(await capsSession(input, options.databaseUrl)));
    },
    {
      folder: path.join(tmp.dir, 'recordings'),
      command: [process.execPath, AGENT],
      onRecorded: kept,
      ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
    },
  );
  const server = http.createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    expect(answer.status).toBe(200);
    await answer.text();
    return await recorded;
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** The recording reads, names the cut, and its replay says so in one line without a stack trace. */
async function expectCutSaid(run: RecordedRun, cut: { why: string; what: RegExp; bytes: number }, db?: string) {
  const recording = await readRecording(run.dir);
  expect(recording.manifest.status).toBe('complete');
  expect(recording.manifest.cut).toEqual([
    {
      seq: expect.any(Number),
      type: expect.any(String),
      why: cut.why,
      what: expect.stringMatching(cut.what),
      bytes: cut.bytes,
    },
  ]);
  const said = recording.warnings.filter((w) => /cut to fit/.test(w));
  expect(said).toHaveLength(1);
  expect(said[0]).not.toContain('\n');
  const replayed = await replay({
    recording: run.dir,
    mode: 'exact',
    out: path.join(tmp.dir, `replay-${run.id}`),
    stdio: 'pipe',
    ...(db === undefined ? {} : { db }),
  });
  expect((replayed.warnings ?? []).filter((w) => /cut to fit/.test(w))).toEqual(said);
  expect(replayed.output?.stderr ?? '').not.toMatch(/\n\s+at /);
  return replayed;
}

describe('sessions past the size caps', () => {
  it.each([
    // A streamed answer past what one event may hold: its first chunks are kept.
    {
      name: 'a 70 MiB stream',
      input: { kind: 'stream', mib: 70, chunk: 1024 },
      why: 'stream',
      what: /GET .*\/sse/,
      bytes: 70 * MIB + 14,
    },
    // Past maxBodyBytes: a stream of small events, and a body.
    {
      name: 'a stream past maxBodyBytes',
      input: { kind: 'stream', mib: 4, chunk: 64 },
      maxBodyBytes: MIB,
      why: 'stream',
      what: /GET .*\/sse/,
      bytes: 4 * MIB + 14,
    },
    {
      name: 'a body past maxBodyBytes',
      input: { kind: 'json', mib: 2 },
      maxBodyBytes: MIB,
      why: 'body',
      what: /GET .*\/json/,
      bytes: MIB,
    },
  ])(
    '$name: the recording reads, names the cut, and its replay says so in one line',
    async (c) => {
      const input = { ...c.input, api: apiUrl };
      const run = await recordSession(input, c.maxBodyBytes === undefined ? {} : { maxBodyBytes: c.maxBodyBytes });
      expect(run.status).toBe(200);
      await expectCutSaid(run, c);
    },
    240_000,
  );

  it.runIf(ADMIN)(
    'a row value of 70 MiB (observed world): the recording reads, and its replay ends at the recorded state',
    async () => {
      const db = await scratchDatabase(ADMIN as string, 'caps_', 'CREATE TABLE big (id int PRIMARY KEY, v text)');
      try {
        const run = await recordSession({ kind: 'row', id: 1 }, { databaseUrl: db.url });
        const replayed = await expectCutSaid(
          run,
          { why: 'line', what: /^public\.big$/, bytes: expect.any(Number) as unknown as number },
          ADMIN,
        );
        expect(replayed.worldDiff).toEqual([]);
        expect(JSON.parse(replayed.output?.stdout ?? 'null')).toEqual({ id: 1, n: 70 * MIB });
      } finally {
        await db.drop();
      }
    },
    240_000,
  );
});
