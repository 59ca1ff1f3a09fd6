// Recorder overhead: wall time of 1,000 sequential HTTP calls (node:http and fetch, 1 KiB JSON
// answers, keep-alive server on 127.0.0.1 in its own process) unrecorded, recorded by tapedeck,
// under nock 14's recorder and under Polly.js 6 (node-http adapter, record mode) — same workload,
// same run. Prints each as a ratio to the unrecorded time. Target: tapedeck <= 1.10x, below nock and Polly.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordCommand } from '../src/record/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const WORKLOAD = path.join(here, 'record-workload.mjs');
const CALLS = Number(process.env.BENCH_RECORD_CALLS ?? 1000);
const ROUNDS = Number(process.env.BENCH_RECORD_ROUNDS ?? 5);

const SERVER = `
const http = require('node:http');
const answer = JSON.stringify({ ok: true, data: 'y'.repeat(1000) });
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }); res.end(answer); });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

function startServer(): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout?.once('data', (d: Buffer) => resolve({ url: `http://127.0.0.1:${d.toString().trim()}`, child }));
    child.once('error', reject);
  });
}

function parseMs(stdout: string): number {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return (JSON.parse(line) as { ms: number }).ms;
}

function runPlain(client: string, url: string, harness: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKLOAD, client, String(CALLS), url, harness], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => (code === 0 ? resolve(parseMs(out)) : reject(new Error(`workload exited ${code}`))));
  });
}

async function runRecorded(client: string, url: string, outRoot: string, round: number): Promise<number> {
  let out = '';
  await recordCommand({
    command: [process.execPath, WORKLOAD, client, String(CALLS), url, 'none'],
    out: path.join(outRoot, `${client}-${round}`),
    stdio: 'pipe',
    onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (out += d.toString())),
  });
  return parseMs(out);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const best = (xs: number[]) => Math.min(...xs);

export async function run(): Promise<void> {
  const server = await startServer();
  const outRoot = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-bench-record-'));
  try {
    for (const client of ['http', 'fetch'] as const) {
      const times: Record<string, number[]> = {
        unrecorded: [],
        tapedeck: [],
        nock: [],
        ...(client === 'http' ? { polly: [] } : {}),
      };
      for (let round = 0; round < ROUNDS; round++) {
        // Interleaved, so drift on a shared machine hits every variant alike.
        times.unrecorded!.push(await runPlain(client, server.url, 'none'));
        times.tapedeck!.push(await runRecorded(client, server.url, outRoot, round));
        times.nock!.push(await runPlain(client, server.url, 'nock'));
        if (client === 'http') times.polly!.push(await runPlain(client, server.url, 'polly'));
      }
      // On a shared machine the best of several rounds is the steadiest estimate of intrinsic cost.
      const base = { best: best(times.unrecorded!), median: median(times.unrecorded!) };
      const label = client === 'http' ? 'node:http' : 'fetch';
      process.stdout.write(`${label}: ${CALLS} sequential calls, ${ROUNDS} rounds; ms/call and ratio, best | median\n`);
      for (const [name, xs] of Object.entries(times)) {
        const [b, m] = [best(xs), median(xs)];
        const perCall = `${(b / CALLS).toFixed(3)} | ${(m / CALLS).toFixed(3)} ms`;
        process.stdout.write(
          `  ${name.padEnd(11)} ${perCall}   ${(b / base.best).toFixed(2)}x | ${(m / base.median).toFixed(2)}x\n`,
        );
      }
    }
  } finally {
    server.child.kill();
    rmSync(outRoot, { recursive: true, force: true });
    rmSync(path.join(os.tmpdir(), 'tapedeck-bench-polly'), { recursive: true, force: true });
  }
}
