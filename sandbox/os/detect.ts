// What isolation this machine gives: bubblewrap with user, network, mount and PID namespaces
// (the OS sandbox), `unshare` for a network namespace alone (the fallback), or nothing (the
// in-process preload only). Probed by running the real thing, not guessed from sysctls (user
// namespaces may be off, or bwrap may lack its setuid bit, in many ways).
//
// The probe starts bubblewrap and strace (~0.1 s of CPU, more wall time on a busy machine), so its
// best answer (bwrap works, and strace when installed) is kept in the state folder
// (isolation.json) for the next process, keyed by everything that can change it: the tools'
// paths and inodes (size, times, mode, owner), the kernel and boot, the user and its user
// namespace, the sysctls that allow user namespaces and tracing. Only the best answer is kept: a
// kept answer can only claim more than the machine gives, which shows when the sandbox does not
// start (openOsSandbox then forgets it and a replay probes again), never less.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  accessSync,
  constants,
  mkdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { release } from 'node:os';
import path from 'node:path';
import * as z from 'zod';
import { stateHome, TapedeckError } from '../../src/recording/index.js';
import { seccompSupported } from './seccomp.js';

export type IsolationLevel = 'bwrap' | 'unshare' | 'none';
export type IsolationChoice = IsolationLevel | 'auto';

export interface Isolation {
  level: IsolationLevel;
  /** Paths of the tools used. */
  bwrap?: string;
  unshare?: string;
  /** strace, when present: every process's refused connects, signals and writes are reported. */
  strace?: string;
  /** strace names the process in each line (`-Y`, strace 5.18+): an attempt keeps its program's name when the program is gone before its line is read. */
  straceNames?: true;
  /** Unix sockets refused by a seccomp filter (bwrap only). */
  seccomp: boolean;
  /** One line per finding: what works, what does not and why. */
  notes: string[];
  /** Taken from the kept probe of an earlier process (isolation.json), not probed by this one. */
  fromCache?: true;
  /** The level was asked for (--isolation, TAPEDECK_ISOLATION), not the best this machine has. */
  chosen?: true;
}

/** The one-line summary a replay prints first. */
export function describeIsolation(isolation: Isolation): string {
  switch (isolation.level) {
    case 'bwrap':
      return `isolation: OS sandbox (bubblewrap: user, network, mount and PID namespaces${isolation.seccomp ? ', no Unix sockets' : ''}${isolation.strace ? '; attempts traced with strace' : ''})`;
    case 'unshare':
      return isolation.chosen
        ? 'isolation: PARTIAL, as chosen — network namespace only (unshare); files and processes are guarded in Node processes alone, other programs are refused and reported.'
        : 'isolation: PARTIAL — network namespace only (unshare); files and processes are guarded in Node processes alone, other programs are refused and reported. Install bubblewrap for the OS sandbox.';
    default:
      // Asked for (a faster replay, a machine where the probe is not wanted): not a missing sandbox.
      return isolation.chosen
        ? 'isolation: NONE, as chosen — only Node processes are guarded (the in-process preload), other programs are refused and reported.'
        : 'isolation: NONE — no namespaces on this machine; only Node processes are guarded (the in-process preload), other programs are refused and reported. Install bubblewrap (and allow user namespaces) for the OS sandbox.';
  }
}

/** The path of a program on the PATH, or undefined. */
export function which(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

function probe(command: string, args: string[]): { ok: boolean; detail: string } {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 15_000 });
  if (result.error) return { ok: false, detail: result.error.message };
  if (result.status !== 0)
    return { ok: false, detail: (result.stderr || `exit ${result.status}`).trim().split('\n')[0] ?? '' };
  return { ok: true, detail: '' };
}

let cached: Isolation | undefined;

/** The bwrap arguments every probe and every sandbox share: namespaces, no capabilities. */
export const BWRAP_BASE = [
  '--unshare-all',
  '--unshare-user',
  '--disable-userns',
  '--cap-drop',
  'ALL',
  '--die-with-parent',
  '--new-session',
];

/** Where the kept probe lives. */
export function isolationCacheFile(): string {
  return path.join(stateHome(), 'isolation.json');
}

const CacheSchema = z
  .object({ version: z.literal(2), key: z.string().regex(/^[0-9a-f]{64}$/), strace: z.boolean(), names: z.boolean() })
  .strict();

/** Whatever can change the probe's answer, hashed. */
function probeKey(tools: Record<string, string | undefined>): string {
  const fileId = (file: string | undefined) => {
    if (!file) return null;
    try {
      const s = statSync(file);
      return [file, s.dev, s.ino, s.size, s.mtimeMs, s.ctimeMs, s.mode, s.uid];
    } catch {
      return [file, 'missing'];
    }
  };
  const read = (file: string) => {
    try {
      return readFileSync(file, 'utf8').trim();
    } catch {
      return null;
    }
  };
  const link = (file: string) => {
    try {
      return readlinkSync(file);
    } catch {
      return null;
    }
  };
  const key = {
    tools: Object.fromEntries(Object.entries(tools).map(([name, file]) => [name, fileId(file)])),
    kernel: release(),
    boot: read('/proc/sys/kernel/random/boot_id'),
    uid: process.getuid?.() ?? null,
    userns: link('/proc/self/ns/user'),
    sysctl: [
      '/proc/sys/kernel/unprivileged_userns_clone',
      '/proc/sys/user/max_user_namespaces',
      '/proc/sys/kernel/apparmor_restrict_unprivileged_userns',
      '/proc/sys/kernel/yama/ptrace_scope',
    ].map(read),
    arch: process.arch,
  };
  return createHash('sha256').update(JSON.stringify(key)).digest('hex');
}

/** The kept probe when its key is this one (bwrap works; strace too when `strace` is true); anything else is ignored. */
function readKept(key: string): { strace: boolean; names: boolean } | undefined {
  try {
    const parsed = CacheSchema.safeParse(JSON.parse(readFileSync(isolationCacheFile(), 'utf8')));
    return parsed.success && parsed.data.key === key
      ? { strace: parsed.data.strace, names: parsed.data.names }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Keeps the best answer (whole file to a private temp, renamed over); a state folder that cannot be written keeps nothing. */
function keep(key: string, strace: boolean, names: boolean): void {
  const file = isolationCacheFile();
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(tmp, `${JSON.stringify({ version: 2, key, strace, names })}\n`, { flag: 'wx', mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    try {
      unlinkSync(tmp);
    } catch {}
  }
}

/** The sandbox did not start with a kept probe's isolation: the machine changed since (the probe is forgotten). */
export class StaleIsolationError extends TapedeckError {
  constructor(cause: TapedeckError) {
    super(
      'SANDBOX_FAILED',
      `${cause.message} (with the isolation kept from an earlier probe, now forgotten: the next run probes again)`,
      { cause },
    );
  }
}

/** Forgets the probe, in this process and the kept one: the next detectIsolation() probes the machine. */
export function forgetIsolation(): void {
  cached = undefined;
  try {
    unlinkSync(isolationCacheFile());
  } catch {}
}

/**
 * What this machine gives: probed once per process, or taken from the kept probe when nothing it
 * depends on changed. TAPEDECK_BWRAP / TAPEDECK_UNSHARE / TAPEDECK_STRACE name the tools, or ""
 * to pretend they are missing.
 */
export function detectIsolation(): Isolation {
  if (cached) return cached;
  const notes: string[] = [];
  const tool = (env: string, name: string) => {
    const given = process.env[env];
    if (given === '') return undefined;
    return given ?? which(name);
  };
  const bwrap = tool('TAPEDECK_BWRAP', 'bwrap');
  const unshare = tool('TAPEDECK_UNSHARE', 'unshare');
  const straceBin = tool('TAPEDECK_STRACE', 'strace');
  const key = probeKey({ bwrap, unshare, strace: straceBin });
  const kept = bwrap ? readKept(key) : undefined;
  // A kept answer says strace works exactly when strace is installed (anything else was not written
  // here): then bwrap and strace are not run again, and the rest is said as after a probe.
  const fromCache = kept !== undefined && kept.strace === (straceBin !== undefined);
  const works = { ok: true, detail: '' };
  let level: IsolationLevel = 'none';
  if (bwrap) {
    const r = fromCache
      ? works
      : probe(bwrap, [...BWRAP_BASE, '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', 'true']);
    if (r.ok) {
      level = 'bwrap';
      notes.push(
        `bubblewrap works (${bwrap}): user, network, mount, PID, IPC and UTS namespaces${fromCache ? ' (kept from an earlier probe)' : ''}`,
      );
    } else notes.push(`bubblewrap is installed but cannot make namespaces here: ${r.detail}`);
  } else notes.push('bubblewrap (bwrap) is not installed: apt-get install bubblewrap');
  if (level === 'none' && unshare) {
    const r = probe(unshare, ['-r', '-n', '--', 'true']);
    if (r.ok) {
      level = 'unshare';
      notes.push(`unshare -rn works (${unshare}): a network namespace for the agent's tree`);
    } else notes.push(`unshare cannot make a user + network namespace here: ${r.detail}`);
  }
  let strace: string | undefined;
  let straceNames = false;
  if (straceBin && level === 'bwrap') {
    const traced = (flags: string[]) =>
      probe(straceBin, [
        '-f',
        '-qq',
        ...flags,
        '--seccomp-bpf',
        '-e',
        'trace=connect',
        '-o',
        '/dev/null',
        '--',
        'true',
      ]);
    // With names (-Y) when this strace has them, else without.
    let r = fromCache ? works : traced(['-Y']);
    straceNames = fromCache ? kept.names : r.ok;
    if (!r.ok) r = traced([]);
    if (r.ok) strace = straceBin;
    else
      notes.push(
        `strace cannot trace here (${r.detail}): attempts by programs other than Node are refused but not named`,
      );
  } else if (level === 'bwrap') {
    notes.push('strace is not installed: attempts by programs other than Node are refused but not named');
  }
  const seccomp = level === 'bwrap' && seccompSupported();
  if (level === 'bwrap' && !seccomp)
    notes.push('no seccomp filter for this CPU: Unix sockets on the read-only file system stay reachable');
  cached = {
    level,
    ...(bwrap ? { bwrap } : {}),
    ...(unshare ? { unshare } : {}),
    ...(strace ? { strace } : {}),
    ...(strace && straceNames ? { straceNames: true as const } : {}),
    seccomp,
    notes,
    ...(fromCache ? { fromCache: true as const } : {}),
  };
  // Only the best answer is kept (see the top of this file).
  if (!fromCache && level === 'bwrap' && (strace || !straceBin)) keep(key, strace !== undefined, straceNames);
  return cached;
}

/**
 * The isolation a run gets: `auto` takes the best this machine has; a named level must be
 * available (or be weaker than what is). TAPEDECK_ISOLATION sets the default choice.
 */
export function chooseIsolation(choice: IsolationChoice = 'auto'): Isolation {
  const want = choice === 'auto' ? ((process.env.TAPEDECK_ISOLATION as IsolationChoice | undefined) ?? 'auto') : choice;
  // Nothing to probe for a run that asked for none: the probes start bubblewrap, unshare and
  // strace (~0.1 s of CPU, more in wall time on a busy machine) for a sandbox it would not use.
  if (want === 'none' && cached === undefined) {
    return {
      level: 'none',
      seccomp: false,
      notes: ['isolation "none" was chosen: the OS sandbox was not probed'],
      chosen: true,
    };
  }
  const found = detectIsolation();
  if (want === 'auto') return found;
  const rank: Record<IsolationLevel, number> = { none: 0, unshare: 1, bwrap: 2 };
  if (!(want in rank)) {
    throw new TapedeckError('BAD_OPTION', `isolation ${JSON.stringify(want)} is not auto, bwrap, unshare or none`);
  }
  if (rank[want] > rank[found.level]) {
    throw new TapedeckError(
      'NO_ISOLATION',
      `isolation "${want}" is not available on this machine (best: ${found.level}): ${found.notes.join('; ')}`,
    );
  }
  if (want === 'unshare' && !found.unshare) {
    throw new TapedeckError('NO_ISOLATION', 'isolation "unshare" needs unshare (util-linux), which is not installed');
  }
  return {
    ...found,
    level: want,
    seccomp: want === 'bwrap' && found.seccomp,
    ...(want === 'bwrap' ? {} : { strace: undefined }),
    ...(want === found.level ? {} : { chosen: true }),
  } as Isolation;
}
