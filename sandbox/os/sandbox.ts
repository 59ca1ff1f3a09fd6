// The OS sandbox: a process tree in new user, network, mount, PID, IPC and UTS namespaces
// (bubblewrap), or in a network namespace alone (`unshare`, the fallback). Inside:
//   - the real file system read-only; /tmp, /var/tmp, /run, /dev/shm private; the paths given
//     as `writable` bound read-write (a replay's world copy at the recorded fs root);
//   - no network but loopback: the launcher opens listeners inside (`listen`) and serves them
//     from outside — the proxy (the only HTTP(S) door), the sandbox database, the preload's IPC;
//   - no Unix sockets (seccomp), no capabilities, no new user namespaces, no other process
//     visible; setuid bits do nothing (no_new_privs);
//   - the hosts named in `hosts` resolve to 127.0.0.1 (a recorded database's own host name);
//   - a host name given to `named(name)` resolves to a loopback address of its own (127.77.0.n),
//     so a listener there serves api.internal:8080 inside to any program, whatever other name
//     uses the same port. Loopback needs no keeper: with bubblewrap alone (user namespaces allowed
//     to it only) a name is served at its ports from 1024 up; below, the keeper must lower the
//     namespace's first unprivileged port (netns.ts). /etc/hosts inside is the launcher's file,
//     rewritten in place (the bind mount shows the same inode), so names can be added after start;
//   - an address of another machine asked for with `local(address)` is the sandbox's own (on its
//     loopback, added by the network namespace's keeper outside: netns.ts), so a listener there
//     serves 10.0.3.7:5432 inside to any program;
//   - the run's CA is the only trusted root (bound over the system bundles and named in the env).
// Refused attempts of any process (connect, sendto, kill, writes) are reported when strace is
// present (`attempts`); Node processes also report their own through the preload.
//
// Services (for the answer chain): `spawn(command, { stdio: 'pipe' })` starts another process in
// the same namespaces (same isolation as the agent), its output comes out as events; the proxy
// reaches its loopback listener with `connect(port)`, which returns a socket connected from
// inside. Start services before the agent; `close()` ends them all.
//
//   const box = await openOsSandbox({ isolation, cwd, writable: [{ source: copy, target: fsRoot }] });
//   const proxyListener = await box.listen();               // a port inside; accept outside
//   proxy.serve(proxyListener);
//   const api = box.spawn(['node', 'api.mjs'], { env, stdio: 'pipe' });   // a service inside
//   const socket = await box.connect(8787);                  // the proxy reaching the service
//   const agent = box.spawn(['node', 'agent.mjs'], { env, stdio: 'inherit', trace: true });
//   const { code } = await agent.exit; await box.close();
import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, lstatSync, readFileSync, realpathSync } from 'node:fs';
import { open, writeFile } from 'node:fs/promises';
import type net from 'node:net';
import { homedir } from 'node:os';
import path from 'node:path';
import { packagePath, packageRoot } from '../../src/package.js';
import { redactionKeyFile, sealKeyFile, TapedeckError } from '../../src/recording/index.js';
import { makeNotedTempDir } from '../leftovers.js';
import { BWRAP_BASE, forgetIsolation, type Isolation, StaleIsolationError } from './detect.js';
import { keeperFailed, type NetKeeper, nonLoopback, startNetKeeper } from './netns.js';
import { seccompProgram } from './seccomp.js';

const INIT = packagePath('sandbox/os/init.mjs');
/** Where the sandbox's own listeners go inside: below Linux's ephemeral range (32768-60999). */
const ASIDE_PORTS = { from: 20_000, to: 30_000 };
/** Folders made private inside (their real content is hidden). */
export const MASKED = ['/tmp', '/var/tmp', '/run', '/dev/shm'];
/**
 * A tool's own by-products in the user's home, private too when they exist: npm writes a debug log
 * there for every run (`npx tsx agent.ts`, `npm start`), which would otherwise be refused as a
 * write to the real disk and named a side channel of every such replay.
 */
const byproductDirs = (): string[] => [path.join(homedir(), '.npm', '_logs')];
/** Where files handed in are visible inside. */
export const INSIDE_DIR = '/run/tapedeck';
/** System CA bundles, replaced by the run's CA inside. */
const SYSTEM_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/ssl/cert.pem',
  '/etc/ssl/ca-bundle.pem',
];
/** What strace watches: only failures are printed (-Z), so successful calls cost nothing to report. */
const TRACED = [
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

export interface OsSandboxOptions {
  isolation: Isolation;
  /** The agent's working directory (kept visible inside). */
  cwd: string;
  /** Host folders bound read-write inside, at `target` (default: the same path). */
  writable?: Array<{ source: string; target?: string }>;
  /** Host paths under a private folder (/tmp …) that must stay visible (read-only): scripts, cwd. */
  visible?: string[];
  /** Files handed in, read-only at /run/tapedeck/<name>. */
  files?: Record<string, string | Buffer>;
  /**
   * Host files shown inside with other content, read-only (a Python interpreter's own
   * sitecustomize: sandbox/python/hook.ts): each must exist, since the read-only root takes no new
   * mount point; one that does not, or a link, is left as it is.
   */
  over?: Array<{ target: string; content: string | Buffer }>;
  /** Host names that resolve to 127.0.0.1 inside. */
  hosts?: string[];
  /** The run's CA (PEM): the only trusted root inside. */
  caPem?: string;
  /**
   * The file system inside: 'readonly' (a replay: the real one read-only, private temp folders)
   * or 'shared' (a recording: the real run's own files, writable as outside).
   */
  fs?: 'readonly' | 'shared';
  /**
   * Told once the launcher is spawned, before its init is ready (a replay reads its recording
   * while bubblewrap and the init start on another core).
   */
  onLaunch?: () => void;
}

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

export interface SpawnOptions {
  env: Record<string, string>;
  cwd?: string;
  /** inherit: the sandbox's stdout/stderr (the agent); pipe: 'output' events (services). */
  stdio?: 'inherit' | 'pipe';
  /** Trace refused attempts with strace (when the machine has it). */
  trace?: boolean;
}

export interface SandboxProcess extends EventEmitter {
  /** The pid inside the sandbox's PID namespace. */
  readonly pid: Promise<number>;
  readonly exit: Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    error?: { code?: string; message: string };
  }>;
  /** Signals the process; with `tree`, SIGKILLs it and everything it started (its group and descendants). */
  kill(signal?: NodeJS.Signals, options?: { tree?: boolean }): void;
}

export interface OsSandbox {
  readonly isolation: Isolation;
  /** The launcher's child (bwrap or unshare): its stdout/stderr carry the agent's. */
  readonly child: ChildProcess;
  /** Opens a listener on loopback inside (port 0: any free one); its connections are accepted outside. */
  listen(port?: number, host?: string): Promise<net.Server & { insidePort: number }>;
  /** A socket connected from inside to a loopback port inside (a service's listener). */
  connect(port: number, host?: string): Promise<net.Socket>;
  /**
   * Makes an IP address of another machine (10.0.3.7, fd00::7) the sandbox's own, so that `listen`
   * can serve it; true when it is local inside (loopback always is), false where the sandbox has no
   * keeper for its network namespace (netns.ts) or the address is a name.
   */
  local(address: string): Promise<boolean>;
  /**
   * The address inside for a host name (a recorded service's), written to /etc/hosts inside: a
   * loopback address of its own, or 127.0.0.1 for a name in `hosts`; undefined where /etc/hosts
   * cannot be replaced (no mount namespace: the unshare fallback) or the name is not one.
   * Call before the programs that resolve it start.
   */
  named(name: string): Promise<string | undefined>;
  spawn(command: string[], options: SpawnOptions): SandboxProcess;
  /** Refused attempts traced so far. */
  readonly attempts: OsAttempt[];
  /** The private folders inside (a fresh tmpfs each: /tmp …); none with the network namespace alone. */
  readonly privateDirs: readonly string[];
  /** Folders of the host bound inside those private folders (writable or read-only), as seen inside. */
  readonly hostDirs: readonly string[];
  /** Path inside of a file handed in with `files`. */
  inside(name: string): string;
  close(): Promise<void>;
}

type Message = Record<string, unknown> & { t: string; id?: number };

/** A path under a private folder that must be bound back in to stay visible. */
function underMasked(p: string): boolean {
  return MASKED.some((m) => p === m || p.startsWith(`${m}/`));
}

const within = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);

/**
 * Where the sandbox's mounts show this machine's keys (the seal key, the redaction key file): none
 * of a key that does not exist.
 */
function keysInside(
  shared: boolean,
  visible: ReadonlySet<string>,
  writable: ReadonlyArray<{ source: string; target?: string }>,
): string[] {
  const inside = new Set<string>();
  for (const file of [sealKeyFile(), redactionKeyFile()]) {
    if (!existsSync(file)) continue;
    const key = realpathSync(file);
    if (shared || !underMasked(key) || [...visible].some((v) => within(key, v))) inside.add(key);
    for (const w of writable) {
      const source = existsSync(w.source) ? realpathSync(w.source) : w.source;
      if (within(key, source)) inside.add(path.join(w.target ?? w.source, path.relative(source, key)));
    }
  }
  return [...inside];
}

/**
 * The folders of existing paths among the command's arguments (scripts the agent is run with, and
 * the modules beside them); a file directly in a private folder (/tmp/agent.mjs) alone.
 */
export function pathsIn(argv: string[], cwd: string): string[] {
  const out: string[] = [];
  for (const arg of argv) {
    if (!arg || arg.startsWith('-') || arg.includes('\n')) continue;
    const abs = path.resolve(cwd, arg);
    if (abs.length >= 4096 || !existsSync(abs)) continue;
    const dir = lstatSync(abs).isDirectory() ? abs : path.dirname(abs);
    out.push(MASKED.includes(dir) ? abs : dir);
  }
  return out;
}

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

/** The launcher (bwrap or unshare) ended before its init said it was ready. */
class DidNotStart extends TapedeckError {}

/** Starts the sandbox (its init, not yet the agent). */
export async function openOsSandbox(options: OsSandboxOptions): Promise<OsSandbox> {
  const { isolation } = options;
  if (isolation.level === 'none') {
    throw new TapedeckError('NO_ISOLATION', 'openOsSandbox needs bubblewrap or unshare; this machine has neither');
  }
  // The network namespace held by a keeper outside, where this machine allows it; where the
  // sandbox does not start in it, once more as before (its own namespace, loopback only).
  const keeper = await startNetKeeper(isolation.unshare);
  try {
    try {
      return await openBox(options, keeper);
    } catch (error) {
      if (!keeper || !(error instanceof DidNotStart)) throw error;
      keeper.close();
      keeperFailed();
      return await openBox(options, undefined);
    }
  } catch (error) {
    keeper?.close();
    // A kept probe said this sandbox works and it did not start: the machine changed since. The
    // next probe runs the tools again (a replay does so at once and starts over).
    if (isolation.fromCache && error instanceof DidNotStart) {
      forgetIsolation();
      throw new StaleIsolationError(error);
    }
    throw error;
  }
}

async function openBox(options: OsSandboxOptions, keeper: NetKeeper | undefined): Promise<OsSandbox> {
  const { isolation } = options;
  for (const w of options.writable ?? []) {
    const target = w.target ?? w.source;
    // The read-only root cannot take a new mount point: the place must exist on the real disk.
    if (isolation.level === 'bwrap' && !existsSync(target) && !underMasked(target)) {
      throw new TapedeckError(
        'SANDBOX_FAILED',
        `Cannot mount a writable folder at ${target}: it does not exist on this machine, and the sandbox's read-only file system cannot take a new folder; create it, or run with --isolation none.`,
      );
    }
  }
  const noted = await makeNotedTempDir('tapedeck-os-');
  const tmp = noted.path;
  const inDir = path.join(tmp, 'in');
  await import('node:fs/promises').then((fs) => fs.mkdir(inDir));
  for (const [name, content] of Object.entries(options.files ?? {})) {
    if (name.includes('/') || name.startsWith('.'))
      throw new TapedeckError('BAD_OPTION', `bad sandbox file name ${name}`);
    await writeFile(path.join(inDir, name), content);
  }
  let args: string[];
  let command: string;
  let seccompFd: number | undefined;
  const privateDirs: string[] = [];
  /** The system CA bundles the run's CA stands in for inside. */
  const substituted = new Set<string>();
  const cleanup: Array<() => Promise<unknown>> = [noted.remove];
  /** /etc/hosts inside (bound over the real one with bubblewrap), and the names given an address of their own. */
  const hostsPath = path.join(tmp, 'hosts');
  let hostsBound = false;
  const names = new Map<string, string>();
  if (isolation.level === 'bwrap') {
    command = isolation.bwrap as string;
    const shared = options.fs === 'shared';
    args = [
      ...BWRAP_BASE,
      // In the keeper's namespaces: its network namespace, and this user's ids as outside (the
      // keeper's user namespace maps this user to 0, which bwrap would otherwise give the agent).
      ...(keeper
        ? ['--share-net', '--uid', String(process.getuid?.() ?? 0), '--gid', String(process.getgid?.() ?? 0)]
        : []),
      shared ? '--bind' : '--ro-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      '--dev',
      '/dev',
    ];
    if (!shared)
      for (const m of MASKED)
        if (existsSync(m) && !lstatSync(m).isSymbolicLink()) {
          args.push('--tmpfs', m);
          privateDirs.push(m);
        }
    if (!shared)
      for (const m of byproductDirs())
        if (existsSync(m) && lstatSync(m).isDirectory()) {
          args.push('--tmpfs', m);
          privateDirs.push(m);
        }
    // Paths the agent needs that live in a private folder: bound back, read-only.
    const visible = new Set<string>();
    // tapedeck itself (the init, the preloads) and node run inside too, wherever they are installed.
    const own = [packageRoot(), path.dirname(process.execPath)];
    for (const p of [options.cwd, ...own, ...(options.visible ?? [])]) {
      const real = existsSync(p) ? realpathSync(p) : p;
      if (underMasked(real) && existsSync(real)) visible.add(real);
    }
    if (!shared) for (const p of visible) args.push('--ro-bind', p, p);
    for (const w of options.writable ?? []) args.push('--bind', w.source, w.target ?? w.source);
    // This machine's keys stay outside: an agent that read the seal key could seal any recording as
    // made here; one that read the redaction key could test guesses of every redacted secret
    // against its placeholders. Bound over last, wherever the mounts above show them (a folder
    // bound back or writable can hold one: a home under the project, a project under /tmp).
    for (const inside of keysInside(shared, visible, options.writable ?? []))
      args.push('--ro-bind', '/dev/null', inside);
    args.push('--ro-bind', inDir, shared ? inDir : INSIDE_DIR);
    for (const [i, o] of (options.over ?? []).entries()) {
      if (!existsSync(o.target) || lstatSync(o.target).isSymbolicLink()) continue;
      const file = path.join(tmp, `over-${i}`);
      await writeFile(file, o.content);
      args.push('--ro-bind', file, o.target);
    }
    await writeFile(hostsPath, hostsFile(options.hosts ?? [], names));
    if (existsSync('/etc/hosts') && !lstatSync('/etc/hosts').isSymbolicLink()) {
      args.push('--ro-bind', hostsPath, '/etc/hosts');
      hostsBound = true;
    }
    if (options.caPem) {
      const bundle = path.join(tmp, 'ca.pem');
      await writeFile(bundle, options.caPem);
      for (const b of SYSTEM_BUNDLES) {
        if (existsSync(b) && !lstatSync(b).isSymbolicLink()) {
          args.push('--ro-bind', bundle, b);
          substituted.add(b);
        }
      }
    }
    const program = isolation.seccomp ? seccompProgram() : undefined;
    if (program) {
      const file = path.join(tmp, 'seccomp.bpf');
      await writeFile(file, program);
      const handle = await open(file, 'r');
      cleanup.push(() => handle.close());
      seccompFd = handle.fd;
      // bwrap reads the program from the fd it is given as stdio slot 4.
      args.push('--seccomp', '4');
    }
    args.push('--chdir', options.cwd, '--', process.execPath, INIT);
  } else if (keeper) {
    // Network alone, the keeper's (its loopback is up): the init is root in the keeper's user namespace, as with unshare -r.
    command = process.execPath;
    args = [INIT];
  } else {
    command = isolation.unshare as string;
    // Network alone: the loopback interface starts down; the init brings it up (root in its namespace).
    args = [
      '-r',
      '-n',
      '--',
      '/bin/sh',
      '-c',
      'ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null; exec "$0" "$@"',
      process.execPath,
      INIT,
    ];
  }
  const stdio: Array<'pipe' | 'ipc' | 'ignore' | number> = ['ignore', 'pipe', 'pipe', 'ipc'];
  if (seccompFd !== undefined) stdio.push(seccompFd);
  const launch = keeper ? keeper.enter(command, args) : { command, args };
  const child = spawn(launch.command, launch.args, {
    cwd: options.cwd,
    stdio,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  options.onLaunch?.();
  const waiters = new Map<number, (message: Message, handle?: unknown) => void>();
  const processes = new Map<number, SandboxProcess & EventEmitter>();
  const attempts: OsAttempt[] = [];
  /** Loopback ports inside that something serves: the launcher's listeners and services reached. */
  const insidePorts = new Set<number>();
  /** Addresses of other machines made the sandbox's own (`local`). */
  const madeLocal = new Set<string>();
  const listeners = new Set<net.Server>();
  let hostsWritten: Promise<void> = Promise.resolve();
  let nextId = 1;
  let ended = false;
  const ready = new Promise<void>((resolve, reject) => {
    const failed = (why: string) =>
      reject(new DidNotStart('SANDBOX_FAILED', `The OS sandbox did not start (${command}): ${why}`));
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 4000) stderr += d.toString('utf8');
    });
    child.once('error', (error) => failed(error.message));
    child.once('exit', (code) => failed(stderr.trim() || `exit ${code}`));
    child.on('message', (message: Message) => {
      if (message?.t === 'ready') resolve();
    });
  });
  child.on('message', (message: Message, handle?: unknown) => {
    if (message.t === 'trace') {
      const listening = new Set(Array.isArray(message.listening) ? message.listening.map(Number) : []);
      for (const line of (message.lines as string[]) ?? []) {
        const attempt = parseTraceLine(line);
        if (!attempt) continue;
        // A non-blocking connect in progress is no refusal, unless nothing inside serves that port
        // (tapedeck's own listeners, or one of the agent's tree that listened as it connected) at an
        // address of the sandbox (loopback, or another machine's made its own): elsewhere a connect
        // fails at once (ENETUNREACH).
        if (attempt.error === 'EINPROGRESS') {
          const port = Number(/:(\d+)$/.exec(attempt.target)?.[1]);
          const host = attempt.target.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
          const own = /^(127\.|::1$)/.test(host) || madeLocal.has(host);
          if (insidePorts.has(port) || listening.has(port) || !own) continue;
        }
        // A write to a CA bundle this sandbox put the run's CA in place of: not the real disk's file
        // (a program that appends a CA of its own at start, as some Python set-ups do).
        if (attempt.kind === 'write' && substituted.has(attempt.target)) continue;
        attempts.push({ ...attempt, ...commandOf(message, attempt.pid) });
      }
      return;
    }
    const id = typeof message.id === 'number' ? message.id : -1;
    const proc = processes.get(id);
    if (proc) {
      proc.emit(message.t, message);
      return;
    }
    const waiter = waiters.get(id);
    if (waiter) {
      waiters.delete(id);
      waiter(message, handle);
    }
  });
  child.once('exit', () => {
    ended = true;
    for (const waiter of waiters.values()) waiter({ t: 'error', message: 'the sandbox ended' });
    waiters.clear();
    for (const proc of processes.values()) proc.emit('exit', { t: 'exit', code: null, signal: 'SIGKILL' });
  });
  try {
    await ready;
  } catch (error) {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
    throw error;
  }
  if (keeper) cleanup.push(async () => keeper.close());
  // Stdout/stderr of the launcher are the agent's from here on; the caller reads them.
  child.stdout?.pause();
  child.stderr?.removeAllListeners('data');
  child.stderr?.pause();

  const request = (message: Message) =>
    new Promise<{ message: Message; handle?: unknown }>((resolve) => {
      if (ended) return resolve({ message: { t: 'error', message: 'the sandbox ended' } });
      const id = nextId++;
      waiters.set(id, (m, handle) => resolve({ message: m, handle }));
      child.send({ ...message, id });
    });

  /**
   * Any free port, chosen below the kernel's ephemeral range (from ASIDE_PORTS): a port the kernel
   * picked inside could be one the agent connects to or a service a replay exposes later (ports
   * usually ephemeral where they were opened): the agent's "blocked" connection then reached the
   * launcher's own listener and kept it alive, and a recorded service's port was taken (both seen
   * in CI). Falls back to the kernel's choice.
   */
  const listenAside = async (host: string) => {
    for (let i = 0; i < 16; i++) {
      const port = ASIDE_PORTS.from + Math.floor(Math.random() * (ASIDE_PORTS.to - ASIDE_PORTS.from));
      const answer = await request({ t: 'listen', port, host });
      if (answer.message.t === 'listening' && answer.handle) return answer;
    }
    return undefined;
  };

  // Every bind's target under a private folder: the host's, not the sandbox's own.
  const hostDirs = args.flatMap((a, i) =>
    (a === '--bind' || a === '--ro-bind') && underMasked(args[i + 2] ?? '') ? [args[i + 2] as string] : [],
  );
  const box: OsSandbox = {
    isolation,
    child,
    attempts,
    privateDirs,
    hostDirs,
    inside: (name) => `${options.fs === 'shared' ? inDir : INSIDE_DIR}/${name}`,
    async listen(port = 0, host = '127.0.0.1') {
      let answer = port === 0 ? await listenAside(host) : undefined;
      answer ??= await request({ t: 'listen', port, host });
      const { message, handle } = answer;
      if (message.t !== 'listening' || !handle) {
        throw new TapedeckError(
          'SANDBOX_FAILED',
          `Cannot listen on ${host}:${port} inside the sandbox: ${String(message.message)}`,
        );
      }
      const server = handle as net.Server & { insidePort: number };
      server.insidePort = Number(message.port);
      insidePorts.add(server.insidePort);
      // Closed with the sandbox whoever forgot it: a listener left open keeps this process alive
      // (a replay whose setup failed after a listen printed its error and never exited).
      listeners.add(server);
      server.once('close', () => listeners.delete(server));
      return server;
    },
    async connect(port, host = '127.0.0.1') {
      insidePorts.add(port);
      const { message, handle } = await request({ t: 'connect', port, host });
      if (message.t !== 'connected' || !handle) {
        const error = new Error(
          `connect ${String(message.code ?? 'ECONNREFUSED')} ${host}:${port} (inside the sandbox)`,
        );
        throw Object.assign(error, { code: message.code ?? 'ECONNREFUSED' });
      }
      const socket = handle as net.Socket;
      socket.resume();
      return socket;
    },
    async local(address) {
      if (!keeper) return /^(127\.|::1$|\[::1\]$)/.test(address);
      const made = await keeper.local(address);
      const ip = nonLoopback(address);
      if (made && ip) madeLocal.add(ip.address);
      return made;
    },
    named(name) {
      const host = name.toLowerCase().replace(/\.$/, '');
      if (!hostsBound || !HOST_NAME.test(host) || host === 'localhost') return Promise.resolve(undefined);
      if ((options.hosts ?? []).some((h) => h.toLowerCase() === host)) return Promise.resolve('127.0.0.1');
      const known = names.get(host);
      if (known) return Promise.resolve(known);
      const taken = new Set(names.values());
      const real = realHosts();
      let n = names.size + 1;
      let address = namedAddress(n);
      while (taken.has(address) || new RegExp(`^\\s*${address.replaceAll('.', '\\.')}\\s`, 'm').test(real))
        address = namedAddress(++n);
      names.set(host, address);
      // One rewrite after another: the last one written holds every name.
      const written = hostsWritten.then(() => writeFile(hostsPath, hostsFile(options.hosts ?? [], names)));
      hostsWritten = written.catch(() => undefined);
      return written.then(
        () => address,
        () => undefined,
      );
    },
    spawn(commandLine, spawnOptions) {
      const id = nextId++;
      const proc = new EventEmitter() as SandboxProcess & EventEmitter;
      let pidResolve: (pid: number) => void = () => {};
      Object.assign(proc, {
        pid: new Promise<number>((resolve) => {
          pidResolve = resolve;
        }),
        exit: new Promise((resolve) => {
          proc.once('exit', (m: Message) => {
            processes.delete(id);
            resolve({
              code: (m.code as number | null) ?? null,
              signal: (m.signal as NodeJS.Signals | null) ?? null,
              ...(m.error ? { error: m.error } : {}),
            });
          });
        }),
        kill: (signal?: NodeJS.Signals, options?: { tree?: boolean }) => {
          if (!ended)
            child.send({ t: 'kill', id, signal: signal ?? 'SIGTERM', ...(options?.tree ? { tree: true } : {}) });
        },
      });
      proc.once('spawned', (m: Message) => pidResolve(Number(m.pid)));
      proc.on('output', (m: Message) => proc.emit(m.stream as string, Buffer.from(String(m.b64), 'base64')));
      processes.set(id, proc);
      const trace =
        spawnOptions.trace && isolation.strace
          ? { strace: isolation.strace, syscalls: TRACED, names: isolation.straceNames === true }
          : undefined;
      child.send({
        t: 'spawn',
        id,
        command: commandLine,
        env: spawnOptions.env,
        cwd: spawnOptions.cwd ?? options.cwd,
        stdio: spawnOptions.stdio ?? 'inherit',
        ...(trace ? { trace } : {}),
      });
      return proc;
    },
    async close() {
      if (!ended && child.connected) {
        child.send({ t: 'bye' });
        // The timer must not outlive the wait: a pending one kept every replay's process 2 s after its work.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise((r) => child.once('exit', r)),
          new Promise((r) => {
            timer = setTimeout(r, 2000);
          }),
        ]);
        clearTimeout(timer);
      }
      if (child.exitCode === null) child.kill('SIGKILL');
      for (const server of listeners) {
        try {
          server.close();
        } catch {}
      }
      listeners.clear();
      for (const c of cleanup.reverse()) await c().catch(() => undefined);
    },
  };
  return box;
}

/** The trace message's command lines (the init reads /proc/<pid>/cmdline inside). */
function commandOf(message: Message, pid: number): { command?: string } {
  const commands = message.commands as Record<string, string> | undefined;
  const command = commands?.[String(pid)];
  return command ? { command } : {};
}

/** A host name as /etc/hosts takes it. */
const HOST_NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/i;

/** The n-th (from 1) loopback address a named service gets inside: 127.77.0.1, 127.77.0.2, … */
function namedAddress(n: number): string {
  return `127.77.${Math.floor(n / 256) % 256}.${n % 256}`;
}

function realHosts(): string {
  try {
    return readFileSync('/etc/hosts', 'utf8');
  } catch {
    return '';
  }
}

/**
 * /etc/hosts inside: tapedeck's names first — each in `hosts` at 127.0.0.1, each in `named` at its
 * own address — then the real file less those names (a name the real file places elsewhere would
 * otherwise resolve there too, to an address nothing serves inside).
 */
function hostsFile(hosts: string[], named: ReadonlyMap<string, string> = new Map()): string {
  const ours = new Map<string, string>();
  for (const name of hosts) if (HOST_NAME.test(name)) ours.set(name.toLowerCase(), '127.0.0.1');
  for (const [name, address] of named) ours.set(name, address);
  const lines = ['# tapedeck sandbox: these hosts are served inside the sandbox'];
  for (const [name, address] of ours) lines.push(`${address} ${name}`);
  lines.push("# this machine's own");
  for (const line of realHosts().trimEnd().split('\n')) {
    const [address, ...fields] = line.replace(/#.*/, '').trim().split(/\s+/);
    const kept = fields.filter((f) => !ours.has(f.toLowerCase()));
    if (kept.length === fields.length) lines.push(line);
    else lines.push(`# (served inside) ${line}`, ...(kept.length > 0 ? [`${address} ${kept.join(' ')}`] : []));
  }
  return `${lines.join('\n')}\n`;
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
