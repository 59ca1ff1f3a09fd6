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
// The launcher's arguments are built in launcher.ts, strace's lines read in trace.ts, /etc/hosts
// inside written by hosts.ts.
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
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import type net from 'node:net';
import path from 'node:path';
import { TapedeckError } from '../../src/recording/index.js';
import { makeNotedTempDir } from '../leftovers.js';
import { forgetIsolation, type Isolation, StaleIsolationError } from './detect.js';
import { HOST_NAME, hostsFile, namedAddress, realHosts } from './hosts.js';
import { INSIDE_DIR, launcher, underMasked } from './launcher.js';
import { keeperFailed, type NetKeeper, nonLoopback, startNetKeeper, untilOr } from './netns.js';
import { commandOf, type OsAttempt, parseTraceLine, TRACED } from './trace.js';

/** Where the sandbox's own listeners go inside: below Linux's ephemeral range (32768-60999). */
const ASIDE_PORTS = { from: 20_000, to: 30_000 };
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
      await keeper.close();
      keeperFailed();
      return await openBox(options, undefined);
    }
  } catch (error) {
    await keeper?.close();
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
  const cleanup: Array<() => Promise<unknown>> = [noted.remove];
  /** /etc/hosts inside (bound over the real one with bubblewrap), and the names given an address of their own. */
  const hostsPath = path.join(tmp, 'hosts');
  const names = new Map<string, string>();
  const { command, args, seccompFd, privateDirs, substituted, hostsBound } = await launcher(options, keeper, {
    tmp,
    inDir,
    hostsPath,
    cleanup,
  });
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
  if (keeper) cleanup.push(() => keeper.close());
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
      // Resolved once the launcher has exited and been reaped: a caller that lists its children
      // after close() finds none of ours (a killed one not yet waited for is still listed).
      const gone = new Promise((r) => {
        if (child.exitCode !== null || child.signalCode !== null) r(undefined);
        else child.once('exit', r);
      });
      if (!ended && child.connected) {
        child.send({ t: 'bye' });
        await untilOr(gone, 2000);
      }
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await untilOr(gone, 2000);
      }
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
