// bench/scale: the commands a user runs on a long recording, end to end (the built CLI, a whole
// process each, CPU time of the process and its children, user + system, and peak RSS), on
// synthetic runs of 1k, 10k and 100k steps: replay (the agent makes every recorded call again),
// ledger, eval, bisect and verify. The fixed cost of each command (the same command on a 10-step
// recording, measured in the same run) is subtracted, and the rest printed per 10k steps.
// Targets: per-10k time at 100k within 1.5x of that at 10k for every command; replay of 100k
// steps under 1 GB RSS. The 100k cases take minutes on a loaded 2-core machine: they run when
// BENCH_SCALE_100K=1 (the output says when they were skipped).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, buildDist, measure, stat } from './lib/process.js';
import { MODEL_URL, writeSyntheticRun } from './lib/synthetic-run.js';

const FULL = process.env.BENCH_SCALE_100K === '1';
const SIZES = FULL ? [1_000, 10_000, 100_000] : [1_000, 10_000];
const ROUNDS = Number(process.env.BENCH_SCALE_ROUNDS ?? 3);
const GB = 1024 ** 3;

const CONTRACT = `task_id: bench_scale
success_criteria:
  required_outputs: [final_answer]
  must_not_include: [unsupported_claim]
`;

const COMMANDS: Record<string, (rec: string, work: string, round: number) => string[]> = {
  // Synthetic, written by the bench: it carries no seal of this machine.
  replay: (rec, work, round) => ['replay', rec, '--out', join(work, `replay-${round}`), '--json', '--trust-recording'],
  ledger: (rec) => ['ledger', rec],
  eval: (rec, work) => ['eval', rec, '--contract', join(work, 'contract.yaml')],
  bisect: (rec) => ['bisect', rec],
  verify: (rec) => ['verify', rec],
};

export async function run(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'tapedeck-bench-scale-'));
  try {
    process.stdout.write('building dist/ (the CLI a user installs)…\n');
    buildDist();
    writeFileSync(join(work, 'contract.yaml'), CONTRACT);
    mkdirSync(join(work, 'ws'));
    const recs = new Map<number, string>();
    for (const steps of [10, ...SIZES]) {
      const dir = join(work, `rec-${steps}`);
      await writeSyntheticRun(dir, join(work, `agent-${steps}.mjs`), join(work, 'ws'), { steps, files: 0 });
      recs.set(steps, dir);
    }
    const cpu = new Map<string, number[]>();
    const rss = new Map<string, number>();
    const key = (cmd: string, steps: number) => `${cmd}@${steps}`;
    for (const steps of [10, ...SIZES]) {
      const rounds = steps >= 100_000 ? 1 : ROUNDS;
      for (let round = 0; round < rounds; round++) {
        // Interleaved: drift on a shared machine hits every command alike.
        for (const [cmd, args] of Object.entries(COMMANDS)) {
          const m = measure(process.execPath, [BIN, ...args(recs.get(steps) as string, work, round)], {
            cwd: work,
            env: { MODEL_URL },
            ok: [0, 1],
          });
          rmSync(join(work, `replay-${round}`), { recursive: true, force: true });
          const k = key(cmd, steps);
          cpu.set(k, [...(cpu.get(k) ?? []), m.cpuMs]);
          rss.set(k, Math.max(rss.get(k) ?? 0, m.rssBytes));
        }
      }
    }
    process.stdout.write(
      `CPU of the whole process and its children (user + system), min | median of ${ROUNDS} interleaved rounds (1 at 100k); per 10k steps after the fixed cost (the command on 10 steps); load average ${loadavg()[0]?.toFixed(1)}:\n`,
    );
    for (const cmd of Object.keys(COMMANDS)) {
      const fixed = stat(cpu.get(key(cmd, 10)) as number[]);
      const per10k: Record<number, { min: number; median: number }> = {};
      const cells = [`fixed ${fixed.min.toFixed(0)} | ${fixed.median.toFixed(0)} ms`];
      for (const steps of SIZES) {
        const s = stat(cpu.get(key(cmd, steps)) as number[]);
        per10k[steps] = {
          min: (Math.max(0, s.min - fixed.min) * 10_000) / steps,
          median: (Math.max(0, s.median - fixed.median) * 10_000) / steps,
        };
        cells.push(
          `${steps / 1000}k ${s.min.toFixed(0)} | ${s.median.toFixed(0)} ms = ${per10k[steps].min.toFixed(0)} | ${per10k[steps].median.toFixed(0)} ms/10k, ${(rss.get(key(cmd, steps))! / 2 ** 20).toFixed(0)} MB RSS`,
        );
      }
      process.stdout.write(`  ${cmd.padEnd(7)} ${cells.join('; ')}\n`);
      if (FULL) {
        const a = per10k[10_000]!;
        const b = per10k[100_000]!;
        const ratio = { min: b.min / a.min, median: b.median / a.median };
        const pass = ratio.min <= 1.5 && ratio.median <= 1.5;
        process.stdout.write(
          `          per 10k, 100k vs 10k: ${ratio.min.toFixed(2)}x min, ${ratio.median.toFixed(2)}x median (target <= 1.5x: ${pass ? 'PASS' : 'MISS'})\n`,
        );
      } else {
        const a = per10k[1_000]!;
        const b = per10k[10_000]!;
        process.stdout.write(
          `          per 10k, 10k vs 1k: ${(b.min / a.min).toFixed(2)}x min, ${(b.median / a.median).toFixed(2)}x median (the target is 100k vs 10k: set BENCH_SCALE_100K=1)\n`,
        );
      }
    }
    if (FULL) {
      const peak = rss.get(key('replay', 100_000))!;
      process.stdout.write(
        `replay of 100k steps, peak RSS of the largest process: ${(peak / 2 ** 20).toFixed(0)} MB (target < 1 GB: ${peak < GB ? 'PASS' : 'MISS'})\n`,
      );
    } else {
      process.stdout.write(
        '100k steps: skipped (set BENCH_SCALE_100K=1; about 10 minutes on a loaded 2-core machine): the linear-growth and 1 GB targets are judged there\n',
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
