// What isolation this machine gives: bubblewrap with user, network, mount and PID namespaces
// (the OS sandbox), `unshare` for a network namespace alone (the fallback), or nothing (the
// in-process preload only). Probed once per process by running the real thing, not guessed from
// sysctls (user namespaces may be off, or bwrap may lack its setuid bit, in many ways).
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { TapedeckError } from '../../src/recording/index.js';
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
  /** Unix sockets refused by a seccomp filter (bwrap only). */
  seccomp: boolean;
  /** One line per finding: what works, what does not and why. */
  notes: string[];
}

/** The one-line summary a replay prints first. */
export function describeIsolation(isolation: Isolation): string {
  switch (isolation.level) {
    case 'bwrap':
      return `isolation: OS sandbox (bubblewrap: user, network, mount and PID namespaces${isolation.seccomp ? ', no Unix sockets' : ''}${isolation.strace ? '; attempts traced with strace' : ''})`;
    case 'unshare':
      return 'isolation: PARTIAL — network namespace only (unshare); files and processes are guarded in Node processes alone, other programs are refused and reported. Install bubblewrap for the OS sandbox.';
    default:
      return 'isolation: NONE — no namespaces on this machine; only Node processes are guarded (the in-process preload), other programs are refused and reported. Install bubblewrap (and allow user namespaces) for the OS sandbox.';
  }
}

function which(name: string): string | undefined {
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

/** Probes the machine (once per process). TAPEDECK_BWRAP / TAPEDECK_UNSHARE / TAPEDECK_STRACE name the tools, or "" to pretend they are missing. */
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
  let level: IsolationLevel = 'none';
  if (bwrap) {
    const r = probe(bwrap, [...BWRAP_BASE, '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', 'true']);
    if (r.ok) {
      level = 'bwrap';
      notes.push(`bubblewrap works (${bwrap}): user, network, mount, PID, IPC and UTS namespaces`);
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
  if (straceBin && level === 'bwrap') {
    const r = probe(straceBin, ['-f', '-qq', '--seccomp-bpf', '-e', 'trace=connect', '-o', '/dev/null', '--', 'true']);
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
    seccomp,
    notes,
  };
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
    return { level: 'none', seccomp: false, notes: ['isolation "none" was chosen: the OS sandbox was not probed'] };
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
  } as Isolation;
}
