// A server the adapters had not been tried on: a Next.js-style `export async function POST(req)`
// route under recordFetchHandler (its JSON body read inside the run), with
// concurrent sessions, clients that leave midway and sessions that throw. Every recording holds its
// own session's calls and no other's, and says what its client was sent.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordedRun, recordFetchHandler, recordHandler } from '../../src/record/index.js';
import { type HttpExchangePayload, type RunCompletedPayload, readRecording } from '../../src/recording/index.js';
import { startServer, type TestServer, tempDir } from './helpers.js';

let api: TestServer;
const tmp = tempDir();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Calls the API has received, by who=: a client leaves only once its session is under way. */
const arrived = new Map<string, () => void>();
const arrival = (who: string) => new Promise<void>((resolve) => arrived.set(who, resolve));

beforeAll(async () => {
  api = await startServer(async (req, _body, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    arrived.get(url.searchParams.get('who') ?? '')?.();
    await sleep(Number(url.searchParams.get('delay') ?? 0));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ who: url.searchParams.get('who') }));
  });
});
afterAll(async () => {
  await api.close();
  tmp.remove();
});

/** The who= values of the API calls a recording holds, and its run.completed. */
async function recorded(dir: string) {
  const recording = await readRecording(dir);
  return {
    calls: recording.events
      .filter((e) => e.type === 'http.exchange')
      .map((e) => new URL((e.payload as HttpExchangePayload).request.url).searchParams.get('who') ?? ''),
    completed: recording.events.at(-1)?.payload as RunCompletedPayload,
  };
}

/** Collects onRecorded by run name; `reach(n)` resolves once n runs are kept. */
function keptRuns() {
  const runs = new Map<string, RecordedRun>();
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  return {
    runs,
    onRecorded: (run: RecordedRun) => {
      runs.set(run.name, run);
      for (const w of waiting.filter((x) => runs.size >= x.n)) w.resolve();
    },
    reach: (n: number) => new Promise<void>((resolve) => (runs.size >= n ? resolve() : waiting.push({ n, resolve }))),
  };
}

// Session n: 'ok' answers; 'left' is left by its client while its first call is in flight (the
// session goes on); 'threw' throws after its first call.
const kindOf = (n: number) => (['ok', 'left', 'threw'] as const)[n % 3] as 'ok' | 'left' | 'threw';
const SESSIONS = 12;

/**
 * Asks every session at once; a 'left' one's client aborts while its first call (150 ms) is under
 * way: once the API has it, not after a fixed time, which on a loaded machine can come before the
 * server has the request at all (then no session ever starts, and nothing is recorded).
 */
async function askAll(url: (n: number) => string, init: (n: number) => RequestInit = () => ({})) {
  await Promise.all(
    Array.from({ length: SESSIONS }, async (_, n) => {
      const client = new AbortController();
      if (kindOf(n) === 'left') void arrival(`${n}-a`).then(() => client.abort());
      const answer = await fetch(url(n), { ...init(n), signal: client.signal }).catch(() => undefined);
      await answer?.text().catch(() => undefined);
    }),
  );
}

function expectSessions(
  runs: Map<string, RecordedRun>,
  all: Map<string, Awaited<ReturnType<typeof recorded>>>,
  okStatus: number,
  threwStatus: number | undefined,
) {
  for (let n = 0; n < SESSIONS; n++) {
    const kind = kindOf(n);
    const run = runs.get(`s${n}`);
    const { calls, completed } = all.get(`s${n}`) ?? { calls: [], completed: undefined };
    expect(calls, `s${n}`).toEqual(kind === 'threw' ? [`${n}-a`] : [`${n}-a`, `${n}-b`]);
    const response =
      kind === 'left' ? { clientLeft: true } : { status: kind === 'ok' ? okStatus : threwStatus, clientLeft: false };
    if (response.status === undefined) delete response.status;
    expect(completed?.response, `s${n}`).toEqual(response);
    expect(completed?.status, `s${n}`).toBe(kind === 'ok' ? 'complete' : 'failed');
    expect({ status: run?.status, clientLeft: run?.clientLeft }, `s${n}`).toEqual({
      status: response.status,
      clientLeft: response.clientLeft,
    });
  }
}

describe('more servers: concurrent sessions, clients that leave, sessions that throw', () => {
  it('node:http: a handler that throws after its client left says the client left, and no status', async () => {
    const kept = keptRuns();
    let left!: () => void;
    const gone = new Promise<void>((resolve) => (left = resolve));
    const handler = recordHandler(
      async (_req, res) => {
        // Closed already when the client left while the run was opening (the first installs the layer).
        if (res.closed) left();
        else res.once('close', () => left());
        await fetch(`${api.url}/a?who=t-a`);
        await gone;
        throw new Error('the session failed after its client left');
      },
      { folder: `${tmp.dir}/threw-left`, name: () => 's0', onRecorded: kept.onRecorded },
    );
    const server = http.createServer((req, res) => void handler(req, res).catch(() => undefined));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    // The client leaves (its socket closed) while the session's first call is under way.
    const asked = http.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    asked.on('error', () => {});
    void arrival('t-a').then(() => asked.destroy());
    await kept.reach(1);
    const run = kept.runs.get('s0');
    expect({ status: run?.status, clientLeft: run?.clientLeft }).toEqual({ status: undefined, clientLeft: true });
    expect((await recorded(run?.dir ?? '')).completed?.response).toEqual({ clientLeft: true });
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }, 60_000);

  it('a Next.js-style route: export async function POST(req), its body read inside the run', async () => {
    const kept = keptRuns();
    async function POST(request: Request): Promise<Response> {
      const { n } = (await request.json()) as { n: number };
      await fetch(`${api.url}/a?who=${n}-a&delay=150`).then((r) => r.json());
      if (kindOf(n) === 'threw') throw new Error(`session ${n} failed`);
      await fetch(`${api.url}/b?who=${n}-b&delay=${n * 3}`).then((r) => r.json());
      return Response.json({ n });
    }
    const route = recordFetchHandler(POST, {
      folder: `${tmp.dir}/next`,
      name: (request) => `s${new URL(request.url).searchParams.get('n')}`,
      onRecorded: kept.onRecorded,
    });
    const server = serve({ fetch: route, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await askAll(
      (n) => `${url}/api/chat?n=${n}`,
      (n) => ({ method: 'POST', body: JSON.stringify({ n }), headers: { 'content-type': 'application/json' } }),
    );
    await kept.reach(SESSIONS);
    const all = new Map(
      await Promise.all([...kept.runs].map(async ([name, run]) => [name, await recorded(run.dir)] as const)),
    );
    // A route that throws sends nothing of its own (the server answers 500 after the run).
    expectSessions(kept.runs, all, 200, undefined);
    (server as unknown as http.Server).closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }, 120_000);
});
