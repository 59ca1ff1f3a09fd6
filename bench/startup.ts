// bench/startup: what a user pays before tapedeck does anything. The package is packed and installed
// into an empty folder (as `npm i -D tapedeck` would), then, in interleaved rounds:
//   - CPU of `tapedeck --version`, `verify` and `ledger` of a small recording, as a ratio to the CPU
//     of `node -e 0` (target <= 3x, min and median);
//   - wall time of `npx tapedeck --version` from the installed tarball, as a ratio to the same from
//     the CLI as it was before packaging (TypeScript through tsx, every command imported at start),
//     extracted from git history (target < 0.5x).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const REPORTER = join(import.meta.dirname, 'cpu-report.mjs');
/** The last commit whose CLI compiled TypeScript through tsx and loaded every command at start. */
const BEFORE_PACKAGING = '22dcbb1';
const CPU_ROUNDS = 15;
const NPX_ROUNDS = 7;

interface Stat {
  min: number;
  median: number;
}
const stat = (values: number[]): Stat => {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0] as number, median: sorted[Math.floor(sorted.length / 2)] as number };
};
const fmt = (s: Stat): string => `min ${s.min.toFixed(1)} ms, median ${s.median.toFixed(1)} ms`;
const ratio = (a: Stat, b: Stat): string =>
  `${(a.min / b.min).toFixed(2)}x min, ${(a.median / b.median).toFixed(2)}x median`;

/** Installs the packed package into an empty folder; returns the folder. */
function installTarball(work: string): string {
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', work], { cwd: root, encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1) as string;
  const app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), '{"name":"bench-app","private":true,"type":"module"}\n');
  execFileSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', join(work, tarball)],
    {
      cwd: app,
      stdio: 'ignore',
    },
  );
  return app;
}

/** The CLI as it was before packaging, runnable from its own folder (sharing this checkout's node_modules). */
function extractOldCli(work: string): string | undefined {
  const old = join(work, 'old');
  mkdirSync(old);
  const archive = spawnSync('git', ['archive', BEFORE_PACKAGING], { cwd: root, maxBuffer: 1 << 30 });
  if (archive.status !== 0) return undefined;
  const tar = spawnSync('tar', ['-x', '-C', old], { input: archive.stdout });
  if (tar.status !== 0) return undefined;
  symlinkSync(join(root, 'node_modules'), join(old, 'node_modules'));
  return old;
}

function cpuOf(args: string[], cwd: string, log: string): number {
  rmSync(log, { force: true });
  const run = spawnSync(process.execPath, ['--import', REPORTER, ...args], {
    cwd,
    env: { ...process.env, TAPEDECK_CPU_LOG: log },
    encoding: 'utf8',
  });
  if (run.status !== 0 && run.status !== 1) throw new Error(`${args.join(' ')} failed: ${run.stderr}`);
  return Number(readFileSync(log, 'utf8').trim());
}

function wallOf(command: string, args: string[], cwd: string): number {
  const t0 = performance.now();
  const run = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`${command} ${args.join(' ')} failed in ${cwd}: ${run.stderr}`);
  return performance.now() - t0;
}

export async function run(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'tapedeck-bench-startup-'));
  try {
    process.stdout.write('packing and installing the tarball into an empty folder…\n');
    const app = installTarball(work);
    const bin = join(app, 'node_modules/tapedeck/bin/tapedeck.mjs');
    const recording = join(work, 'small');
    cpSync(join(root, 'recordings/examples/openai-baseline'), recording, { recursive: true });
    const old = extractOldCli(work);
    const log = join(work, 'cpu.log');

    const cases: Array<[string, string[], string]> = [
      ['node -e 0', ['-e', '0'], app],
      ['tapedeck --version', [bin, '--version'], app],
      ['tapedeck verify', [bin, 'verify', recording], app],
      ['tapedeck ledger', [bin, 'ledger', recording], app],
    ];
    if (old) cases.push(['before packaging: tapedeck --version', [join(old, 'bin/tapedeck.mjs'), '--version'], old]);
    const cpu = new Map<string, number[]>(cases.map(([name]) => [name, []]));
    for (const [, args, cwd] of cases) cpuOf(args, cwd, log); // warm the file cache
    for (let round = 0; round < CPU_ROUNDS; round++) {
      for (const [name, args, cwd] of cases) cpu.get(name)?.push(cpuOf(args, cwd, log));
    }
    const base = stat(cpu.get('node -e 0') as number[]);
    process.stdout.write(
      `CPU (user + system) of a whole process, ${CPU_ROUNDS} interleaved rounds, load average ${loadavg()[0]?.toFixed(1)}:\n`,
    );
    process.stdout.write(`  ${'node -e 0'.padEnd(38)}${fmt(base)}\n`);
    for (const [name] of cases.slice(1)) {
      const s = stat(cpu.get(name) as number[]);
      const within = s.min <= 3 * base.min && s.median <= 3 * base.median;
      const target = name.startsWith('before') ? '' : `  (target <= 3x: ${within ? 'met' : 'NOT met'})`;
      process.stdout.write(`  ${name.padEnd(38)}${fmt(s)} = ${ratio(s, base)} node -e 0${target}\n`);
    }

    if (!old) {
      process.stdout.write(
        `npx: the CLI before packaging (${BEFORE_PACKAGING}) is not in this clone's history; skipped\n`,
      );
      return;
    }
    const npx = { now: [] as number[], before: [] as number[] };
    wallOf('npx', ['--no-install', 'tapedeck', '--version'], app);
    wallOf('npx', ['--no-install', 'tapedeck', '--version'], old);
    for (let round = 0; round < NPX_ROUNDS; round++) {
      npx.now.push(wallOf('npx', ['--no-install', 'tapedeck', '--version'], app));
      npx.before.push(wallOf('npx', ['--no-install', 'tapedeck', '--version'], old));
    }
    const now = stat(npx.now);
    const before = stat(npx.before);
    const half = now.median < 0.5 * before.median && now.min < 0.5 * before.min;
    process.stdout.write(`npx tapedeck --version, wall time, ${NPX_ROUNDS} interleaved rounds:\n`);
    process.stdout.write(`  before packaging (tsx)                ${fmt(before)}\n`);
    process.stdout.write(
      `  installed tarball                     ${fmt(now)} = ${ratio(now, before)} before (target < 0.5x: ${half ? 'met' : 'NOT met'})\n`,
    );
  } finally {
    if (existsSync(work)) rmSync(work, { recursive: true, force: true });
  }
}
