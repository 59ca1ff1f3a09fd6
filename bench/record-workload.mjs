// The bench/record.ts workload, run in a child process: N sequential POSTs with 1 KiB JSON
// answers to a keep-alive server, through node:http or fetch, optionally under nock's recorder or
// Polly.js (record mode). Prints {"ms": <loop wall time>} on stdout.
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
function viaHttp(i) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/call?i=${i}`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).length));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
async function viaFetch(i) {
  const res = await fetch(`${url}/call?i=${i}`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json' },
  });
  return (await res.text()).length;
}
const call = client === 'fetch' ? viaFetch : viaHttp;
for (let i = 0; i < 20; i++) await call(i); // warm-up
const start = performance.now();
for (let i = 0; i < n; i++) await call(i);
const ms = performance.now() - start;
await stop();
agent.destroy();
process.stdout.write(`${JSON.stringify({ ms })}\n`);
