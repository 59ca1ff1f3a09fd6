// @ts-check
// Unix sockets between the agent tree's own Node processes, inside the OS sandbox. Its seccomp
// filter refuses socket(AF_UNIX) to the whole tree (a socket file of the real, read-only file
// system could otherwise be reached: sandbox/os/seccomp.ts), so a Node process that listened on a
// path died with EACCES — the tsx CLI does at start (its IPC pipe for its child), so every agent
// run as `tsx agent.ts` or `npx tsx …` failed in `record --isolate` and in a sandboxed replay.
// Here a server listening on a path listens on the sandbox's loopback instead and leaves, at the
// path, a small file that names its port; a connection to a path holding such a file goes to that
// port. Only the sandbox's own network is reached that way: a real socket file is not such a file,
// and a connection to one is refused below as before. Used by both preloads (record --isolate,
// and a replay in the OS sandbox) and the sandboxed services' preload, through the network guard.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { aimed, targetOf } from './shared-connect-args.mjs';

/** What the file a listener leaves at its path starts with (the port follows). */
export const MARK = 'tapedeck: a Unix socket of the sandboxed tree, on loopback port ';
// Taken before a preload patches fs: the marker is a file of the disk the tree shares, never of a
// process's in-memory volume.
const { lstatSync, readFileSync, writeFileSync, unlinkSync } = fs;

/**
 * The loopback port a listener of the tree left at `where`, or undefined (no such file there: a
 * real socket, another file, nothing).
 * @param {string} where
 * @returns {number | undefined}
 */
export function loopbackPortAt(where) {
  try {
    const stat = lstatSync(where, { throwIfNoEntry: false });
    if (!stat?.isFile() || stat.size > 200) return undefined;
    const text = readFileSync(where, 'utf8');
    if (!text.startsWith(MARK)) return undefined;
    const port = Number(text.slice(MARK.length).trim());
    return Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether nothing is at a Unix socket path (no file: connecting fails with ENOENT and reaches
 * nothing). An abstract socket (its name starts with a NUL, or an at sign) has no file: never absent.
 * @param {string} where
 */
export function nothingAt(where) {
  return !where.startsWith('\0') && !where.startsWith('@') && lstatSync(where, { throwIfNoEntry: false }) === undefined;
}

/**
 * Ends `socket`'s connect() as Node does when no socket file is at `where`: ENOENT, on the next tick.
 * @param {import('node:net').Socket} socket @param {string} where
 */
export function refuseAsMissing(socket, where) {
  const error = Object.assign(new Error(`connect ENOENT ${where}`), {
    code: 'ENOENT',
    errno: -2,
    syscall: 'connect',
    address: where,
  });
  process.nextTick(() => socket.destroy(error));
  return socket;
}

/** The path of a listen() call on a Unix socket, from any of its argument forms. @param {unknown[]} args */
function listenPath(args) {
  const first = args[0];
  if (typeof first === 'string' && !/^\d+$/.test(first)) return first;
  if (first !== null && typeof first === 'object' && !('_handle' in first) && !('fd' in first)) {
    const p = /** @type {{ path?: unknown }} */ (first).path;
    if (typeof p === 'string' && p !== '') return p;
  }
  return undefined;
}

/**
 * Makes `net.Server#listen` on a path listen on 127.0.0.1 with the port left at the path (see the
 * header). `address()` still answers the path, `close()` removes the file, and a path already
 * taken is EADDRINUSE as it would be. Returns undo().
 */
export function installUnixOverLoopback() {
  const proto = /** @type {any} */ (net.Server.prototype);
  const realListen = proto.listen;
  const realAddress = proto.address;
  /** @type {any} */
  const patched = /** @this {net.Server} */ function listen(/** @type {unknown[]} */ ...args) {
    const where = listenPath(args);
    // An abstract socket (a leading NUL) has no file: left as it was (refused in the sandbox).
    if (where === undefined || where.startsWith('\0')) return realListen.apply(this, args);
    const callback = args.find((a) => typeof a === 'function');
    if (lstatSync(where, { throwIfNoEntry: false }) !== undefined) {
      const error = Object.assign(new Error(`listen EADDRINUSE: address already in use ${where}`), {
        code: 'EADDRINUSE',
        errno: -98,
        syscall: 'listen',
        address: where,
        port: -1,
      });
      process.nextTick(() => this.emit('error', error));
      return this;
    }
    this.once('listening', () => {
      const port = realAddress.call(this)?.port;
      try {
        writeFileSync(where, `${MARK}${port}\n`, { mode: 0o600, flag: 'wx' });
      } catch (error) {
        this.close();
        this.emit('error', error);
        return;
      }
      this.once('close', () => {
        try {
          if (loopbackPortAt(where) === port) unlinkSync(where);
        } catch {}
      });
    });
    this.address = () => where;
    return realListen.call(this, { host: '127.0.0.1', port: 0 }, ...(callback ? [callback] : []));
  };
  proto.listen = patched;
  return () => {
    if (proto.listen === patched) proto.listen = realListen;
  };
}

/**
 * Makes a connection to a path holding a port of the tree's own listener go to that port on
 * loopback, one to a database's socket (`dbSockets`: PGHOST=/var/run/postgresql) go to that
 * database's door, and one to a path where nothing is fail with ENOENT (record --isolate: no
 * network guard there to do it). Returns undo().
 * @param {readonly string[]} [dbSockets]
 */
export function installUnixRoutes(dbSockets = []) {
  const proto = /** @type {any} */ (net.Socket.prototype);
  const realConnect = proto.connect;
  const databases = new Set(dbSockets);
  /** @type {any} */
  const patched = /** @this {net.Socket} */ function connect(/** @type {unknown[]} */ ...args) {
    const there = toLoopback(args) ?? toDatabaseDoor(args, databases);
    if (there !== undefined) return realConnect.apply(this, there);
    // Nothing at the path: ENOENT, as anywhere (the sandbox would refuse the socket itself: EACCES).
    const target = targetOf(args);
    if (target.path !== undefined && nothingAt(String(target.path))) return refuseAsMissing(this, String(target.path));
    return realConnect.apply(this, args);
  };
  proto.connect = patched;
  return () => {
    if (proto.connect === patched) proto.connect = realConnect;
  };
}

/**
 * A connect() call's arguments aimed at the door of a database whose Unix socket it names
 * (`/var/run/postgresql/.s.PGSQL.5432`: the door listens inside at 127.0.0.1:5432), or undefined.
 * @param {unknown[]} args @param {Set<string>} databases
 * @returns {unknown[] | undefined}
 */
function toDatabaseDoor(args, databases) {
  const target = targetOf(args);
  if (target.path === undefined || databases.size === 0) return undefined;
  const at = path.resolve(String(target.path));
  const port = databases.has(at) ? Number(/\.s\.PGSQL\.(\d+)$/.exec(at)?.[1]) : Number.NaN;
  return Number.isInteger(port) && port > 0 ? aimed(args, { host: '127.0.0.1', port }) : undefined;
}

/**
 * A connect() call's arguments aimed at the loopback port a listener of the tree left at the path
 * it names, or undefined when it names no such path.
 * @param {unknown[]} args
 * @returns {unknown[] | undefined}
 */
function toLoopback(args) {
  const target = targetOf(args);
  const port = target.path === undefined ? undefined : loopbackPortAt(String(target.path));
  return port === undefined ? undefined : aimed(args, { host: '127.0.0.1', port });
}
