// Whole-process measurements for the benches: the built CLI (dist/, what a user installs), and the
// CPU (user + system, the process and the children it waited for), peak RSS and wall time of one
// process, read from /usr/bin/time; min and median of interleaved rounds.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const root = join(import.meta.dirname, '../..');
export const BIN = join(root, 'bin/tapedeck.mjs');

let built = false;
/** Builds dist/ once per bench run; the CLI then runs it with TAPEDECK_DIST=1. BENCH_NO_BUILD=1 uses
 * dist/ as it is (another bench running from it at the same time). */
export function buildDist(): void {
  if (built || process.env.BENCH_NO_BUILD === '1') return;
  execFileSync(process.execPath, [join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'ignore' });
  built = true;
}

export interface Measure {
  cpuMs: number;
  rssBytes: number;
  wallMs: number;
  stdout: string;
}

/** Runs `command args` to its end under /usr/bin/time; exit codes other than `ok` throw. `stamp`:
 * its `@mark` lines timed from outside (bench/lib/stamp.mjs). */
export function measure(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; ok?: number[]; stamp?: boolean } = {},
): Measure {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-bench-time-'));
  try {
    const out = join(dir, 'time.txt');
    const timed = ['-f', '%U %S %M %e', '-o', out, command, ...args];
    const spawnOptions = {
      cwd: options.cwd ?? root,
      env: { ...process.env, TAPEDECK_DIST: '1', ...options.env },
      encoding: 'utf8',
      maxBuffer: 1 << 28,
    } as const;
    // stamp: the child's stdout through bench/lib/stamp.mjs, which times its `@mark` lines from
    // outside (the exit status is the child's: pipefail).
    const run = options.stamp
      ? spawnSync(
          '/bin/bash',
          ['-c', 'set -o pipefail; "$@" | "$0" "$STAMP"', process.execPath, '/usr/bin/time', ...timed],
          { ...spawnOptions, env: { ...spawnOptions.env, STAMP: join(import.meta.dirname, 'stamp.mjs') } },
        )
      : spawnSync('/usr/bin/time', timed, spawnOptions);
    if (!(options.ok ?? [0]).includes(run.status ?? -1)) {
      throw new Error(`${[command, ...args].join(' ')} exited ${run.status}: ${run.stderr.slice(-2000)}`);
    }
    const last = readFileSync(out, 'utf8').trim().split('\n').at(-1) ?? '';
    const [user, sys, rssKb, wall] = last.split(' ').map(Number);
    return {
      cpuMs: ((user ?? 0) + (sys ?? 0)) * 1000,
      rssBytes: (rssKb ?? 0) * 1024,
      wallMs: (wall ?? 0) * 1000,
      stdout: run.stdout,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Stat {
  min: number;
  median: number;
}
export const stat = (xs: number[]): Stat => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0] as number, median: s[Math.floor(s.length / 2)] as number };
};

/** "1.02x min, 1.01x median (target <= 1.03x: PASS)" */
export function verdict(a: Stat, b: Stat, target: number, label = `<= ${target}x`): string {
  const r = { min: a.min / b.min, median: a.median / b.median };
  const pass = r.min <= target && r.median <= target;
  return `${r.min.toFixed(2)}x min, ${r.median.toFixed(2)}x median (target ${label}: ${pass ? 'PASS' : 'MISS'})`;
}
