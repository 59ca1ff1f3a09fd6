// What strace sees of a sandboxed process tree (sandbox.ts traces the agent when the machine has
// strace): the calls it watches, a refused call's line read as an attempt (a way out, or glibc's
// name-service probe), and the attempts told apart.

/** What strace watches: only failures are printed (-Z), so successful calls cost nothing to report. */
export const TRACED = [
  'connect',
  'sendto',
  'sendmsg',
  'socket',
  'kill',
  'tkill',
  'tgkill',
  'openat',
  'creat',
  'mkdirat',
  'unlinkat',
  'renameat2',
  'linkat',
  'symlinkat',
  'fchmodat',
  'fchownat',
  'utimensat',
  'truncate',
];

/** A refused attempt seen below the process (strace), with the process that made it. */
export interface OsAttempt {
  pid: number;
  /** The process's command line inside, when it could still be read. */
  command?: string;
  kind: 'connect' | 'send' | 'unix-socket' | 'signal' | 'write';
  target: string;
  error: string;
  line: string;
  /**
   * A Unix socket refused at creation with the flags glibc's name-service probe uses (its nscd
   * client, at the first host-name lookup of curl, psql, python…: `nameServiceProbe`). A Go
   * program's own Unix socket is made with the same flags; the path is never known (the socket
   * was refused before its connect).
   */
  nameServiceLike?: true;
}

/**
 * glibc's nscd client opens `socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, 0)` and
 * connects it to /var/run/nscd/socket before every program's first host-name lookup (inside the
 * sandbox /run is private, so there is no nscd to reach either way).
 */
const NAME_SERVICE_PROBE = /^AF_(UNIX|LOCAL), SOCK_STREAM\|SOCK_CLOEXEC\|SOCK_NONBLOCK, 0$/;

const SOCKADDR_IN = /sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)/;
const SOCKADDR_IN6 = /sin6_port=htons\((\d+)\).*inet_pton\(AF_INET6, "([^"]+)"/;
const SOCKADDR_UN = /sun_path="([^"]*)"/;
const WRITE_FLAGS = /O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND/;
const REFUSED_WRITE = /= -1 (EROFS|EACCES|EPERM)\b/;

/** Reads one strace line (`PID  call(args) = -1 ERR (text)`, or `PID<name> call…`) as an attempt, or undefined for noise. */
export function parseTraceLine(line: string): Omit<OsAttempt, 'command'> | undefined {
  // `PID<name> call(...)` when strace names the process (-Y).
  const m = /^(\d+)(?:<.*?>)?\s+(\w+)\((.*)\)\s+=\s+-1\s+(\w+)/.exec(line);
  if (!m) return undefined;
  const pid = Number(m[1]);
  const call = m[2] as string;
  const args = m[3] as string;
  const error = m[4] as string;
  const addr = () => {
    const v4 = SOCKADDR_IN.exec(args);
    if (v4) return `${v4[2]}:${v4[1]}`;
    const v6 = SOCKADDR_IN6.exec(args);
    if (v6) return `[${v6[2]}]:${v6[1]}`;
    const un = SOCKADDR_UN.exec(args);
    if (un) return `unix:${un[1]}`;
    return undefined;
  };
  switch (call) {
    case 'connect': {
      const target = addr();
      return target ? { pid, kind: 'connect', target, error, line } : undefined;
    }
    case 'sendto':
    case 'sendmsg': {
      const target = addr();
      return target && error !== 'EAGAIN' ? { pid, kind: 'send', target, error, line } : undefined;
    }
    case 'socket':
      return /AF_(UNIX|LOCAL)/.test(args)
        ? {
            pid,
            kind: 'unix-socket',
            target: 'a Unix socket',
            error,
            line,
            ...(NAME_SERVICE_PROBE.test(args.trim()) ? { nameServiceLike: true as const } : {}),
          }
        : undefined;
    case 'kill':
    case 'tkill':
    case 'tgkill': {
      const target = args.split(',')[0]?.trim() ?? '?';
      return error === 'ESRCH' || error === 'EPERM'
        ? { pid, kind: 'signal', target: `pid ${target}`, error, line }
        : undefined;
    }
    default: {
      if (!REFUSED_WRITE.test(line)) return undefined;
      if (call === 'openat' && !WRITE_FLAGS.test(args)) return undefined;
      const file = /"([^"]*)"/.exec(args)?.[1];
      return file === undefined ? undefined : { pid, kind: 'write', target: file, error, line };
    }
  }
}

/** The trace message's command lines (the init reads /proc/<pid>/cmdline inside). */
export function commandOf(message: Record<string, unknown>, pid: number): { command?: string } {
  const commands = message.commands as Record<string, string> | undefined;
  const command = commands?.[String(pid)];
  return command ? { command } : {};
}

/**
 * The attempts that are ways out, and one line for those that look like glibc's name-service
 * probe (`nameServiceLike`), or undefined when there are none: refused, reached by no one, and
 * a program resolving a host name makes one, so they are said, not counted as ways out.
 */
export function nameServiceProbes(attempts: readonly OsAttempt[]): { ways: OsAttempt[]; note?: string } {
  const probes = attempts.filter((a) => a.nameServiceLike);
  if (probes.length === 0) return { ways: [...attempts] };
  const by = [...new Set(probes.map((a) => (a.command ?? `pid ${a.pid}`).split(' ')[0] ?? '?'))];
  return {
    ways: attempts.filter((a) => !a.nameServiceLike),
    note: `${probes.length} Unix socket${probes.length === 1 ? '' : 's'} refused at creation with the flags of glibc's name-service (nscd) probe, made at a program's first host-name lookup (by ${by.slice(0, 4).join(', ')}${by.length > 4 ? ` and ${by.length - 4} more` : ''}): taken as that probe, not as a way out (a Go program's own Unix socket is made with the same flags; it was refused all the same)`,
  };
}
