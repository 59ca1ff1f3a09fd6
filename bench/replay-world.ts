// bench/replay-world: what the size of the recorded world costs a replay in the OS sandbox. An
// agent makes CALLS fetch calls and writes one file of its fs root after each; it is recorded with
// `--fs` once in a world of 10 files and once in a world of 1,000, and both recordings are
// replayed (default isolation: the OS sandbox, where the world copy is a folder on disk shared by
// the agent's tree) in interleaved rounds. The agent's own loop time per call (CPU, and wall) is
// what the world's size must not change: a call reads back what changed, not the whole tree.
// Target: 1,000 files over 10 files <= 1.3x (min and median).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { detectIsolation } from '../sandbox/os/detect.js';
import { loopPerCall, startLoopbackServer } from './lib/loopback.js';
import { BIN, buildDist, type Measure, measure, type Stat, stat, verdict } from './lib/process.js';

const CALLS = Number(process.env.BENCH_REPLAY_WORLD_CALLS ?? 200);
const ROUNDS = Number(process.env.BENCH_REPLAY_WORLD_ROUNDS ?? 3);
const WORLDS = [10, 1000];

const AGENT = `
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
const [url, ws, calls, files] = [process.argv[2], process.argv[3], Number(process.argv[4]), Number(process.argv[5])];
process.stdout.write('@mark start\\n');
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < calls; i++) {
  const res = await fetch(url + '/call?i=' + i, { method: 'POST', body: JSON.stringify({ i }), headers: { 'content-type': 'application/json' } });
  await res.text();
  writeFileSync(join(ws, 'd' + (i % 10), 'f' + (i % (files / 10)) + '.txt'), 'written at call ' + i + '\\n');
}
const cpu = process.cpuUsage(cpu0);
process.stdout.write('@mark end\\n');
console.log(JSON.stringify({ ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 }));
`;

const fmt = (s: Stat, digits = 0): string => `${s.min.toFixed(digits)} | ${s.median.toFixed(digits)}`;

export async function run(): Promise<void> {
  if (detectIsolation().level !== 'bwrap') {
    process.stdout.write('skipped: this machine has no OS sandbox (bubblewrap with user namespaces)\n');
    return;
  }
  buildDist();
  const work = mkdtempSync(join(tmpdir(), 'tapedeck-bench-replay-world-'));
  const server = await startLoopbackServer();
  try {
    const agent = join(work, 'agent.mjs');
    writeFileSync(agent, AGENT);
    const recordings = new Map<number, string>();
    for (const files of WORLDS) {
      const ws = join(work, `ws-${files}`);
      for (let d = 0; d < 10; d++) {
        mkdirSync(join(ws, `d${d}`), { recursive: true });
        for (let f = 0; f < files / 10; f++) writeFileSync(join(ws, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
      }
      const rec = join(work, `rec-${files}`);
      measure(
        process.execPath,
        [
          BIN,
          'record',
          '--fs',
          ws,
          '--out',
          rec,
          '--',
          process.execPath,
          agent,
          server.url,
          ws,
          String(CALLS),
          String(files),
        ],
        { cwd: work },
      );
      recordings.set(files, rec);
    }
    const runs = new Map<number, Measure[]>(WORLDS.map((w) => [w, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const files of WORLDS) {
        const out = join(work, `replay-${files}-${round}`);
        runs.get(files)!.push(
          measure(process.execPath, [BIN, 'replay', recordings.get(files)!, '--out', out], {
            cwd: work,
            stamp: true,
          }),
        );
        rmSync(out, { recursive: true, force: true });
      }
    }
    process.stdout.write(
      `${CALLS} fetch calls, a file written after each, replayed in the OS sandbox, ${ROUNDS} interleaved rounds, min | median; load average ${loadavg()[0]?.toFixed(1)}:\n`,
    );
    const cpu = new Map<number, Stat>();
    const wall = new Map<number, Stat>();
    for (const files of WORLDS) {
      const ms = runs.get(files)!;
      cpu.set(files, stat(ms.map((m) => loopPerCall(m, 'cpuMs', CALLS))));
      wall.set(files, stat(ms.map((m) => loopPerCall(m, 'ms', CALLS))));
      const whole = stat(ms.map((m) => m.wallMs));
      process.stdout.write(
        `  ${String(files).padStart(5)} files: per call, agent CPU ${fmt(cpu.get(files)!, 3)} ms, wall ${fmt(wall.get(files)!, 3)} ms; whole replay ${fmt(whole)} ms\n`,
      );
    }
    const [small, big] = WORLDS as [number, number];
    process.stdout.write(
      `  ${big} files / ${small} files, agent CPU a call: ${verdict(cpu.get(big)!, cpu.get(small)!, 1.3)}\n` +
        `  ${big} files / ${small} files, agent wall a call: ${verdict(wall.get(big)!, wall.get(small)!, 1.3)}\n`,
    );
  } finally {
    server.child.kill();
    rmSync(work, { recursive: true, force: true });
  }
}
