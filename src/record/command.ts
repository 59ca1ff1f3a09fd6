// recordCommand: runs an agent command as a child process with the capture preload and writes
// its recording. Node children and grandchildren inherit the preload through NODE_OPTIONS and
// stream events over a Unix socket whose path is passed in the environment.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { withKeptEnv } from '../../sandbox/kept-env.js';
import { noteLeftover } from '../../sandbox/leftovers.js';
import { onLines } from '../../sandbox/ndjson.js';
import type { Isolation } from '../../sandbox/os/detect.js';
import { nameServiceProbes } from '../../sandbox/os/trace.js';
import { unwatchedProgram } from '../../sandbox/preload/shared-commands.mjs';
import { unhookedPython } from '../../sandbox/preload/shared-python.mjs';
import { withPythonHook } from '../../sandbox/python/hook.js';
import { packagePath } from '../package.js';
import { databaseAddresses, databaseSockets } from '../postgres/connect.js';
import {
  loadsCode,
  regionOf,
  removeRecordingFolder,
  TapedeckError,
  type UnhookedPython,
  type UnrecordedConnection,
  type UnwatchedProgram,
} from '../recording/index.js';
import type { RecordSandbox } from './isolate.js';
import { openRecording, type RecordOptions, shipRecording } from './recorder.js';
import { samplingOf } from './sampling.js';
import { agentSdkVersions } from './sdk-versions.js';
import { SpoolReader } from './spool.js';

const POLL_MS = 20;
/**
 * The agent has paused when a whole poll found nothing new: an agent waiting on its model or an
 * API (tens of ms or more) has its events processed during the wait, not all at its exit, where
 * they were the largest part of record's cost after the agent ended (~75 ms for 200 calls). An
 * agent in a burst of fast calls sends something every poll and is not competed with.
 */
const IDLE_MS = POLL_MS;
const BACKLOG_MAX = 16 << 20;

/** Absolute path of the capture preload (plain ESM, loaded with --import). */
export const RECORD_PRELOAD = packagePath('src/record/preload/record.mjs');

export interface RecordCommandOptions extends RecordOptions {
  /** The agent command, e.g. ['node', 'agent.mjs']. */
  command: string[];
  /** Extra environment for the agent. */
  env?: Record<string, string>;
  /** How the agent's stdio is connected (default 'inherit'). */
  stdio?: 'inherit' | 'ignore' | 'pipe';
  /** Receives the child once spawned (e.g. to read piped output). */
  onSpawn?: (child: ChildProcess) => void;
  /**
   * Run the agent's tree in the OS sandbox with a recording proxy as its only way out, so the
   * HTTP(S) calls of every process (curl, Python, a Go binary) become steps (bubblewrap needed).
   */
  isolate?: boolean;
  /** Said before the agent runs: e.g. a kept isolation probe the machine no longer gives (probed again). */
  onWarning?: (message: string) => void;
}

export interface RecordCommandResult {
  /** The recording folder ('' when the run was not sampled). */
  dir: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** The signal to tapedeck that was forwarded to the agent (the recording is marked interrupted). */
  interrupted?: NodeJS.Signals;
  recorded: boolean;
  steps: number;
  /** --isolate: ways out the kernel refused (named by strace): calls the recording could not hold. */
  sideChannels?: string[];
  /** Tool calls the model decided that left no step (a side channel the capture did not see). */
  silentToolCalls?: string[];
  /** Connections no capture layer records (an HTTP upgrade but a WebSocket's, HTTP/2, Redis…), as in the manifest's `unrecorded`. */
  unrecorded?: UnrecordedConnection[];
  /** Python programs started without tapedeck's hook (their values unrecorded), as in the manifest's `unhooked`. */
  unhooked?: UnhookedPython[];
  /** Programs started that reach a network service unseen (curl, psql), as in the manifest's `unwatched`. */
  unwatched?: UnwatchedProgram[];
  /** What the recording lacks of the world (files under --fs whose names a recording cannot hold). */
  worldWarnings?: string[];
}

function entryOf(command: string[], cwd: string): string | undefined {
  const script = command.slice(1).find((arg) => /\.(m|c)?(j|t)sx?$/.test(arg));
  return script === undefined ? undefined : path.resolve(cwd, script);
}

function quoteNodeOption(value: string): string {
  return /[\s"\\]/.test(value) ? `"${value.replace(/(["\\])/g, '\\$1')}"` : value;
}

/** NODE_OPTIONS that load the record preload, after the given ones. */
export function withRecordPreload(nodeOptions: string | undefined): string {
  return [nodeOptions ?? '', `--import=${quoteNodeOption(RECORD_PRELOAD)}`].filter((x) => x !== '').join(' ');
}

/** Runs the agent inside the record sandbox; its output comes through the sandbox's own stdout/stderr. */
function runInSandbox(
  isolated: RecordSandbox,
  command: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; stdio: 'inherit' | 'ignore' | 'pipe' },
  onSpawn?: (child: ChildProcess) => void,
): { child: ChildProcess; exit: Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }> } {
  const { child } = isolated.box;
  for (const [stream, to] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ] as const) {
    if (options.stdio === 'inherit') stream?.pipe(to, { end: false });
    else if (options.stdio === 'ignore') stream?.resume();
  }
  onSpawn?.(child);
  const env = Object.fromEntries(Object.entries(options.env).filter((e): e is [string, string] => e[1] !== undefined));
  const proc = isolated.box.spawn(command, { env, cwd: options.cwd, stdio: 'inherit', trace: true });
  const exit = proc.exit.then((e) => {
    if (e.error) {
      throw new TapedeckError(
        'COMMAND_FAILED',
        `cannot start ${JSON.stringify(command[0])}: ${e.error.code === 'ENOENT' ? 'command not found' : e.error.message}`,
      );
    }
    return { exitCode: e.code, signal: e.signal };
  });
  return { child, exit };
}

function runChild(
  command: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; stdio: 'inherit' | 'ignore' | 'pipe' },
  onSpawn?: (child: ChildProcess) => void,
): Promise<{ child: ChildProcess; exit: Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }> }> {
  const [file, ...args] = command;
  if (file === undefined)
    throw new TapedeckError('NO_COMMAND', 'no agent command given: tapedeck record -- node agent.mjs');
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: options.stdio });
    const exit = new Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>((done) => {
      child.once('exit', (exitCode, signal) => done({ exitCode, signal }));
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        new TapedeckError(
          'COMMAND_FAILED',
          `cannot start ${JSON.stringify(file)}: ${error.code === 'ENOENT' ? 'command not found' : error.message}`,
          { cause: error },
        ),
      );
    });
    child.once('spawn', () => {
      onSpawn?.(child);
      resolve({ child, exit });
    });
  });
}

/** The start gate's token in the spool folder (not a spool file: the spool reader reads `.ndjson` files only). */
const START_GATE_TOKEN = 'start-gate';

/**
 * Whether the agent may start while the world's first snapshot is taken: its first process is Node
 * (the record preload then holds its code until the snapshot is done, src/record/preload/record.mjs)
 * and nothing of the user's loads before that preload (--require, --import or a loader, in the
 * command or NODE_OPTIONS). Anything else starts after the snapshot, as it always did.
 */
function startsGated(options: RecordCommandOptions): boolean {
  const [file, ...args] = options.command;
  if (file === undefined || options.isolate === true) return false;
  if (options.fsRoot === undefined && options.dbUrl === undefined) return false;
  if (file !== process.execPath && !/^node(?:js)?$/.test(path.basename(file))) return false;
  const preloads = /(?:^|\s)(?:-r|--require|--import|--loader|--experimental-loader)(?:[=\s]|$)/;
  const nodeOptions = options.env?.NODE_OPTIONS ?? process.env.NODE_OPTIONS ?? '';
  return !preloads.test(nodeOptions) && !args.some((a) => preloads.test(a));
}

/** Variables of the terminal session, not of the agent's configuration: not worth naming in a replay. */
const SESSION_ENV =
  /^(?:_|PWD|OLDPWD|SHLVL|HOME|USER|LOGNAME|SHELL|MAIL|HOSTNAME|HOSTTYPE|MACHTYPE|OSTYPE|TERM(?:_.*)?|COLORTERM|COLUMNS|LINES|LANG|LANGUAGE|LC_.*|TZ|DISPLAY|WAYLAND_.*|XDG_.*|DBUS_.*|SSH_.*|GPG_.*|TMUX.*|STY|WINDOW|LS_COLORS|LESS.*|PAGER|EDITOR|VISUAL|HIST.*|PS[1-4]|PROMPT_COMMAND|MOTD_SHOWN|INVOCATION_ID|JOURNAL_STREAM|SYSTEMD_.*|VSCODE_.*|TERMINAL_.*|ITERM_.*|WT_.*|WSL.*|npm_.*|NODE_.*|NVM_.*|INIT_CWD|COREPACK_.*|TAPEDECK_.*|PGAPPNAME)$/;

/** The names of the agent's inherited variables a replay should have too (sorted; values never kept). */
function inheritedEnvNames(env: NodeJS.ProcessEnv, explicit: Record<string, string> | undefined): string[] {
  return Object.keys(env)
    .filter((name) => env[name] !== undefined && !(explicit && name in explicit))
    .filter((name) => /^[A-Za-z_][A-Za-z0-9_]{0,255}$/.test(name) && !SESSION_ENV.test(name) && !loadsCode(name))
    .sort()
    .slice(0, 4096);
}

/**
 * Records one run of `command`.
 *
 * @example
 * const { dir } = await recordCommand({ command: ['node', 'agent.mjs'], fsRoot: 'work', dbUrl: process.env.DATABASE_URL });
 */
export async function recordCommand(options: RecordCommandOptions): Promise<RecordCommandResult> {
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const stdio = options.stdio ?? 'inherit';
  const baseEnv = { ...process.env, ...options.env };
  if (!samplingOf(options.sample).start()) {
    const { exit } = await runChild(options.command, { cwd, env: baseEnv, stdio }, options.onSpawn);
    const { exitCode, signal } = await exit;
    return { dir: '', exitCode, signal, recorded: false, steps: 0 };
  }
  const gated = startsGated(options);
  const entry = entryOf(options.command, cwd);
  const active = await openRecording(
    { ...options, cwd },
    {
      command: options.command,
      cwd,
      ...(entry ? { entry } : {}),
      // The env given explicitly (not the inherited one) is what a replay needs to run the agent
      // the same way: where its workspace is, which prompt file it reads. Secrets are redacted.
      ...(options.env && Object.keys(options.env).length > 0 ? { env: options.env } : {}),
      // The inherited variables only by name: their values may be secrets.
      envNames: inheritedEnvNames(baseEnv, options.env),
    },
    // The agent's SDK versions, time zone and locale are looked up once it is starting (below).
    { sdkVersions: {} },
    { worldLater: gated },
  );
  const { session } = active;
  // The agent's env is ours (known to the redactor already) and the given one: the secrets of both
  // are replaced wherever the agent quotes them (a prompt, a tool's arguments, a URL).
  if (options.env) active.writer.redactor.learnEnv(options.env);
  const socketPath = path.join(os.tmpdir(), `tapedeck-${process.pid}-${randomBytes(4).toString('hex')}.sock`);
  // A killed recorder cannot remove its socket and spool: the next tapedeck command does.
  const forgetSocket = noteLeftover({ kind: 'path', path: socketPath });
  const sockets = new Set<net.Socket>();
  /** Connections accepted so far (socketsClosed waits until a turn of the loop brings none). */
  let accepted = 0;
  // A world of files alone: the agent skips the round trip of a step barrier at which nothing
  // under the root changed, or sends the few files that did, read itself
  // (src/record/preload/record-quiet.mjs). Not with a database (its changes are not seen that
  // way), nor with onEvent (awaited while the agent waits at each one), nor under --isolate (the
  // recording proxy holds the calls).
  const quietWorld =
    options.fsRoot !== undefined &&
    active.world?.manifest?.db === undefined &&
    options.onEvent === undefined &&
    options.isolate !== true
      ? { root: path.resolve(cwd, options.fsRoot), exclude: [path.resolve(active.writer.dir)] }
      : undefined;
  // Events arrive through the spool (one file per agent process); the socket carries only
  // sync barriers. Without world capture nothing needs the session live, so received lines wait
  // in a backlog that is processed when the agent pauses (nothing new for IDLE_MS), when it grows
  // past BACKLOG_MAX, at a barrier's round trip, or at exit: the agent does not compete with the
  // recorder for CPU mid-burst. So with a world of files alone: every boundary at which the
  // recorder must drain the world is a round trip, and the rest carry what changed.
  const deferred = options.onEvent === undefined && (!active.syncWorld || quietWorld !== undefined);
  // Inside the recording folder, which world capture never snapshots.
  const spoolDir = path.join(active.writer.dir, '.spool');
  const forgetSpool = noteLeftover({ kind: 'path', path: path.resolve(spoolDir) });
  mkdirSync(spoolDir, { recursive: true });
  if (gated) writeFileSync(path.join(spoolDir, START_GATE_TOKEN), '');
  // The agent's events are spooled before redaction: encrypted with a key that lives only in
  // this process and the agent's environment, so a kill leaves no secret readable on disk.
  const spoolKey = randomBytes(32).toString('hex');
  const spool = new SpoolReader(spoolDir, spoolKey);
  const noReply = () => {};
  const backlog: Array<{ line: string; reply: (answer: { ack: number }) => void }> = [];
  let backlogBytes = 0;
  let lastData = Date.now();
  const drainBacklog = () => {
    for (const { line, reply } of backlog.splice(0)) {
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      session.accept(message, reply);
    }
    backlogBytes = 0;
  };
  const pullSpool = (): number => {
    const lines = spool.read();
    for (const line of lines) {
      backlog.push({ line, reply: noReply });
      backlogBytes += line.length;
    }
    return lines.length;
  };
  const poll = setInterval(() => {
    const now = Date.now();
    if (pullSpool() > 0) lastData = now;
    if (backlog.length === 0) return;
    if (!deferred || backlogBytes > BACKLOG_MAX || now - lastData >= IDLE_MS) drainBacklog();
  }, POLL_MS);
  const server = net.createServer((socket) => {
    sockets.add(socket);
    accepted++;
    const reply = (answer: { ack: number }) => {
      if (!socket.destroyed) socket.write(`${JSON.stringify(answer)}\n`);
    };
    onLines(socket, (lines) => {
      let urgent = !deferred;
      // Whatever the agent spooled before this barrier is handled before it.
      pullSpool();
      for (const line of lines) {
        backlog.push({ line, reply });
        backlogBytes += line.length;
        if (line.startsWith('{"t":"sync"') || line.includes('"t":"sync"')) urgent = true;
      }
      if (urgent || backlogBytes > BACKLOG_MAX) drainBacklog();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      if (sockets.size === 0) for (const done of closing.splice(0)) done();
    });
  });
  /** Resolves when every agent socket is closed (read to the end), or after `ms`. */
  const closing: Array<() => void> = [];
  const socketsClosed = async (ms: number) => {
    // A connection the agent made before it exited may still wait in a listener's backlog: the
    // exit is reported in the same turn of the loop (under --isolate, by the launcher's message,
    // which can be handled before the accept). Poll-phase events are all handled before a
    // setImmediate: a few turns, until no new connection came in one.
    for (let turns = 0; turns < 5; turns++) {
      const before = accepted;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (accepted === before) break;
    }
    await new Promise<void>((resolve) => {
      if (sockets.size === 0) return resolve();
      const timer = setTimeout(resolve, ms);
      closing.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  };
  const cleanup = () => {
    clearInterval(poll);
    spool.close();
    rmSync(spoolDir, { recursive: true, force: true });
    server.close();
    for (const socket of sockets) socket.destroy();
    if (existsSync(socketPath)) rmSync(socketPath, { force: true });
    forgetSpool();
    forgetSocket();
  };
  let result: { exitCode: number | null; signal: NodeJS.Signals | null } = { exitCode: null, signal: null };
  let interruptedBy: NodeJS.Signals | undefined;
  let isolated: RecordSandbox | undefined;
  let sideChannels: string[] | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
    // The databases' Unix sockets, which the OS sandbox refuses: a connection to one goes to its door.
    const dbSockets = options.isolate ? databaseSockets([options.dbUrl, ...Object.values(baseEnv)]) : [];
    if (options.isolate) {
      let syncs = 0;
      // The OS sandbox, its proxy and CA load only for --isolate.
      const [{ chooseIsolation, StaleIsolationError }, { openRecordSandbox, agentTrust }] = await Promise.all([
        import('../../sandbox/os/detect.js'),
        import('./isolate.js'),
      ]);
      const open = (isolation: Isolation) =>
        openRecordSandbox({
          isolation,
          cwd,
          command: options.command,
          tmp: spoolDir,
          databases: databaseAddresses([options.dbUrl, ...Object.values(baseEnv)]),
          dbSockets,
          urls: Object.values(baseEnv).filter((v): v is string => typeof v === 'string'),
          upstreamCa: agentTrust(baseEnv),
          sink: {
            syncWorld: active.syncWorld,
            send(message) {
              // What the agent's processes spooled before this call is ahead of it: a child's hello
              // names its env's secrets, which the proxy's exchange must be redacted with.
              pullSpool();
              backlog.push({ line: JSON.stringify(message), reply: noReply });
              backlogBytes += 200;
              if (!deferred) drainBacklog();
            },
            sync(reason) {
              return new Promise<void>((resolve) => {
                // Whatever the agent spooled before this call is handled before its barrier.
                pullSpool();
                backlog.push({ line: JSON.stringify({ t: 'sync', n: -++syncs, reason }), reply: () => resolve() });
                drainBacklog();
              });
            },
          },
        });
      try {
        isolated = await open(chooseIsolation('bwrap'));
      } catch (error) {
        // The sandbox did not start with the isolation an earlier process found: the probe is
        // forgotten, the machine probed again, and the sandbox opened with what it gives now (the
        // agent has not started yet), or a one-line NO_ISOLATION.
        if (!(error instanceof StaleIsolationError)) throw error;
        options.onWarning?.(`${error.message}; probing the machine again`);
        isolated = await open(chooseIsolation('bwrap'));
      }
      const inside = isolated;
      inside.ipcListener.on('connection', (socket: net.Socket) => server.emit('connection', socket));
    }
    const nodeOptions = withRecordPreload(baseEnv.NODE_OPTIONS);
    // Python processes of the tree record their values too (sandbox/python/hook.ts).
    const plainEnv: NodeJS.ProcessEnv = withPythonHook({
      ...baseEnv,
      NODE_OPTIONS: nodeOptions,
      TAPEDECK_RECORD_IPC: isolated ? isolated.ipcAddress : socketPath,
      TAPEDECK_RECORD_SPOOL: spoolDir,
      TAPEDECK_RECORD_SPOOL_KEY: spoolKey,
      // The agent's database sessions carry this run's name: a parallel recording on the same
      // database leaves them out of its changes (an application_name the agent sets itself wins).
      ...(active.world?.dbApplicationName
        ? {
            PGAPPNAME: [active.world.dbApplicationName, baseEnv.PGAPPNAME].filter(Boolean).join(' '),
          }
        : {}),
      TAPEDECK_RECORD_OPTIONS: JSON.stringify({
        syncWorld: active.syncWorld,
        maxBody: options.maxBodyBytes ?? -1,
        nondeterminism: options.nondeterminism ?? true,
        ...(options.fsRoot === undefined ? {} : { fsRoot: path.resolve(cwd, options.fsRoot) }),
        ...(quietWorld === undefined ? {} : { quietWorld }),
        ...(isolated ? { proxy: isolated.proxyUrl, doors: isolated.doors, dbSockets } : {}),
        // The first process's own code waits for the world's first snapshot (startsGated): the
        // process that takes this token from the spool folder.
        ...(gated ? { gate: START_GATE_TOKEN } : {}),
      }),
    });
    // The agent's own process is unnamed (sandbox/preload/shared-process.mjs), whatever name the
    // recorder itself inherited.
    delete plainEnv.TAPEDECK_PROCESS;
    // Processes the agent starts with an env of their own keep what is tapedeck's in it.
    const env = withKeptEnv(baseEnv, isolated ? isolated.env(plainEnv) : plainEnv);
    // The agent's own program may be a Python run without the hook (python -S agent.py): said.
    const unhookedAgent = unhookedPython(options.command, { covered: isolated?.pythonsCovered, PATH: env.PATH, cwd });
    if (unhookedAgent) session.unhooked.see(unhookedAgent);
    // So may it be a program whose calls only --isolate records (tapedeck record -- curl …).
    const unwatchedAgent = isolated ? undefined : unwatchedProgram(options.command, { PATH: env.PATH, cwd });
    if (unwatchedAgent !== undefined) session.unwatched.see({ program: unwatchedAgent });
    // Gated: the world's first snapshot is taken while the agent's Node starts, and its answer
    // to the agent's `start` barrier lets the agent's own code run.
    let worldStarted: () => void = () => {};
    session.holdStart(new Promise<void>((resolve) => (worldStarted = resolve)));
    const { child, exit } = isolated
      ? runInSandbox(isolated, options.command, { cwd, env, stdio }, options.onSpawn)
      : await runChild(options.command, { cwd, env, stdio }, options.onSpawn);
    try {
      await active.startWorld();
    } catch (error) {
      child.kill('SIGKILL');
      await exit.catch(() => {});
      throw error;
    } finally {
      worldStarted();
    }
    // The packages the agent loads, and its time zone and locale (from its env: the one given,
    // else ours), as a replay compares and sets them: looked up while the agent's Node starts on
    // the other core, not before it (~25 ms: package.json files, ICU's zone data).
    active.writer.setManifest({
      runtime: { ...active.writer.manifest.runtime, sdkVersions: agentSdkVersions(entry, cwd), ...regionOf(baseEnv) },
    });
    active.writer.append({
      type: 'run.started',
      stepId: 0,
      payload: { command: options.command, cwd, ...(child.pid === undefined ? {} : { pid: child.pid }) },
    });
    // Ctrl-C / SIGTERM to tapedeck goes to the agent, and the recording is closed as interrupted;
    // a second one means it: the agent is killed.
    let interrupted: NodeJS.Signals | undefined;
    const forward = (signal: NodeJS.Signals) => {
      child.kill(interrupted === undefined ? signal : 'SIGKILL');
      interrupted ??= signal;
    };
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    try {
      result = await exit;
    } finally {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
    }
    // Everything the child wrote is in the kernel; wait for its sockets to be read to the end.
    await socketsClosed(2000);
    await isolated?.settle();
    isolated?.flushTurns();
    pullSpool();
    drainBacklog();
    const attempts = isolated && nameServiceProbes(isolated.attempts());
    sideChannels = isolated &&
      attempts && [
        ...isolated.notes,
        ...attempts.ways.map(
          (a) => `${a.kind} ${a.target} (${a.error})${a.command ? ` by ${a.command.slice(0, 120)}` : ''}`,
        ),
        ...(attempts.note === undefined ? [] : [attempts.note]),
      ];
    const ok = result.exitCode === 0;
    const how = result.signal ? `ended by ${result.signal}` : `exited with code ${result.exitCode}`;
    // The last step the interrupted run made is counted once every message read is handled.
    if (interrupted) await session.idle();
    await active.finish({
      status: interrupted ? 'interrupted' : ok ? 'complete' : 'incomplete',
      exitCode: result.exitCode,
      signal: result.signal,
      ...(interrupted
        ? {
            manifest: {
              stopped: {
                reason: 'interrupted' as const,
                signal: interrupted,
                lastStep: session.steps,
                doing: `given ${interrupted}, and it ${how}`,
              },
            },
          }
        : {}),
    });
    if (interrupted) interruptedBy = interrupted;
  } catch (error) {
    await active.finish({ status: 'failed', exitCode: result.exitCode, signal: result.signal }).catch(() => {});
    // An agent that never started recorded nothing: a mistyped command leaves no folder behind.
    if (error instanceof TapedeckError && error.code === 'COMMAND_FAILED' && session.steps === 0)
      await removeRecordingFolder(active.writer.dir);
    throw error;
  } finally {
    await isolated?.close();
    cleanup();
  }
  // Shipped to a store when asked; a recording that cannot be pushed stays where it is.
  const dir = options.store === undefined ? active.writer.dir : await shipRecording(active.writer.dir, options.store);
  const silentToolCalls = session.toolCalls.warnings({ database: options.dbUrl !== undefined });
  const unrecorded = session.connections.list();
  const unhooked = session.unhooked.list();
  const unwatched = session.unwatched.list();
  const worldWarnings = active.world?.warnings() ?? [];
  return {
    dir,
    ...(interruptedBy ? { interrupted: interruptedBy } : {}),
    exitCode: result.exitCode,
    signal: result.signal,
    recorded: true,
    steps: session.steps,
    ...(sideChannels && sideChannels.length > 0 ? { sideChannels } : {}),
    ...(silentToolCalls.length > 0 ? { silentToolCalls } : {}),
    ...(unrecorded.length > 0 ? { unrecorded } : {}),
    ...(unhooked.length > 0 ? { unhooked } : {}),
    ...(unwatched.length > 0 ? { unwatched } : {}),
    ...(worldWarnings.length > 0 ? { worldWarnings } : {}),
  };
}
