// bench/world: what `--fs` world capture costs a whole recording. An agent makes CALLS sequential
// fetch calls to a local server and writes one file of a 1,000-file workspace after each; the
// same run is recorded with `tapedeck record --fs <workspace>` and without, in interleaved rounds
// (the built CLI, whole process: wall and CPU of it and its children). Target: with --fs <= 1.3x
// without (min and median).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, buildDist, measure, stat, verdict } from './lib/process.js';

const FILES = 1000;
const CALLS = Number(process.env.BENCH_WORLD_CALLS ?? 500);
const ROUNDS = Number(process.env.BENCH_WORLD_ROUNDS ?? 5);

const SERVER = `
const http = require('node:http');
const answer = JSON.stringify({ ok: true, data: 'y'.repeat(1000) });
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }); res.end(answer); });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

const AGENT = `
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
const [url, ws, calls] = [process.argv[2], process.argv[3], Number(process.argv[4])];
for (let i = 0; i < calls; i++) {
  const res = await fetch(url + '/call?i=' + i, { method: 'POST', body: JSON.stringify({ i }), headers: { 'content-type': 'application/json' } });
  await res.text();
  // Content of this run's own (its pid): the runs share the workspace, and a write of what the
  // previous run left would be no change to record.
  writeFileSync(join(ws, 'd' + (i % 10), 'f' + (i % ${FILES / 10}) + '.txt'), 'written at call ' + i + ' by ' + process.pid + '\\n');
}
`;

function startServer(): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout?.once('data', (d: Buffer) => resolve({ url: `http://127.0.0.1:${d.toString().trim()}`, child }));
    child.once('error', reject);
  });
}

export async function run(): Promise<void> {
  buildDist();
  const work = mkdtempSync(join(tmpdir(), 'tapedeck-bench-world-'));
  const server = await startServer();
  try {
    const ws = join(work, 'ws');
    for (let d = 0; d < 10; d++) {
      mkdirSync(join(ws, `d${d}`), { recursive: true });
      for (let f = 0; f < FILES / 10; f++) writeFileSync(join(ws, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`.repeat(8));
    }
    const agent = join(work, 'agent.mjs');
    writeFileSync(agent, AGENT);
    const variants: Record<string, (round: number) => string[]> = {
      'record without --fs': (r) => ['record', '--out', join(work, `plain-${r}`), '--', process.execPath, agent],
      'record --fs (1,000 files)': (r) => [
        'record',
        '--fs',
        ws,
        '--out',
        join(work, `fs-${r}`),
        '--',
        process.execPath,
        agent,
      ],
    };
    const wall = new Map<string, number[]>();
    const cpu = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, args] of Object.entries(variants)) {
        const m = measure(process.execPath, [BIN, ...args(round), server.url, ws, String(CALLS)], { cwd: work });
        wall.set(name, [...(wall.get(name) ?? []), m.wallMs]);
        cpu.set(name, [...(cpu.get(name) ?? []), m.cpuMs]);
      }
    }
    const names = Object.keys(variants);
    process.stdout.write(
      `${CALLS} fetch calls, a file written after each, ${ROUNDS} interleaved rounds, whole process (built CLI); load average ${loadavg()[0]?.toFixed(1)}:\n`,
    );
    for (const name of names) {
      const w = stat(wall.get(name)!);
      const c = stat(cpu.get(name)!);
      process.stdout.write(
        `  ${name.padEnd(27)} wall ${w.min.toFixed(0)} | ${w.median.toFixed(0)} ms, CPU ${c.min.toFixed(0)} | ${c.median.toFixed(0)} ms (min | median)\n`,
      );
    }
    const [plain, fs] = names as [string, string];
    process.stdout.write(
      `  --fs / without, wall: ${verdict(stat(wall.get(fs)!), stat(wall.get(plain)!), 1.3)}\n` +
        `  --fs / without, CPU:  ${verdict(stat(cpu.get(fs)!), stat(cpu.get(plain)!), 1.3)}\n`,
    );
  } finally {
    server.child.kill();
    rmSync(work, { recursive: true, force: true });
  }
}
