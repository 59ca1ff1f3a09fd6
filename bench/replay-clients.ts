// bench/replay-clients: replay speed per HTTP client, whole process. For each client (fetch,
// node:http, undici, axios, got) the bench/record-workload.mjs agent makes 1,000 sequential calls
// (after 20 warm-up calls) to a local keep-alive server; the run is recorded once with the built
// CLI, then in interleaved rounds run live again (plain node against the server) and replayed
// (`tapedeck replay`, default isolation). Prints, min | median of the rounds:
//   - the agent's own loop per call, replayed (target <= 0.1 ms) and live: its CPU time (what the
//     target is judged on: on a shared 2-core machine wall time mostly measures waiting for a
//     core) and its wall time, timed from outside (bench/lib/stamp.mjs: a replayed loop's own
//     clock is the recorded run's); and the client alone, answered in-process with no server and
//     nothing else of tapedeck's (undici and fetch by a do-nothing dispatcher; node:http, axios
//     and got by the replay's ClientRequest stand-in from a fixed answer): the floor a replayed
//     call cannot go under unless it skips the client's own work, and tapedeck's share, the
//     replayed call less that floor;
//   - the whole process, `tapedeck replay` against `node agent` live: wall time (target: replay
//     faster than live, i.e. < 1x) and CPU of the process and the children it waited for.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loopPerCall, startLoopbackServer } from './lib/loopback.js';
import { BIN, buildDist, type Measure, measure, type Stat, stat, verdict } from './lib/process.js';

const WORKLOAD = join(import.meta.dirname, 'record-workload.mjs');
const CLIENTS = (process.env.BENCH_REPLAY_CLIENTS ?? 'fetch,http,undici,axios,got').split(',');
const CALLS = Number(process.env.BENCH_REPLAY_CALLS ?? 1000);
const ROUNDS = Number(process.env.BENCH_REPLAY_ROUNDS ?? 3);
const LABEL: Record<string, string> = { http: 'node:http' };
/** How the client alone is answered (bench/record-workload.mjs's floor). */
const FLOOR: Record<string, string> = {
  fetch: 'answered by a do-nothing undici dispatcher',
  undici: 'answered by a do-nothing undici dispatcher',
  http: "answered by the replay's ClientRequest stand-in from a fixed answer",
  axios: "answered by the replay's ClientRequest stand-in from a fixed answer",
  got: "answered by the replay's ClientRequest stand-in from a fixed answer",
};

const fmt = (s: Stat, digits = 0): string => `${s.min.toFixed(digits)} | ${s.median.toFixed(digits)}`;

export async function run(): Promise<void> {
  buildDist();
  const work = mkdtempSync(join(tmpdir(), 'tapedeck-bench-replay-clients-'));
  const server = await startLoopbackServer();
  try {
    const agent = (client: string) => [WORKLOAD, client, String(CALLS), server.url];
    for (const client of CLIENTS) {
      try {
        await runClient(client);
      } catch (error) {
        process.stdout.write(
          `${LABEL[client] ?? client}: FAILED (MISS): ${error instanceof Error ? error.message.slice(0, 1500) : String(error)}\n`,
        );
      }
    }
    async function runClient(client: string): Promise<void> {
      const rec = join(work, `rec-${client}`);
      measure(process.execPath, [BIN, 'record', '--out', rec, '--', process.execPath, ...agent(client)], { cwd: work });
      const runs = { live: [] as Measure[], replay: [] as Measure[], floor: [] as Measure[] };
      for (let round = 0; round < ROUNDS; round++) {
        // Interleaved, so drift on a shared machine hits both alike.
        runs.live.push(measure(process.execPath, agent(client), { cwd: work, stamp: true }));
        runs.floor.push(measure(process.execPath, [...agent(client), 'floor'], { cwd: work, stamp: true }));
        const out = join(work, `replay-${client}-${round}`);
        runs.replay.push(measure(process.execPath, [BIN, 'replay', rec, '--out', out], { cwd: work, stamp: true }));
        rmSync(out, { recursive: true, force: true });
      }
      const call = {
        live: stat(runs.live.map((m) => loopPerCall(m, 'ms', CALLS))),
        replay: stat(runs.replay.map((m) => loopPerCall(m, 'ms', CALLS))),
      };
      const callCpu = {
        live: stat(runs.live.map((m) => loopPerCall(m, 'cpuMs', CALLS))),
        replay: stat(runs.replay.map((m) => loopPerCall(m, 'cpuMs', CALLS))),
        floor: stat(runs.floor.map((m) => loopPerCall(m, 'cpuMs', CALLS))),
      };
      const share = (key: 'min' | 'median') => (callCpu.replay[key] - callCpu.floor[key]).toFixed(3);
      const wall = { live: stat(runs.live.map((m) => m.wallMs)), replay: stat(runs.replay.map((m) => m.wallMs)) };
      const cpu = { live: stat(runs.live.map((m) => m.cpuMs)), replay: stat(runs.replay.map((m) => m.cpuMs)) };
      const within = callCpu.replay.min <= 0.1 && callCpu.replay.median <= 0.1;
      process.stdout.write(
        `${LABEL[client] ?? client}: ${CALLS} calls, ${ROUNDS} interleaved rounds, min | median; load average ${loadavg()[0]?.toFixed(1)}\n` +
          `  per call, agent CPU: replayed ${fmt(callCpu.replay, 3)} ms (target <= 0.1 ms: ${within ? 'PASS' : 'MISS'}); live ${fmt(callCpu.live, 3)} ms\n` +
          `  per call, agent wall: replayed ${fmt(call.replay, 3)} ms; live ${fmt(call.live, 3)} ms\n` +
          `  per call, the client alone (${FLOOR[client] ?? 'answered in-process'}, no server, nothing else of tapedeck's): CPU ${fmt(callCpu.floor, 3)} ms\n` +
          `  per call, tapedeck's share (replayed less the client alone): CPU ${share('min')} | ${share('median')} ms${callCpu.replay.median < callCpu.floor.median ? " (below the client alone: the replay answers before the client's own work)" : ''}\n` +
          `  whole process: replay wall ${fmt(wall.replay)} ms, CPU ${fmt(cpu.replay)} ms; live wall ${fmt(wall.live)} ms, CPU ${fmt(cpu.live)} ms\n` +
          `  replay / live, wall: ${verdict(wall.replay, wall.live, 1, '< 1x')}\n`,
      );
    }
  } finally {
    server.child.kill();
    rmSync(work, { recursive: true, force: true });
  }
}
