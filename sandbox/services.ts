// biome-ignore-all lint/suspicious/noTemplateCurlyInString: service settings hold ${port}-style placeholders on purpose
// Sandboxed services: the user's own APIs re-hosted for a replay, against the sandbox database
// and files. A command service runs under the service preload (memfs over the recorded fs root, no
// connection but the sandbox database and its own port) and, when the replay has an OS sandbox
// (sandbox/os), inside one of its own with the agent's isolation: the real file system read-only,
// private temp folders, no network but the sandbox database's relay (and the recorded database's
// address, routed to it) — so a service that shells out or is not Node reaches nothing real
// either. An image service runs through testcontainers (service-image.ts). Either gets its settings'
// placeholders filled in (service-settings.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ServiceConfig } from '../src/config/index.js';
import { packagePath } from '../src/package.js';
import { TapedeckError } from '../src/recording/index.js';
import type { Isolation } from './os/detect.js';
import { pathsIn } from './os/launcher.js';
import { type OsSandbox, openOsSandbox, type SandboxProcess } from './os/sandbox.js';
import type { HostPort } from './protocol.js';
import { startContainer } from './service-image.js';
import {
  fillPlaceholders,
  isImage,
  type SandboxService,
  type ServiceValues,
  serviceName,
  serviceOrigin,
} from './service-settings.js';

/** Absolute path of the sandboxed-service preload, for `node --import`. */
export const SERVICE_PRELOAD = packagePath('sandbox/preload/service.mjs');
/** How a command service is held in: where its report goes, what it may reach, what is rerouted. */
export interface ServiceIsolation {
  /** Folder for the service's preload config and report (the replay's temp folder). */
  dir: string;
  fsRoot?: string;
  /** The replay's fs seed (the preload's format), so the service sees the sandbox's files. */
  seedFile?: string;
  /** Addresses it may connect to (the sandbox database, the relay). */
  allow: HostPort[];
  /** Addresses rerouted (the recorded database's host:port to the relay). */
  routes: Array<{ from: HostPort; to: HostPort }>;
  /** The OS sandbox level to start command services in (the replay's); absent or 'none': the preload alone. */
  os?: Isolation;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a service and waits until it is ready (its `ready` path answers 2xx, or its port accepts
 * connections). Close it when done.
 */
export async function startService(
  config: ServiceConfig,
  values: ServiceValues,
  isolation: ServiceIsolation,
): Promise<SandboxService> {
  return isImage(config) ? startContainer(config, values) : startCommand(config, values, isolation);
}

async function startCommand(
  config: Extract<ServiceConfig, { command: unknown }>,
  values: ServiceValues,
  isolation: ServiceIsolation,
): Promise<SandboxService> {
  const name = serviceName(config);
  const origin = serviceOrigin(config, values);
  const port = await freePort();
  const fill = (text: string, field: string) => fillPlaceholders(text, { ...values, port }, { service: name, field });
  const usesPort = [
    ...(Array.isArray(config.command) ? config.command : [config.command]),
    ...Object.values(config.env ?? {}),
  ].some((text) => text.includes('${port}'));
  if (!usesPort)
    throw new TapedeckError(
      'BAD_CONFIG',
      `service "${name}": give it its port with \${port} (in env or command), so the sandboxed instance never takes the real one's place.`,
    );
  const argv = Array.isArray(config.command)
    ? config.command.map((part, i) => fill(part, `command[${i}]`))
    : ['sh', '-c', fill(config.command, 'command')];
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(config.env ?? {})) env[key] = fill(value, `env.${key}`);
  const cwd = config.cwd === undefined ? process.cwd() : path.resolve(fill(config.cwd, 'cwd'));
  const id = `${port}`;
  const reportFile = path.join(isolation.dir, `service-${id}.report.jsonl`);
  const configFile = path.join(isolation.dir, `service-${id}.json`);
  writeFileSync(reportFile, '');
  writeFileSync(
    configFile,
    JSON.stringify({
      fsRoot: isolation.fsRoot,
      seedFile: isolation.seedFile,
      reportFile,
      // Its own port too: a service may call itself.
      allow: [...isolation.allow, { host: '127.0.0.1', port }],
      routes: isolation.routes,
      // In bubblewrap its temp folders are private: not the real disk.
      ...(isolation.os?.level === 'bwrap' ? { os: true } : {}),
    }),
  );
  const { TAPEDECK_REPLAY_CONFIG: _r, TAPEDECK_RECORD_IPC: _i, ...base } = process.env;
  const childEnv: NodeJS.ProcessEnv = {
    ...base,
    ...env,
    TAPEDECK_SERVICE_CONFIG: configFile,
    NODE_OPTIONS:
      `${env.NODE_OPTIONS ?? base.NODE_OPTIONS ?? ''} --import ${pathToFileURL(SERVICE_PRELOAD).href}`.trim(),
  };
  let tail = '';
  const keep = (data: Buffer) => {
    tail = (tail + data.toString('utf8')).slice(-4000);
  };
  if (isolation.os && isolation.os.level !== 'none') {
    return startInOsSandbox({
      config,
      name,
      origin,
      port,
      argv,
      cwd,
      env: childEnv,
      reportFile,
      isolation,
      keep,
      tail: () => tail,
    });
  }
  let child: ChildProcess;
  try {
    child = spawn(argv[0] as string, argv.slice(1), {
      cwd,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
  } catch (error) {
    throw new TapedeckError(
      'SERVICE_FAILED',
      `service "${name}": cannot start ${argv.join(' ')}: ${(error as Error).message}`,
    );
  }
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  let done = false;
  const stop = async () => {
    if (done) return;
    done = true;
    const pid = child.pid;
    if (pid !== undefined && child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-pid, 'SIGTERM');
      } catch {}
      const timer = setTimeout(() => {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {}
      }, 3000);
      await exited;
      clearTimeout(timer);
    }
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(
      url,
      () => isReady(url, port, config.ready),
      config,
      exited,
      () => tail,
      name,
      argv,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    name,
    origin,
    url,
    kind: 'command',
    output: () => tail,
    blocked: () => readBlocked(reportFile),
    close: stop,
  };
}

function readBlocked(file: string): string[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { target: string }).target);
  } catch {
    return [];
  }
}

async function waitReady(
  url: string,
  ready: () => Promise<boolean>,
  config: ServiceConfig,
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>,
  tail: () => string,
  name: string,
  argv: string[],
): Promise<void> {
  const timeout = config.readyTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeout;
  let gone: { code: number | null; signal: NodeJS.Signals | null; error?: Error } | undefined;
  void exited.then((e) => {
    gone = e;
  });
  let wait = 25;
  for (;;) {
    if (gone) {
      const how = gone.error
        ? gone.error.message
        : gone.signal
          ? `was killed by ${gone.signal}`
          : `exited with code ${gone.code}`;
      const output = tail().trim().split('\n').slice(-8).join('\n  ');
      throw new TapedeckError(
        'SERVICE_FAILED',
        `service "${name}" (${argv.join(' ')}) ${how} before it was ready${output ? `:\n  ${output}` : '.'}`,
      );
    }
    if (await ready()) return;
    if (Date.now() > deadline)
      throw new TapedeckError(
        'SERVICE_NOT_READY',
        `service "${name}" was not ready after ${timeout} ms (${config.ready ? `GET ${config.ready} gave no 2xx` : `nothing listened on ${url}`}); raise readyTimeoutMs or check its output:\n  ${tail().trim().split('\n').slice(-8).join('\n  ')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, wait));
    wait = Math.min(200, wait * 2);
  }
}

/** A command service in an OS sandbox of its own: the relay's ports served inside, its port reached from here. */
async function startInOsSandbox(input: {
  config: ServiceConfig;
  name: string;
  origin: string;
  port: number;
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  reportFile: string;
  isolation: ServiceIsolation;
  keep: (data: Buffer) => void;
  tail: () => string;
}): Promise<SandboxService> {
  const { config, name, origin, port, argv, cwd, isolation, keep, tail } = input;
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(input.env)) if (value !== undefined) env[key] = value;
  const namedHosts = isolation.routes.map((r) => r.from.host).filter((h) => net.isIP(h) === 0 && h !== 'localhost');
  let box: OsSandbox;
  try {
    box = await openOsSandbox({
      isolation: isolation.os as Isolation,
      cwd,
      // Its preload config and report live in the chain's folder; the replay's fs seed beside it.
      writable: [{ source: isolation.dir }],
      visible: [...pathsIn(argv, cwd, input.env), ...(isolation.seedFile ? [isolation.seedFile] : [])],
      hosts: namedHosts,
    });
  } catch (error) {
    throw new TapedeckError(
      'SERVICE_FAILED',
      `service "${name}": cannot open its OS sandbox: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const listeners: net.Server[] = [];
  let proc: SandboxProcess | undefined;
  let front: net.Server | undefined;
  let done = false;
  const stop = async () => {
    if (done) return;
    done = true;
    if (proc) {
      const p = proc;
      p.kill('SIGTERM');
      const timer = setTimeout(() => p.kill('SIGKILL'), 3000);
      let patience: NodeJS.Timeout | undefined;
      await Promise.race([
        p.exit,
        new Promise((r) => {
          patience = setTimeout(r, 5000);
        }),
      ]);
      clearTimeout(patience);
      clearTimeout(timer);
    }
    for (const l of listeners) l.close();
    if (front) await new Promise((r) => front?.close(r));
    await box.close();
  };
  try {
    // The only ways out inside: the relay (and the recorded database's address, routed to it).
    const exposed = new Set<number>();
    const expose = async (insidePort: number, to: HostPort) => {
      if (exposed.has(insidePort)) return;
      exposed.add(insidePort);
      const listener = await box.listen(insidePort);
      listeners.push(listener);
      listener.on('connection', (inside: net.Socket) => pipeSockets(inside, net.connect(to.port, to.host)));
    };
    for (const a of isolation.allow) await expose(a.port, a);
    for (const r of isolation.routes) await expose(r.from.port, r.to);
    proc = box.spawn(argv, { env, cwd, stdio: 'pipe', trace: true });
    proc.on('stdout', keep);
    proc.on('stderr', keep);
    // Its port, reached from here through the sandbox's own connect.
    front = net.createServer((socket) => {
      socket.pause();
      box.connect(port).then(
        (inner) => {
          pipeSockets(socket, inner);
          socket.resume();
        },
        () => socket.destroy(),
      );
    });
    const server = front;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    const exited = proc.exit.then((e) => ({
      code: e.code,
      signal: e.signal,
      ...(e.error ? { error: Object.assign(new Error(e.error.message), { code: e.error.code }) } : {}),
    }));
    const probe = async () =>
      config.ready
        ? isReady(url, 0, config.ready)
        : box.connect(port).then(
            (s) => {
              s.destroy();
              return true;
            },
            () => false,
          );
    await waitReady(url, probe, config, exited, tail, name, argv);
    return {
      name,
      origin,
      url,
      kind: 'command',
      output: tail,
      // Refused by its preload, and refused below it (strace): a program it ran, a write to a real file.
      blocked: () => [...readBlocked(input.reportFile), ...box.attempts.map((a) => `${a.target} (${a.kind})`)],
      close: stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function pipeSockets(a: net.Socket, b: net.Socket): void {
  a.pipe(b).pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
}

async function isReady(url: string, port: number, ready: string | undefined): Promise<boolean> {
  if (ready) {
    try {
      const response = await fetch(`${url}${ready}`, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer().catch(() => undefined);
      return response.ok;
    } catch {
      return false;
    }
  }
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
