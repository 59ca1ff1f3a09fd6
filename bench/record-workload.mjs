// The workload the recording and replay benches run in a child process: N sequential POSTs with
// 1 KiB JSON answers to a keep-alive server, through one client (fetch, http = node:http, undici,
// axios or got), optionally under nock's recorder, msw (every response read through its lifecycle
// events, as an msw-based recorder does) or Polly.js (record mode), or answered in-process with
// no server (floor: what the client itself costs; undici and fetch by a do-nothing dispatcher,
// node:http, axios and got by the replay's ClientRequest stand-in alone). After 20 warm-up calls, prints
// {"ms": <loop wall time by its own clock>, "cpuMs": <this process's CPU time in the loop>} on
// stdout, the loop between `@mark start` and `@mark end` lines.
//   node record-workload.mjs <client> <n> <url> [none|nock|msw|polly|floor]
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const [client, n, url, harness] = [
  process.argv[2],
  Number(process.argv[3]),
  process.argv[4],
  process.argv[5] ?? 'none',
];
let stop = async () => {};
if (harness === 'nock') {
  const { default: nock } = await import('nock');
  nock.recorder.rec({ dont_print: true, output_objects: true });
  stop = async () => nock.recorder.clear();
} else if (harness === 'msw') {
  const { setupServer } = await import('msw/node');
  const server = setupServer();
  const seen = [];
  server.events.on('response:bypass', async ({ request, response }) => {
    seen.push({ url: request.url, status: response.status, body: await response.clone().text() });
  });
  server.listen({ onUnhandledRequest: 'bypass' });
  stop = async () => server.close();
} else if (harness === 'floor' && !['undici', 'fetch'].includes(client)) {
  // No server, no tapedeck: node:http (and the clients built on it) answered at once by the
  // replay's own ClientRequest stand-in (sandbox/preload/replay-http.mjs) from a fixed answer,
  // with nothing else of the replay's (no index, no IPC, no notes): what the client and the
  // stand-in cost a call, the floor of a replayed node:http call.
  const https = await import('node:https');
  const { installFastHttp } = await import('../sandbox/preload/replay-http.mjs');
  const text = JSON.stringify({ ok: true, data: 'y'.repeat(1000) });
  const reply = {
    status: 200,
    headers: { 'content-type': 'application/json', 'content-length': String(text.length) },
    body: { text },
  };
  const entry = { method: 'POST', pq: '', reply };
  let answered = 0;
  installFastHttp([http, https.default], {
    peek: () => entry,
    answer: () => {
      answered++;
      return reply;
    },
  });
  // Every call is the expected one: the entry is given the path each call asks for.
  const standIn = http.request;
  http.request = function request(...args) {
    const [first] = args;
    const u = typeof first === 'string' || first instanceof URL ? new URL(first) : undefined;
    entry.pq = u ? `${u.pathname}${u.search}` : String(first?.path ?? '/');
    return standIn.apply(this, args);
  };
  // A call the stand-in did not take went to the server: then this is no floor.
  stop = async () => {
    if (answered !== n + 20) throw new Error(`floor: the stand-in answered ${answered} of ${n + 20} calls`);
  };
} else if (harness === 'floor') {
  // No server, no tapedeck: every request is answered at once, in this process, by a dispatcher
  // that does nothing else (undici and fetch): what the client itself costs a call.
  const { Dispatcher, setGlobalDispatcher } = await import('undici');
  const answer = Buffer.from(JSON.stringify({ ok: true, data: 'y'.repeat(1000) }));
  const head = ['content-type', 'application/json', 'content-length', String(answer.length)].map((h) => Buffer.from(h));
  class Floor extends Dispatcher {
    dispatch(_opts, handler) {
      queueMicrotask(() => {
        handler.onConnect?.(() => {});
        handler.onHeaders?.(200, head, () => {}, 'OK');
        handler.onData?.(answer);
        handler.onComplete?.([]);
      });
      return true;
    }
  }
  setGlobalDispatcher(new Floor());
} else if (harness === 'polly') {
  const { Polly } = await import('@pollyjs/core');
  const { default: NodeHttpAdapter } = await import('@pollyjs/adapter-node-http');
  const { default: FSPersister } = await import('@pollyjs/persister-fs');
  Polly.register(NodeHttpAdapter);
  Polly.register(FSPersister);
  const polly = new Polly(`bench-${process.pid}`, {
    adapters: ['node-http'],
    persister: 'fs',
    persisterOptions: { fs: { recordingsDir: path.join(os.tmpdir(), 'tapedeck-bench-polly') } },
    mode: 'record',
    logLevel: 'silent',
    matchRequestsBy: { order: false },
  });
  stop = () => polly.stop();
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const body = JSON.stringify({ q: 'x'.repeat(64) });
const headers = { 'content-type': 'application/json' };
function viaHttp(i) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/call?i=${i}`, { method: 'POST', agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).length));
    });
    req.on('error', reject);
    req.end(body);
  });
}
async function viaFetch(i) {
  const res = await fetch(`${url}/call?i=${i}`, { method: 'POST', body, headers });
  return (await res.text()).length;
}
const clients = {
  http: async () => viaHttp,
  fetch: async () => viaFetch,
  undici: async () => {
    const { request } = await import('undici');
    return async (i) => {
      const res = await request(`${url}/call?i=${i}`, { method: 'POST', body, headers });
      return (await res.body.text()).length;
    };
  },
  axios: async () => {
    const { default: axios } = await import('axios');
    return async (i) => {
      const res = await axios.post(`${url}/call?i=${i}`, body, { headers, httpAgent: agent, responseType: 'text' });
      return res.data.length;
    };
  },
  got: async () => {
    const { default: got } = await import('got');
    return async (i) => (await got.post(`${url}/call?i=${i}`, { body, headers, agent: { http: agent } }).text()).length;
  },
};
if (!clients[client]) throw new Error(`unknown client ${client} (have: ${Object.keys(clients).join(', ')})`);
const call = await clients[client]();
for (let i = 0; i < 20; i++) await call(-1 - i); // warm-up
// `@mark` lines let the bench time the loop from outside (bench/lib/stamp.mjs): replayed, this
// process's clocks are the recorded run's, and so would `ms` be.
process.stdout.write('@mark start\n');
const start = performance.now();
const cpu0 = process.cpuUsage();
for (let i = 0; i < n; i++) await call(i);
const ms = performance.now() - start;
const cpu = process.cpuUsage(cpu0);
process.stdout.write('@mark end\n');
const cpuMs = (cpu.user + cpu.system) / 1000;
await stop();
agent.destroy();
process.stdout.write(`${JSON.stringify({ ms, cpuMs })}\n`);
