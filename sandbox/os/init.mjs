// The OS sandbox's init: the first program inside the namespaces (started by bwrap or unshare,
// with tapedeck's IPC channel as its only tie to the outside). It owns no policy; it does what
// the launcher outside asks, so that the launcher can serve the inside without a way out:
//   listen  — opens a loopback listener inside and hands the listening socket out (the launcher
//             accepts the inside's connections itself: the proxy, the database, the preload IPC)
//   connect — connects to a loopback port inside and hands the connected socket out (the proxy
//             reaching a service re-hosted in the sandbox)
//   spawn   — starts a process inside (the agent, a service), optionally under strace, and
//             reports its exit; kill — signals one; bye — ends everything
// Handles travel over Node's IPC channel (SCM_RIGHTS), so no socket on the file system is needed
// (the sandbox's seccomp filter refuses Unix sockets).
// @ts-check
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { ephemeralRange, ownPorts } from './listening.mjs';
import { killTree } from './process-tree.mjs';

/** Ports the kernel hands listeners on port 0 in this namespace (ownPorts). */
const ephemeral = ephemeralRange();

/**
 * What the launcher asks (sandbox/os/sandbox.ts sends these).
 * @typedef {{ t: 'listen', id: number, host?: string, port?: number }} ListenRequest
 * @typedef {{ t: 'connect', id: number, host?: string, port: number }} ConnectRequest
 * @typedef {{ strace: string, syscalls: string[], names?: boolean }} TraceOptions
 * @typedef {{ t: 'spawn', id: number, command: string[], env: NodeJS.ProcessEnv, cwd?: string, stdio?: 'inherit' | 'pipe', trace?: TraceOptions }} SpawnRequest
 * @typedef {{ t: 'kill', id: number, signal?: NodeJS.Signals, tree?: boolean }} KillRequest
 * @typedef {ListenRequest | ConnectRequest | SpawnRequest | KillRequest | { t: 'bye' }} Request
 */

/** @type {Map<number, import('node:child_process').ChildProcess>} */
const children = new Map();
/**
 * @param {Record<string, unknown>} message
 * @param {net.Server | net.Socket} [handle]
 * @returns {Promise<boolean>}
 */
const send = (message, handle) =>
  new Promise((resolve) => {
    if (!process.connected || process.send === undefined) return resolve(false);
    process.send(message, handle, { keepOpen: false }, () => resolve(true));
  });

/** An error as the launcher reads it: a code (a system error's) and the message. */
const failure = (/** @type {any} */ error) => ({ code: error?.code, message: String(error?.message ?? error) });

/** @param {ListenRequest} request */
async function listen({ id, host, port }) {
  const server = net.createServer();
  server.once('error', (error) => void send({ t: 'error', id, ...failure(error) }));
  server.listen({ host: host ?? '127.0.0.1', port: port ?? 0, exclusive: true }, async () => {
    const address = /** @type {net.AddressInfo} */ (server.address());
    await send({ t: 'listening', id, port: address.port, host: address.address }, server);
    // The launcher holds the listener now; this copy must not accept.
    server.close();
  });
}

/** @param {ConnectRequest} request */
function connect({ id, host, port }) {
  const socket = net.connect({ host: host ?? '127.0.0.1', port });
  socket.once('error', (error) => void send({ t: 'error', id, ...failure(error) }));
  socket.once('connect', () => {
    socket.pause();
    void send({ t: 'connected', id }, socket);
  });
}

/**
 * The trace FIFOs not yet removed. With a private /tmp they go with it; a recording's sandbox
 * (fs 'shared') and the network namespace alone have the real /tmp, where each was left behind.
 * @type {Set<string>}
 */
const fifos = new Set();
const removeFifo = (path) => {
  fifos.delete(path);
  try {
    fs.unlinkSync(path);
  } catch {}
};
process.on('exit', () => {
  for (const path of fifos) removeFifo(path);
});

/** A FIFO in the sandbox's /tmp that strace writes its report to; its lines go out over IPC. */
function traceFifo(id) {
  const path = `/tmp/.tapedeck-trace-${randomBytes(8).toString('hex')}`;
  const made = spawnSync('mkfifo', ['-m', '600', path]);
  if (made.status !== 0) return undefined;
  fifos.add(path);
  // Opened read-write so the open does not wait for strace; the socket reads as lines arrive.
  const fd = fs.openSync(path, 'r+');
  const reader = new net.Socket({ fd, readable: true, writable: false });
  // Once strace has exited, a line of ours written after its last one says the FIFO is read to
  // the end (a pipe keeps the order of writes): no fixed wait for its last lines.
  const marker = `.tapedeck-end-${randomBytes(8).toString('hex')}`;
  /** @type {() => void} */
  let ended = () => {};
  const end = new Promise((resolve) => {
    ended = () => resolve(undefined);
  });
  let rest = '';
  reader.on('data', (data) => {
    const lines = (rest + data.toString('utf8')).split('\n');
    rest = lines.pop() ?? '';
    const last = lines.indexOf(marker);
    if (last >= 0) {
      lines.length = last;
      ended();
    }
    if (lines.length === 0) return;
    // Name the processes while they may still be alive (pids are this namespace's).
    // A process already gone keeps the name strace gave it in the line (-Y), if any.
    const commands = {};
    for (const line of lines) {
      const m = /^(\d+)(?:<(.*?)>)?\s/.exec(line);
      const pid = m?.[1];
      if (!pid || commands[pid]) continue;
      try {
        commands[pid] = fs
          .readFileSync(`/proc/${pid}/cmdline`, 'utf8')
          .split('\0')
          .filter(Boolean)
          .join(' ')
          .slice(0, 300);
      } catch {
        commands[pid] = '';
      }
      if (!commands[pid] && m?.[2]) commands[pid] = m[2].slice(0, 300);
    }
    // Connects under way on loopback to the sandbox's own listeners are no refusal (ownPorts).
    const listening = ownPorts(lines, ephemeral);
    void send({ t: 'trace', id, lines, commands, listening });
  });
  reader.on('error', () => ended());
  /** Resolves when every line strace wrote is sent (call it after strace has exited), or after `ms`. */
  const drained = (ms) =>
    new Promise((resolve) => {
      let done = false;
      const finish = () => {
        done = true;
        clearTimeout(timer);
        resolve(undefined);
      };
      const timer = setTimeout(finish, ms);
      void end.then(finish);
      // The marker (shorter than PIPE_BUF: written whole or not at all) waits for room while
      // the pipe is full of strace's last lines.
      const mark = () => {
        try {
          fs.writeSync(fd, `\n${marker}\n`);
        } catch (error) {
          if (done) return;
          if (/** @type {NodeJS.ErrnoException} */ (error).code === 'EAGAIN') setTimeout(mark, 5);
          else ended();
        }
      };
      mark();
    });
  return { path, reader, drained };
}

/** Whether `command` names a program that exists (a path, or a name on the PATH). */
function found(command, env, cwd) {
  const canRun = (file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return fs.statSync(file).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes('/')) return canRun(command.startsWith('/') ? command : `${cwd}/${command}`);
  return (env.PATH ?? '').split(':').some((dir) => dir && canRun(`${dir}/${command}`));
}

/** @param {SpawnRequest} request */
function start({ id, command, env, cwd, stdio, trace }) {
  // Under strace a missing program would look like strace failing: say so as spawn would.
  if (trace?.strace && !found(command[0], env, cwd ?? process.cwd())) {
    void send({
      t: 'exit',
      id,
      code: null,
      signal: null,
      error: { code: 'ENOENT', message: `spawn ${command[0]} ENOENT` },
    });
    return;
  }
  let argv = command;
  let fifo;
  if (trace?.strace) {
    fifo = traceFifo(id);
    if (fifo) {
      argv = [
        trace.strace,
        '-f',
        '-qq',
        ...(trace.names ? ['-Y'] : []),
        '-Z',
        '--seccomp-bpf',
        '-e',
        `trace=${trace.syscalls.join(',')}`,
        '-e',
        'signal=none',
        '-s',
        '256',
        '-o',
        fifo.path,
        '--',
        ...command,
      ];
    }
  }
  /** @type {import('node:child_process').ChildProcess} */
  let child;
  try {
    child = spawn(/** @type {string} */ (argv[0]), argv.slice(1), {
      cwd,
      env,
      // The agent writes to the sandbox's own stdout/stderr; services' output comes out over IPC.
      stdio: stdio === 'inherit' ? ['ignore', 'inherit', 'inherit'] : ['ignore', 'pipe', 'pipe'],
      // A process group of its own: a tree kill (a timed-out agent) ends whatever it started.
      detached: true,
    });
  } catch (error) {
    void send({ t: 'exit', id, code: null, signal: null, error: failure(error) });
    return;
  }
  children.set(id, child);
  child.once('spawn', () => void send({ t: 'spawned', id, pid: child.pid }));
  for (const name of /** @type {const} */ (['stdout', 'stderr'])) {
    child[name]?.on('data', (data) => void send({ t: 'output', id, stream: name, b64: data.toString('base64') }));
  }
  child.once('error', (error) => {
    children.delete(id);
    void send({ t: 'exit', id, code: null, signal: null, error: failure(error) });
  });
  child.once('close', (code, signal) => {
    children.delete(id);
    // strace's last lines go out before the exit is reported.
    void (fifo ? fifo.drained(1000) : Promise.resolve()).then(() => {
      fifo?.reader.destroy();
      if (fifo) removeFifo(fifo.path);
      void send({ t: 'exit', id, code, signal });
    });
  });
}

/** @param {KillRequest} request */
function kill({ id, signal, tree }) {
  const child = children.get(id);
  if (tree && child?.pid !== undefined) killTree(child.pid, { group: true });
  else child?.kill(signal ?? 'SIGTERM');
}

process.on('message', (/** @type {Request} */ message) => {
  switch (message?.t) {
    case 'listen':
      return void listen(message);
    case 'connect':
      return connect(message);
    case 'spawn':
      return start(message);
    case 'kill':
      return kill(message);
    case 'bye':
      return endAll();
  }
});
process.on('disconnect', endAll);

/** Everything started inside ends with init (without a PID namespace, unshare's, nothing else would end it). */
function endAll() {
  for (const child of children.values()) {
    if (child.pid !== undefined) killTree(child.pid, { group: true });
    else child.kill('SIGKILL');
  }
  process.exit(0);
}

void send({ t: 'ready', pid: process.pid });
