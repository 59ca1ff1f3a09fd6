// @ts-check
// The replay preload's containment of what leaves a Node process by other roads than its HTTP
// clients and node:fs: child processes, worker threads, UDP and DNS, raw bindings, signals.
// In the OS sandbox the kernel already holds every process in; this layer then only keeps Node
// children and workers answered (the preload goes with them). Without it (the fallback), it is
// the last line: programs that are not Node are refused (they could write files and reach
// sockets this process cannot see), and every refusal is reported — never a clean replay.
import childProcess, { ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import dns from 'node:dns';
import { realpathSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { loadInWorkers, withGivenEnv } from './shared-process.mjs';

const NODE_NAMES = /^(node|nodejs|node\d+)(\.exe)?$/;
/** Bindings that reach the file system, the network or processes below node:fs and node:net. */
const RAW_BINDINGS = new Set([
  'fs',
  'fs_dir',
  'fs_event_wrap',
  'tcp_wrap',
  'udp_wrap',
  'pipe_wrap',
  'tty_wrap',
  'stream_wrap',
  'cares_wrap',
  'process_wrap',
  'spawn_sync',
  'os',
]);

function isNode(file) {
  if (!file) return false;
  let real = file;
  try {
    real = realpathSync(file);
  } catch {}
  try {
    if (real === realpathSync(process.execPath)) return true;
  } catch {}
  return NODE_NAMES.test(path.basename(String(file)));
}

function refusedError(what, code = 'EACCES') {
  return Object.assign(new Error(`${code}: ${what} is refused in a tapedeck replay without the OS sandbox`), {
    code,
    errno: code === 'EACCES' ? -13 : -1,
  });
}

/**
 * options: { os: boolean (the OS sandbox holds the tree), preload (file URL),
 * report(what, target), beforeSpawn(), started(running?) } — started is told of every child
 * process or worker started (with it, when it runs on after the call: it emits 'exit').
 */
export function installContainment({
  os,
  preload,
  report,
  beforeSpawn = () => {},
  started = (/** @type {unknown} */ _running) => {},
}) {
  const children = new Set();

  // ------------------------------------------------------------------ child processes
  // spawn and process.binding are internals (not in Node's types): patched through loose views.
  const childProto = /** @type {any} */ (ChildProcess.prototype);
  const realSpawn = childProto.spawn;
  childProto.spawn = function containedSpawn(options) {
    // Calls this process answered itself are told to the replayer before the child can ask.
    beforeSpawn();
    const file = options?.file;
    // A Node child runs with the preload (keepGivenEnv gives it back when its env lacks it).
    if (!isNode(file) && !os) {
      report('process', [file, ...(options?.args ?? []).slice(1)].join(' ').slice(0, 300));
      const error = refusedError(`running ${file}`);
      // As spawn reports a program it cannot start: an 'error' event, no process.
      process.nextTick(() => this.emit('error', error));
      return -13;
    }
    const result = realSpawn.call(this, options);
    if (typeof this.pid === 'number') children.add(this.pid);
    // One that did not start has no exit to wait for.
    started(typeof this.pid === 'number' ? this : undefined);
    return result;
  };
  for (const name of ['spawnSync', 'execSync', 'execFileSync']) {
    const real = childProcess[name];
    childProcess[name] = function containedSync(command, args) {
      beforeSpawn();
      started(undefined);
      // execSync runs a shell: never Node itself.
      const file = name === 'execSync' ? '/bin/sh' : command;
      if (!(isNode(file) && name !== 'execSync') && !os) {
        report('process', `${command}${Array.isArray(args) ? ` ${args.join(' ')}` : ''}`.slice(0, 300));
        throw refusedError(`running ${command}`);
      }
      return real.apply(this, arguments);
    };
  }

  // ------------------------------------------------------------------ worker threads
  // A worker does not run --import preloads: its code is wrapped to load the preload first.
  loadInWorkers(preload, (env) => withGivenEnv({ ...env }, preload), started);

  // ------------------------------------------------------------------ UDP, DNS, raw bindings
  const refuseAsync = (what, target, args) => {
    report(what, target);
    const error = refusedError(what, 'ECONNREFUSED');
    const cb = [...args].reverse().find((a) => typeof a === 'function');
    if (cb) process.nextTick(() => cb(error));
    return error;
  };
  const socketProto = dgram.Socket.prototype;
  for (const name of ['send', 'connect']) {
    const real = socketProto[name];
    socketProto[name] = function containedUdp(...args) {
      const port = args.find((a) => typeof a === 'number');
      const host = args.find((a, i) => typeof a === 'string' && i > 0) ?? 'localhost';
      const error = refuseAsync('udp', `${host}:${port}`, args);
      if (!args.some((a) => typeof a === 'function')) process.nextTick(() => this.emit('error', error));
      return undefined;
    };
    void real;
  }
  const resolverMethods = Object.getOwnPropertyNames(dns.Resolver.prototype).filter((n) => /^resolve|^reverse/.test(n));
  for (const name of resolverMethods) {
    dns.Resolver.prototype[name] = function containedResolve(...args) {
      refuseAsync('dns', `${String(args[0])} via ${this.getServers?.().join(',') || 'the system resolver'}`, args);
    };
    if (typeof dns[name] === 'function') {
      dns[name] = (...args) => {
        refuseAsync('dns', String(args[0]), args);
      };
    }
  }
  const promiseResolver = dns.promises?.Resolver?.prototype;
  if (promiseResolver) {
    for (const name of Object.getOwnPropertyNames(promiseResolver).filter((n) => /^resolve|^reverse/.test(n))) {
      promiseResolver[name] = function containedResolve(host) {
        report('dns', String(host));
        return Promise.reject(refusedError('dns', 'ECONNREFUSED'));
      };
    }
  }
  const proc = /** @type {any} */ (process);
  const realBinding = proc.binding;
  proc.binding = function containedBinding(name) {
    if (RAW_BINDINGS.has(String(name))) {
      report('binding', `process.binding('${name}')`);
      throw refusedError(`process.binding('${name}')`);
    }
    return realBinding.call(this, name);
  };

  // ------------------------------------------------------------------ signals
  const realKill = process.kill;
  process.kill = function containedKill(pid, signal) {
    const target = Number(pid);
    if (target === process.pid || target === 0 || children.has(target) || (os && target > 0)) {
      return realKill.call(this, pid, signal);
    }
    report('signal', `pid ${pid}`);
    throw Object.assign(new Error(`kill ESRCH (pid ${pid} is outside the tapedeck replay)`), {
      code: 'ESRCH',
      errno: -3,
      syscall: 'kill',
    });
  };

  // ESM named imports (import { spawn } from 'node:child_process') see the patched functions.
  syncBuiltinESMExports();
}
