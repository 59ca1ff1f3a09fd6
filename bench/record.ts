// Recorder overhead, in two parts, same workload (bench/record-workload.mjs), same run:
//   1. in the loop: wall time of 1,000 sequential HTTP calls (node:http and fetch, 1 KiB JSON
//      answers, keep-alive server on 127.0.0.1 in its own process) unrecorded, recorded by
//      tapedeck, under nock 14's recorder and under Polly.js 6 (node-http adapter, record mode);
//      each as a ratio to the unrecorded time. Target: tapedeck <= 1.10x, below nock and Polly.
//   2. the whole process: 200 calls answered after 50 ms each, `node agent` unrecorded against
//      `tapedeck record -- node agent` (the built CLI), nock's recorder and msw (responses read
//      through its lifecycle events), wall time of the whole process, min and median of
//      interleaved rounds. Target: tapedeck <= 1.03x unrecorded, below nock and msw.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordCommand } from '../src/record/index.js';
import { BIN, buildDist, measure, stat, verdict } from './lib/process.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const WORKLOAD = path.join(here, 'record-workload.mjs');
const CALLS = Number(process.env.BENCH_RECORD_CALLS ?? 1000);
const ROUNDS = Number(process.env.BENCH_RECORD_ROUNDS ?? 5);

const SLOW_CALLS = Number(process.env.BENCH_RECORD_SLOW_CALLS ?? 200);
const SLOW_MS = 50;
const SLOW_ROUNDS = Number(process.env.BENCH_RECORD_SLOW_ROUNDS ?? 3);
/** BENCH_RECORD_CLIENTS=fetch (or http) runs one client. */
const CLIENTS = (process.env.BENCH_RECORD_CLIENTS ?? 'http,fetch').split(',') as Array<'http' | 'fetch'>;

const SERVER = `
const http = require('node:http');
const delay = Number(process.argv[1] ?? 0);
const answer = JSON.stringify({ ok: true, data: 'y'.repeat(1000) });
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const send = () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }); res.end(answer); };
    if (delay > 0) setTimeout(send, delay); else send();
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

function startServer(delayMs = 0): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', SERVER, String(delayMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
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

/** Part 2: whole processes, 200 calls at 50 ms. */
async function slowCalls(): Promise<void> {
  buildDist();
  const server = await startServer(SLOW_MS);
  const outRoot = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-bench-record-slow-'));
  try {
    for (const client of CLIENTS) {
      const agent = (harness: string) => [WORKLOAD, client, String(SLOW_CALLS), server.url, harness];
      const variants: Record<string, (round: number) => string[]> = {
        unrecorded: () => agent('none'),
        tapedeck: (round) => [
          BIN,
          'record',
          '--out',
          path.join(outRoot, `${client}-${round}`),
          '--',
          process.execPath,
          ...agent('none'),
        ],
        nock: () => agent('nock'),
        msw: () => agent('msw'),
      };
      const wall = new Map<string, number[]>();
      for (let round = 0; round < SLOW_ROUNDS; round++) {
        for (const [name, args] of Object.entries(variants)) {
          const m = measure(process.execPath, args(round), { cwd: outRoot });
          wall.set(name, [...(wall.get(name) ?? []), m.wallMs]);
        }
      }
      const base = stat(wall.get('unrecorded')!);
      const label = client === 'http' ? 'node:http' : 'fetch';
      process.stdout.write(
        `${label}: ${SLOW_CALLS} calls answered after ${SLOW_MS} ms, whole process (built CLI), wall min | median of ${SLOW_ROUNDS} interleaved rounds; load average ${os.loadavg()[0]?.toFixed(1)}\n` +
          `  unrecorded  ${base.min.toFixed(0)} | ${base.median.toFixed(0)} ms\n`,
      );
      const td = stat(wall.get('tapedeck')!);
      for (const name of ['tapedeck', 'nock', 'msw']) {
        const s = stat(wall.get(name)!);
        const judged =
          name === 'tapedeck'
            ? verdict(s, base, 1.03)
            : `${(s.min / base.min).toFixed(2)}x min, ${(s.median / base.median).toFixed(2)}x median`;
        process.stdout.write(`  ${name.padEnd(11)} ${s.min.toFixed(0)} | ${s.median.toFixed(0)} ms = ${judged}\n`);
      }
      const below = ['nock', 'msw'].every((name) => {
        const s = stat(wall.get(name)!);
        return td.min < s.min && td.median < s.median;
      });
      process.stdout.write(`  tapedeck below nock and msw (min and median): ${below ? 'PASS' : 'MISS'}\n`);
    }
  } finally {
    server.child.kill();
    rmSync(outRoot, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  if (process.env.BENCH_RECORD_PART !== 'slow') await loopCalls();
  if (process.env.BENCH_RECORD_PART !== 'loop') await slowCalls();
}

/** Part 1: 1,000 fast calls, the loop's time. */
async function loopCalls(): Promise<void> {
  const server = await startServer();
  const outRoot = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-bench-record-'));
  try {
    for (const client of CLIENTS) {
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
