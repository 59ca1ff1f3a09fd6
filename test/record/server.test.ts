// Recording in a server: the node:http handler wrapper, Express and Fastify through the
// middleware, Hono and a Next-style route handler through the fetch-handler wrapper — real
// servers on 127.0.0.1, concurrent requests, the recording id in a response header, runs named
// from the request, and sampling by rate and by rule (errors, slow runs, tags). A recording is
// finished a moment after its answer is sent: the tests wait for that (onRecorded, or the
// handler's own promise), never for a fixed time, so a loaded machine only makes them slower.
import { readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { streamText } from 'hono/streaming';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  currentRecording,
  RECORDING_HEADER,
  type RecordedRun,
  recordFetchHandler,
  recordHandler,
  recordMiddleware,
} from '../../src/record/index.js';
import {
  type HttpExchangePayload,
  type RunCompletedPayload,
  type RunResponse,
  readRecording,
} from '../../src/recording/index.js';
import { startServer, type TestServer, tempDir } from './helpers.js';

let api: TestServer;
const tmp = tempDir();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** GET /gate?who=X answers once opened(X) is called (the test says when). */
const gates = new Map<string, { wait: Promise<void>; open: () => void }>();
function gate(who: string) {
  let entry = gates.get(who);
  if (entry === undefined) {
    let open!: () => void;
    entry = { wait: new Promise<void>((r) => (open = r)), open: () => open() };
    gates.set(who, entry);
  }
  return entry;
}

beforeAll(async () => {
  api = await startServer(async (req, _body, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/gate') await gate(url.searchParams.get('who') ?? '').wait;
    await sleep(Number(url.searchParams.get('delay') ?? 0));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ who: url.searchParams.get('who') }));
  });
});
afterAll(async () => {
  await api.close();
  tmp.remove();
});

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
/** Counts onRecorded calls; `reach(n)` resolves once n runs have been recorded. */
function recordedRuns() {
  let count = 0;
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  return {
    onRecorded: () => {
      count++;
      for (const w of waiting.filter((x) => count >= x.n)) w.resolve();
    },
    reach: (n: number) => new Promise<void>((resolve) => (count >= n ? resolve() : waiting.push({ n, resolve }))),
  };
}

const close = (server: { close(cb: () => void): unknown; closeAllConnections?: () => void }) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
  });

/** The who= values of the API calls a recording holds. */
async function callsOf(dir: string): Promise<string[]> {
  const recording = await readRecording(dir);
  return recording.events
    .filter((e) => e.type === 'http.exchange')
    .map((e) => new URL((e.payload as HttpExchangePayload).request.url).searchParams.get('who') ?? '');
}

describe('server adapters', () => {
  it('node:http: one recording per request, named from it, with its id in the response header', async () => {
    const folder = `${tmp.dir}/node`;
    const settled: Array<Promise<void>> = [];
    const handler = recordHandler(
      async (req, res) => {
        const who = new URL(req.url ?? '/', 'http://x').searchParams.get('who');
        await fetch(`${api.url}/a?who=${who}&delay=${Number(who) % 7}`);
        await fetch(`${api.url}/b?who=${who}`);
        res.end(`done ${who}`);
      },
      { folder, name: (req, info) => `${info.method} ${info.path} ${req.headers['x-user']}` },
    );
    // The wrapper's promise settles once the run's recording is finished.
    const server = http.createServer((req, res) => void settled.push(handler(req, res)));
    const url = await listen(server);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, n) => fetch(`${url}/chat?who=${n}`, { headers: { 'x-user': `u${n}` } })),
    );
    await Promise.all(settled);
    for (const [n, answer] of answers.entries()) {
      expect(await answer.text()).toBe(`done ${n}`);
      const id = answer.headers.get(RECORDING_HEADER);
      expect(id).toMatch(/^get-chat-u\d+-/);
      const recording = await readRecording(`${folder}/${id}`);
      expect(recording.manifest.name).toBe(`GET /chat u${n}`);
      expect(await callsOf(`${folder}/${id}`)).toEqual([String(n), String(n)]);
    }
    await close(server);
  });

  it('sampling rules: keeps failed, slow and tagged runs, and drops the rest', async () => {
    const folder = `${tmp.dir}/rules`;
    const ids = new Map<string, string>();
    const settled: Array<Promise<void>> = [];
    const SLOW_MS = 400;
    const handler = recordHandler(
      async (req, res) => {
        const kind = new URL(req.url ?? '/', 'http://x').pathname.slice(1);
        await fetch(`${api.url}/x?who=${kind}&delay=${kind === 'slow' ? SLOW_MS + 200 : 0}`);
        if (kind === 'vip') currentRecording()?.tag('vip');
        res.statusCode = kind === 'error' ? 503 : 200;
        res.end(kind);
      },
      {
        folder,
        sample: { rate: 0, errors: true, slowMs: SLOW_MS, tags: ['vip'] },
        onRecorded: (run) => ids.set(run.name, run.id),
      },
    );
    const server = http.createServer((req, res) => void settled.push(handler(req, res)));
    const url = await listen(server);
    // What the client measured bounds the run's duration from above (the run starts after the
    // request is sent and ends before the answer is read): on a loaded machine a plain run may
    // itself take SLOW_MS, and then the rule rightly keeps it (the flake this test once had).
    const took = new Map<string, number>();
    await Promise.all(
      ['ok', 'error', 'slow', 'vip', 'ok2'].map(async (kind) => {
        const started = performance.now();
        await fetch(`${url}/${kind}`).then((r) => r.text());
        took.set(kind, performance.now() - started);
      }),
    );
    await Promise.all(settled);
    // A plain run that the client saw answered in under SLOW_MS was not slow, and is dropped.
    const fastPlain = ['ok', 'ok2'].filter((kind) => (took.get(kind) ?? 0) < SLOW_MS).map((k) => `GET /${k}`);
    const kept = [...ids.keys()].sort();
    expect(kept.filter((name) => !fastPlain.includes(name))).toEqual(kept);
    expect(kept.filter((name) => !name.startsWith('GET /ok'))).toEqual(['GET /error', 'GET /slow', 'GET /vip']);
    expect((await readRecording(`${folder}/${ids.get('GET /vip')}`)).manifest.tags).toEqual(['vip']);
    expect(readdirSync(folder).sort()).toEqual([...ids.values()].sort());
    const failed = await readRecording(`${folder}/${ids.get('GET /error')}`);
    expect(failed.events.at(-1)).toMatchObject({ type: 'run.completed', payload: { status: 'failed' } });
    await close(server);
  });

  it('a client that leaves mid-session: the run holds the whole session, also when it left before the run opened', async () => {
    // The session goes on without its client (node:http, Express and Fastify go on running the
    // handler): its recording has every call, and is a failed run. The client leaves once the
    // session's first call is in flight (held at the gate until the server has seen it leave), or,
    // for the *-early servers, before the recorded part of the chain starts at all (as when it
    // leaves while the first run installs the capture layer).
    const folder = `${tmp.dir}/left`;
    const runs = recordedRuns();
    const ids = new Map<string, string>();
    const announced = new Map<string, RecordedRun>();
    const options = {
      folder,
      name: (req: http.IncomingMessage) => String(req.url?.split('/').pop()),
      onRecorded: (run: RecordedRun) => {
        ids.set(run.name, run.id);
        announced.set(run.name, run);
        runs.onRecorded();
      },
    };
    const whoOf = (req: http.IncomingMessage) => String(req.url?.split('/').pop());
    const left = new Map<string, () => void>();
    const arrived = new Map<string, () => void>();
    const arrive = (req: http.IncomingMessage) => arrived.get(whoOf(req))?.();
    const session = async (who: string, res: http.ServerResponse) => {
      res.once('close', () => left.get(who)?.());
      await fetch(`${api.url}/gate?who=${who}-1`);
      await fetch(`${api.url}/x?who=${who}-2`);
    };
    const handler = recordHandler(async (req, res) => {
      await session(whoOf(req), res);
      res.end('late');
    }, options);
    const node = http.createServer((req, res) => void handler(req, res));
    // The status goes out with the first part of a streamed answer, before the client leaves.
    const streaming = recordHandler(async (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      await session(whoOf(req), res);
      res.end('data: late\n\n');
    }, options);
    const nodeStreaming = http.createServer((req, res) => void streaming(req, res));
    const nodeEarly = http.createServer((req, res) => {
      res.once('close', () => void handler(req, res));
      arrive(req);
    });
    const expressApp = (early: boolean) => {
      const app = express();
      if (early)
        app.use((req, res, next) => {
          res.once('close', () => next());
          arrive(req);
        });
      app.use(recordMiddleware(options));
      app.get('/ask/:who', async (req, res) => {
        await session(req.params.who, res);
        res.json({ late: true });
      });
      return http.createServer(app);
    };
    const fastify = Fastify();
    const mw = recordMiddleware(options);
    fastify.addHook('onRequest', (request, reply, done) => mw(request.raw, reply.raw, done));
    fastify.get('/ask/:who', async (request, reply) => {
      await session((request.params as { who: string }).who, reply.raw);
      return { late: true };
    });
    const servers = { node, nodeStreaming, nodeEarly, express: expressApp(false), expressEarly: expressApp(true) };
    const urls: Record<string, string> = {};
    for (const [name, server] of Object.entries(servers)) urls[name] = await listen(server);
    urls.fastify = await fastify.listen({ port: 0, host: '127.0.0.1' });
    await Promise.all(
      Object.entries(urls).map(async ([name, url]) => {
        const client = new AbortController();
        const seen = new Promise<void>((resolve) => left.set(name, resolve));
        const there = new Promise<void>((resolve) => arrived.set(name, resolve));
        const asked = fetch(`${url}/ask/${name}`, { signal: client.signal }).catch(() => undefined);
        if (name.endsWith('Early')) {
          await there;
          client.abort();
        } else {
          // Once the session's first call is in flight, the client leaves; the call answers after.
          while (!gates.has(`${name}-1`)) await sleep(10);
          client.abort();
          await seen;
        }
        gate(`${name}-1`).open();
        await asked;
      }),
    );
    await runs.reach(6);
    for (const name of Object.keys(urls)) {
      const dir = `${folder}/${ids.get(name)}`;
      expect(await callsOf(dir), name).toEqual([`${name}-1`, `${name}-2`]);
      const recording = await readRecording(dir);
      // The client was sent no status (but the stream's, whose headers went out first), and left.
      const response: RunResponse = name === 'nodeStreaming' ? { status: 200, clientLeft: true } : { clientLeft: true };
      expect(recording.events.at(-1), name).toMatchObject({ type: 'run.completed', payload: { status: 'failed' } });
      expect((recording.events.at(-1)?.payload as RunCompletedPayload | undefined)?.response, name).toEqual(response);
      const { status, clientLeft } = announced.get(name) ?? {};
      expect({ status, clientLeft }, name).toEqual({ status: response.status, clientLeft: true });
    }
    for (const server of Object.values(servers)) await close(server);
    await fastify.close();
  });

  it('work left going after the answer (waitUntil) is part of the run: Express and a fetch-style handler', async () => {
    const folder = `${tmp.dir}/after`;
    const runs = recordedRuns();
    // Saving the conversation once the client has its answer, in two calls, the second given by the first.
    const saveLater = (who: string) =>
      currentRecording()?.waitUntil(
        (async () => {
          await fetch(`${api.url}/save?who=${who}-save&delay=100`);
          currentRecording()?.waitUntil(fetch(`${api.url}/index?who=${who}-index&delay=100`));
        })(),
      );
    const app = express();
    app.use(recordMiddleware({ folder, onRecorded: runs.onRecorded }));
    app.get('/ask/:who', async (req, res) => {
      await fetch(`${api.url}/x?who=${req.params.who}`);
      res.json({ who: req.params.who });
      saveLater(req.params.who);
    });
    const web = recordFetchHandler(
      async (request: Request) => {
        const who = new URL(request.url).pathname.split('/').pop() ?? '';
        await fetch(`${api.url}/x?who=${who}`);
        saveLater(who);
        return Response.json({ who });
      },
      { folder, onRecorded: runs.onRecorded },
    );
    const expressServer = http.createServer(app);
    const webServer = serve({ fetch: web, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => webServer.once('listening', r));
    const urls = [await listen(expressServer), `http://127.0.0.1:${(webServer.address() as AddressInfo).port}`];
    const answers = await Promise.all(
      urls.flatMap((url, s) => ['a', 'b'].map((n) => fetch(`${url}/ask/${s === 0 ? 'e' : 'w'}${n}`))),
    );
    await runs.reach(4);
    for (const answer of answers) {
      const { who } = (await answer.json()) as { who: string };
      const id = answer.headers.get(RECORDING_HEADER);
      expect(await callsOf(`${folder}/${id}`)).toEqual([who, `${who}-save`, `${who}-index`]);
    }
    await close(expressServer);
    await close(webServer as unknown as http.Server);
  });

  it('fetch-style handler: a streamed body that breaks part way, or that the client leaves, is a failed run', async () => {
    // The answer's status (200) went out with its headers; what went wrong comes after, in the body.
    const folder = `${tmp.dir}/streams`;
    const runs = recordedRuns();
    const ids = new Map<string, string>();
    const announced = new Map<string, RecordedRun>();
    // The early client leaves once its session is under way (after a fixed time, on a loaded
    // machine, it could leave before the server had its request: no session, nothing recorded).
    let earlyStarted = () => {};
    const earlyUnderWay = new Promise<void>((resolve) => (earlyStarted = resolve));
    const web = recordFetchHandler(
      async (request: Request) => {
        const kind = new URL(request.url).pathname.slice(1);
        // The client leaves before the answer is ready: the session goes on, its answer never sent.
        if (kind === 'early') {
          earlyStarted();
          await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }));
          await fetch(`${api.url}/part?who=early-0`);
          return new Response('never sent');
        }
        if (kind === 'threw') {
          await fetch(`${api.url}/part?who=threw-0`);
          throw new Error('the agent failed');
        }
        let sent = 0;
        return new Response(
          new ReadableStream<Uint8Array>({
            async pull(controller) {
              if (kind === 'whole' && sent === 2) return controller.close();
              if (kind === 'broken' && sent === 1) throw new Error('the model stream broke');
              const part = await fetch(`${api.url}/part?who=${kind}-${sent++}`).then((r) => r.text());
              controller.enqueue(new TextEncoder().encode(part));
            },
          }),
        );
      },
      {
        folder,
        onRecorded: (run) => {
          ids.set(run.name, run.id);
          announced.set(run.name, run);
          runs.onRecorded();
        },
      },
    );
    const server = serve({ fetch: web, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await Promise.all(
      ['whole', 'broken', 'left', 'early', 'threw'].map(async (kind) => {
        const client = new AbortController();
        if (kind === 'early') void earlyUnderWay.then(() => client.abort());
        const answer = await fetch(`${url}/${kind}`, { signal: client.signal }).catch(() => undefined);
        if (answer === undefined) return;
        const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
        if (kind === 'left') {
          await reader.read();
          client.abort();
        }
        for (;;) if ((await reader.read().catch(() => ({ done: true }))).done) break;
      }),
    );
    await runs.reach(5);
    const statusOf = async (kind: string) =>
      (await readRecording(`${folder}/${ids.get(`GET /${kind}`)}`)).events.at(-1)?.payload as
        | RunCompletedPayload
        | undefined;
    // What run.completed and onRecorded say of each answer: the status only when one was sent.
    const table: Record<string, { status: string; response: RunResponse }> = {
      whole: { status: 'complete', response: { status: 200, clientLeft: false } },
      broken: { status: 'failed', response: { status: 200, clientLeft: false } },
      left: { status: 'failed', response: { status: 200, clientLeft: true } },
      early: { status: 'failed', response: { clientLeft: true } },
      threw: { status: 'failed', response: { clientLeft: false } },
    };
    for (const [kind, expected] of Object.entries(table)) {
      expect(await statusOf(kind), kind).toMatchObject(expected);
      expect((await statusOf(kind))?.response, kind).toEqual(expected.response);
      const { status, clientLeft } = announced.get(`GET /${kind}`) ?? {};
      expect({ status, clientLeft }, kind).toEqual({
        status: expected.response.status,
        clientLeft: expected.response.clientLeft,
      });
    }
    await close(server as unknown as http.Server);
  });

  it('a handler that throws: its run is kept by the errors rule and announced (node:http, fetch-style)', async () => {
    const folder = `${tmp.dir}/threw`;
    const runs = recordedRuns();
    const announced: Array<{ name: string; id: string }> = [];
    const options = {
      folder,
      sample: { rate: 0, errors: true },
      onRecorded: (run: { name: string; id: string }) => {
        announced.push(run);
        runs.onRecorded();
      },
    };
    const handler = recordHandler(async (req) => {
      await fetch(`${api.url}/x?who=node${req.url}`);
      throw new Error('the agent failed');
    }, options);
    // The server's own answer to a handler that threw, as any node:http server needs one.
    const node = http.createServer((req, res) => {
      handler(req, res).catch(() => {
        res.statusCode = 500;
        res.end();
      });
    });
    const web = recordFetchHandler(async (request: Request) => {
      await fetch(`${api.url}/x?who=web${new URL(request.url).pathname}`);
      throw new Error('the agent failed');
    }, options);
    const webServer = serve({ fetch: web, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => webServer.once('listening', r));
    const urls = [await listen(node), `http://127.0.0.1:${(webServer.address() as AddressInfo).port}`];
    const answers = await Promise.all(urls.map((url) => fetch(`${url}/ask`)));
    expect(answers.map((a) => a.status)).toEqual([500, 500]);
    await runs.reach(2);
    expect(announced.map((run) => run.name)).toEqual(['GET /ask', 'GET /ask']);
    expect(readdirSync(folder).sort()).toEqual(announced.map((run) => run.id).sort());
    const calls = await Promise.all(announced.map((run) => callsOf(`${folder}/${run.id}`)));
    expect(calls.flat().sort()).toEqual(['node/ask', 'web/ask']);
    await close(node);
    await close(webServer as unknown as http.Server);
  });

  it('Express and Fastify: the rest of the chain runs inside the run', async () => {
    const folder = `${tmp.dir}/frameworks`;
    const runs = recordedRuns();
    const app = express();
    app.use(recordMiddleware({ folder, onRecorded: runs.onRecorded }));
    app.get('/ask/:who', async (req, res) => {
      await fetch(`${api.url}/e?who=${req.params.who}&delay=5`);
      res.json({ who: req.params.who });
    });
    const expressServer = http.createServer(app);
    const fastify = Fastify();
    const mw = recordMiddleware({ folder, onRecorded: runs.onRecorded });
    fastify.addHook('onRequest', (request, reply, done) => mw(request.raw, reply.raw, done));
    fastify.get('/ask/:who', async (request) => {
      const { who } = request.params as { who: string };
      await fetch(`${api.url}/f?who=${who}`);
      return { who };
    });
    const expressUrl = await listen(expressServer);
    const fastifyUrl = await fastify.listen({ port: 0, host: '127.0.0.1' });
    const answers = await Promise.all([
      ...['e1', 'e2', 'e3'].map((who) => fetch(`${expressUrl}/ask/${who}`)),
      ...['f1', 'f2', 'f3'].map((who) => fetch(`${fastifyUrl}/ask/${who}`)),
    ]);
    await runs.reach(6);
    for (const answer of answers) {
      const { who } = (await answer.json()) as { who: string };
      const id = answer.headers.get(RECORDING_HEADER);
      expect(id).toMatch(/^get-ask-[ef]\d-/);
      expect(await callsOf(`${folder}/${id}`)).toEqual([who]);
    }
    await close(expressServer);
    await fastify.close();
  });

  it('fetch-style handlers (Hono, Next route handlers): a streamed body is part of the run', async () => {
    const folder = `${tmp.dir}/web`;
    const runs = recordedRuns();
    const app = new Hono();
    app.get('/stream/:who', (c) =>
      streamText(c, async (stream) => {
        const who = c.req.param('who');
        for (const part of ['a', 'b']) {
          const answer = (await fetch(`${api.url}/s?who=${who}-${part}&delay=5`).then((r) => r.json())) as {
            who: string;
          };
          await stream.write(`${answer.who};`);
        }
      }),
    );
    // A Next-style route handler whose body is produced as it is read.
    const route = async (request: Request) => {
      const who = new URL(request.url).searchParams.get('who');
      let sent = 0;
      return new Response(
        new ReadableStream<Uint8Array>({
          async pull(controller) {
            if (sent === 2) return controller.close();
            const answer = await fetch(`${api.url}/n?who=${who}-${sent++}`).then((r) => r.text());
            controller.enqueue(new TextEncoder().encode(answer));
          },
        }),
        { status: who === 'bad' ? 500 : 200 },
      );
    };
    const web = recordFetchHandler(
      (request: Request) => (new URL(request.url).pathname === '/next' ? route(request) : app.fetch(request)),
      { folder, onRecorded: runs.onRecorded },
    );
    const server = serve({ fetch: web, port: 0, hostname: '127.0.0.1' });
    await new Promise((r) => server.once('listening', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const answers = await Promise.all([
      fetch(`${url}/stream/h1`),
      fetch(`${url}/stream/h2`),
      fetch(`${url}/next?who=n1`),
      fetch(`${url}/next?who=bad`),
    ]);
    const texts = await Promise.all(answers.map((a) => a.text()));
    expect(texts[0]).toBe('h1-a;h1-b;');
    await runs.reach(4);
    const expected = [
      ['h1-a', 'h1-b'],
      ['h2-a', 'h2-b'],
      ['n1-0', 'n1-1'],
      ['bad-0', 'bad-1'],
    ];
    for (const [i, answer] of answers.entries()) {
      const id = answer.headers.get(RECORDING_HEADER);
      expect(id).toBeTruthy();
      expect(await callsOf(`${folder}/${id}`)).toEqual(expected[i]);
    }
    const bad = await readRecording(`${folder}/${answers[3]?.headers.get(RECORDING_HEADER)}`);
    expect(bad.events.at(-1)).toMatchObject({ type: 'run.completed', payload: { status: 'failed' } });
    await close(server as unknown as http.Server);
  });
});
