// @ts-check
// The replay fs sandbox: node:fs, node:fs/promises (and, via syncBuiltinESMExports, ESM named
// imports) routed by path. The sandboxed root lives in a memfs volume seeded from the replay's
// start world; other paths read the real disk; no write ever reaches the real disk (writes
// outside the root land in the volume too and are reported).
import fs from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { watchTree } from './shared-watch.mjs';

const PATH_READ = [
  'readFile',
  'readdir',
  'stat',
  'lstat',
  'access',
  'realpath',
  'readlink',
  'opendir',
  'statfs',
  'watch',
  'watchFile',
  'unwatchFile',
];
const PATH_WRITE = [
  'writeFile',
  'appendFile',
  'mkdir',
  'rm',
  'rmdir',
  'unlink',
  'truncate',
  'chmod',
  'utimes',
  'lchmod',
  'chown',
  'lchown',
  'lutimes',
  'mkdtemp',
];
const TWO_PATH = ['rename', 'copyFile', 'symlink', 'link', 'cp'];
const FD_OPS = [
  'read',
  'write',
  'close',
  'fstat',
  'fsync',
  'fdatasync',
  'ftruncate',
  'readv',
  'writev',
  'fchmod',
  'futimes',
];
// O_TRUNC empties a file even when it is opened read-only: a write.
const O_WRITE =
  fs.constants.O_WRONLY | fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_APPEND | fs.constants.O_TRUNC;
/** Operations on a descriptor that change the file (its metadata too) whatever it was opened for. */
const FD_MUTATING = new Set(['fchmod', 'fchown', 'futimes', 'ftruncate']);

/**
 * Every name the sandbox takes from memfs's fs API (and from its fs.promises): memfs implements
 * them all, so the sandbox knows its shape without loading it (test/replay/fs-sandbox-lazy.test.ts
 * holds these lists to the installed memfs).
 */
export const SYNC_NAMES = [
  ...[...PATH_READ, ...PATH_WRITE, ...TWO_PATH, ...FD_OPS, 'open', 'exists'].flatMap((n) => [n, `${n}Sync`]),
  'createReadStream',
  'createWriteStream',
];
export const PROMISE_NAMES = [...PATH_READ, ...PATH_WRITE, ...TWO_PATH, 'open'];

/**
 * memfs's fs API (~0.1 s to load, once per agent process) as the sandbox calls it, loaded and
 * its volume made at the first call: a process that never touches the volume never loads it.
 * @param {() => Record<string, any>} get
 * @param {string[]} names
 */
function lazyApi(get, names) {
  /** @type {Record<string, any>} */
  const api = {};
  for (const name of names) api[name] = (...args) => get()[name](...args);
  return api;
}

/**
 * Installs the sandbox. `files` maps absolute paths to { mode, data: Buffer }.
 * Returns the volume and a function that reports (and clears) the paths written since the last call.
 * `privateDirs`: folders that are the sandbox's own (the OS sandbox's private /tmp…), not the real disk;
 * with `sharePrivate` calls there (outside the root and `hostDirs`, the host's folders bound in
 * them) go to that disk, which every process of the tree shares, rather than to the volume.
 * @param {{ root: string, files: Record<string, { mode: number, data: Buffer }>, onOutsideWrite: (abs: string) => void,
 *   onRefused?: (what: string) => void, rootOnDisk?: boolean, privateDirs?: string[], sharePrivate?: boolean,
 *   hostDirs?: string[], quiet?: <T>(fn: () => T) => T }} options
 */
export function installFsSandbox({
  root,
  files,
  onOutsideWrite,
  onRefused,
  rootOnDisk = false,
  privateDirs = [],
  sharePrivate = false,
  hostDirs = [],
  quiet = (fn) => fn(),
}) {
  const realLstat = fs.lstatSync.bind(fs);
  const rootAbs = path.resolve(root);
  /** @type {{ vol: unknown, fs: Record<string, any> } | undefined} */
  let volume;
  let loading = false;
  const made = () => {
    if (volume !== undefined) return volume;
    // memfs's own files are read from the disk even where the root holds them, and what its
    // loading draws (random ids at module load) is not the agent's.
    loading = true;
    try {
      return quiet(makeVolume);
    } finally {
      loading = false;
    }
  };
  const makeVolume = () => {
    const { createFsFromVolume, Volume } = createRequire(import.meta.url)('memfs');
    const vol = new Volume();
    const mfs = createFsFromVolume(vol);
    mfs.mkdirSync(rootAbs, { recursive: true });
    for (const [abs, file] of Object.entries(files)) {
      mfs.mkdirSync(path.dirname(abs), { recursive: true });
      mfs.writeFileSync(abs, file.data, { mode: file.mode & 0o777 });
    }
    volume = { vol, fs: mfs };
    return volume;
  };
  const mfs = lazyApi(() => made().fs, SYNC_NAMES);
  const mfsPromises = lazyApi(() => made().fs.promises, PROMISE_NAMES);
  const dirty = new Set();
  // Modes are reported as the real disk would have them: permission bits under the umask
  // (memfs itself ignores the umask). process.umask() without an argument is deprecated.
  let umask = 0o022;
  try {
    umask = process.umask(0o022);
    process.umask(umask);
  } catch {
    // Worker threads cannot set the umask: the usual one is assumed.
  }
  const modeOf = (st) => Number(st.mode) & 0o777 & ~umask;
  const memFds = new Set();
  const diskFds = new Set();
  // The world copy on disk (OS sandbox): paths this thread wrote since the last call, and files it
  // holds open for writing (looked at every call until closed), so a call reads what this thread
  // changed without waiting for the watcher's events (delivered only on a turn of the loop).
  /** @type {Set<string>} */
  const diskDirty = new Set();
  /** @type {Map<unknown, string>} fd or FileHandle -> path */
  const diskWriters = new Map();
  const markDisk = (/** @type {string | undefined} */ abs) => {
    if (abs !== undefined && rootOnDisk && underRoot(abs)) diskDirty.add(abs);
  };
  const closedWriter = (/** @type {unknown} */ key) => {
    const abs = diskWriters.get(key);
    if (abs === undefined) return;
    diskWriters.delete(key);
    diskDirty.add(abs);
  };

  const resolve = (p) => {
    if (typeof p === 'number') return undefined;
    if (p instanceof URL) return p.protocol === 'file:' ? fileURLToPath(p) : undefined;
    if (Buffer.isBuffer(p)) p = p.toString('utf8');
    if (typeof p !== 'string') return undefined;
    return path.resolve(p);
  };
  const underRoot = (abs) => abs === rootAbs || abs.startsWith(rootAbs + path.sep);
  // Reads of a path go to the volume under the root, or where an outside write landed.
  // Paths outside the root that the agent wrote (they live in the volume from then on).
  const outside = new Set();
  // In the OS sandbox the root is a writable copy on disk, shared with every process of the
  // tree (the replayer reads it back): calls under it go to the real fs; only writes outside it
  // (read-only there) land in the volume.
  // So do calls in the OS sandbox's private folders (outside the root and the host's folders bound
  // there): the tree shares them, and a program the agent runs reads what it wrote.
  const within = (abs, dirs) => dirs.some((d) => abs === d || abs.startsWith(d + path.sep));
  const onDisk = (abs) =>
    abs !== undefined &&
    (underRoot(abs)
      ? rootOnDisk
      : sharePrivate && !outside.has(abs) && within(abs, privateDirs) && !within(abs, hostDirs));
  const readsVolume = (abs) => !loading && abs !== undefined && !onDisk(abs) && (underRoot(abs) || outside.has(abs));
  const markWrite = (abs) => {
    if (underRoot(abs)) dirty.add(abs);
    else if (!outside.has(abs)) {
      outside.add(abs);
      onOutsideWrite?.(abs);
    }
  };
  // A real file outside the recorded world (not one the agent made in the volume): a write to it
  // would change the real disk, so it is refused as the OS sandbox's read-only file system would,
  // and reported. New files outside the root still land in the volume.
  const isPrivate = (abs) => within(abs, privateDirs);
  const isRealFile = (abs) => {
    if (abs === undefined || underRoot(abs) || outside.has(abs) || isPrivate(abs)) return false;
    try {
      realLstat(abs);
      return true;
    } catch {
      return false;
    }
  };
  const refuseReal = (name, abs, args, isPromises) => {
    onRefused?.(`${name} ${abs}`);
    const error = refusal(name, abs);
    if (isPromises) return Promise.reject(error);
    if (name.endsWith('Sync')) throw error;
    const cb = args.find((a) => typeof a === 'function');
    process.nextTick(() => cb?.(error));
    return undefined;
  };
  const ensureParent = (abs) => {
    if (!underRoot(abs)) mfs.mkdirSync(path.dirname(abs), { recursive: true });
  };

  const refusal = (name, where) =>
    Object.assign(new Error(`EROFS: read-only file system, ${name} '${where}' (tapedeck replay sandbox)`), {
      code: 'EROFS',
      errno: -30,
      syscall: name,
    });
  const patch = (target, source, name, route) => {
    const original = target[name];
    if (typeof original !== 'function') return;
    if (typeof source[name] !== 'function') {
      // A write the volume cannot take never reaches the real disk: refused, and reported.
      if (!PATH_WRITE.some((w) => name === w || name === `${w}Sync`)) return;
      target[name] = function refused(...args) {
        const where = String(args[0]);
        onRefused?.(`${name} ${where}`);
        const error = refusal(name, where);
        if (name.endsWith('Sync')) throw error;
        if (target === fs.promises) return Promise.reject(error);
        const cb = args.find((a) => typeof a === 'function');
        process.nextTick(() => cb?.(error));
      };
      return;
    }
    target[name] = function sandboxed(...args) {
      const routed = route(args);
      if (!routed) return original.apply(this, args);
      return source[name](...routed);
    };
  };

  const isWriteFlag = (flags) => {
    if (flags === undefined || flags === null) return false;
    if (typeof flags === 'number') return (flags & O_WRITE) !== 0;
    return /[wa+]/.test(String(flags));
  };

  const api = (target, source, isPromises) => {
    for (const name of PATH_READ) {
      for (const n of isPromises ? [name] : [name, `${name}Sync`]) {
        patch(target, source, n, (args) => {
          const abs = resolve(args[0]);
          return readsVolume(abs) ? [abs, ...args.slice(1)] : undefined;
        });
      }
    }
    if (!isPromises) {
      patch(target, source, 'existsSync', (args) => {
        const abs = resolve(args[0]);
        return readsVolume(abs) ? [abs] : undefined;
      });
      patch(target, source, 'exists', (args) => {
        const abs = resolve(args[0]);
        return readsVolume(abs) ? [abs, ...args.slice(1)] : undefined;
      });
      for (const n of ['createReadStream']) {
        patch(target, source, n, (args) => {
          const abs = resolve(args[0]);
          return readsVolume(abs) ? [abs, ...args.slice(1)] : undefined;
        });
      }
      patch(target, source, 'createWriteStream', (args) => {
        const abs = resolve(args[0]);
        markDisk(abs);
        if (abs === undefined || onDisk(abs)) return undefined;
        ensureParent(abs);
        markWrite(abs);
        return [abs, ...args.slice(1)];
      });
    }
    for (const name of PATH_WRITE) {
      for (const n of isPromises ? [name] : [name, `${name}Sync`]) {
        patch(target, source, n, (args) => {
          const abs = resolve(args[0]);
          if (abs === undefined) {
            // A write through a file descriptor: route by who owns the fd.
            return typeof args[0] === 'number' && memFds.has(args[0]) ? args : undefined;
          }
          if (onDisk(abs)) {
            markDisk(abs);
            return undefined;
          }
          if (name !== 'mkdir') ensureParent(abs);
          markWrite(abs);
          return [abs, ...args.slice(1)];
        });
        // mkdir of an existing folder changes nothing; mkdtemp makes a new name.
        if (name === 'mkdir' || name === 'mkdtemp' || typeof target[n] !== 'function') continue;
        const viaVolume = target[n];
        target[n] = function guardedWrite(...args) {
          const abs = resolve(args[0]);
          if (isRealFile(abs)) return refuseReal(n, abs, args, isPromises);
          return viaVolume.apply(this, args);
        };
      }
    }
    for (const name of TWO_PATH) {
      for (const n of isPromises ? [name] : [name, `${name}Sync`]) {
        const original = target[n];
        if (typeof original !== 'function' || typeof source[n] !== 'function') continue;
        target[n] = function sandboxedTwo(...args) {
          const from = resolve(args[0]);
          const to = resolve(args[1]);
          // Into the world copy on disk from anywhere on the real disk (it is readable there): as is.
          if (to === undefined || (onDisk(to) && (from === undefined || !readsVolume(from)))) {
            markDisk(to);
            if (name === 'rename') markDisk(from);
            return original.apply(this, args);
          }
          ensureParent(to);
          markWrite(to);
          if (from !== undefined && !readsVolume(from)) {
            // Source on the real disk, target in the volume: copy the bytes in; a rename
            // cannot remove the real source, so it is refused like a cross-device move.
            if (name === 'copyFile' || name === 'cp') {
              const data = fs.readFileSync.call(fs, from);
              const write = () => mfs.writeFileSync(to, data);
              if (isPromises) return Promise.resolve().then(write);
              if (n.endsWith('Sync')) return write();
              const cb = args.find((a) => typeof a === 'function');
              try {
                write();
                process.nextTick(() => cb?.(null));
              } catch (error) {
                process.nextTick(() => cb?.(error));
              }
              return undefined;
            }
            if (name === 'symlink') return source[n](args[0], to, ...args.slice(2));
            const error = Object.assign(
              new Error(`EXDEV: cross-device link not permitted, ${name} '${from}' -> '${to}'`),
              {
                code: 'EXDEV',
              },
            );
            if (isPromises) return Promise.reject(error);
            if (n.endsWith('Sync')) throw error;
            const cb = args.find((a) => typeof a === 'function');
            process.nextTick(() => cb?.(error));
            return undefined;
          }
          if (from !== undefined && name === 'rename') markWrite(from);
          return source[n](from ?? args[0], to, ...args.slice(2));
        };
      }
    }
    // open: memfs for sandboxed paths and for any write; the fd remembers where it lives.
    for (const n of isPromises ? ['open'] : ['open', 'openSync']) {
      const original = target[n];
      target[n] = function sandboxedOpen(...args) {
        const abs = resolve(args[0]);
        const writing = isWriteFlag(typeof args[1] === 'function' ? undefined : args[1]);
        if (abs !== undefined && onDisk(abs)) {
          // The world copy on disk: its descriptors may change it (fchmod, ftruncate…).
          if (writing) markDisk(abs);
          if (isPromises) {
            if (!writing) return original.apply(this, args);
            return original.apply(this, args).then((/** @type {any} */ handle) => {
              diskWriters.set(handle, abs);
              const close = handle.close;
              handle.close = function closeWriter() {
                return close.call(this).finally(() => closedWriter(handle));
              };
              return handle;
            });
          }
          if (n === 'openSync') {
            const fd = original.apply(this, args);
            diskFds.add(fd);
            if (writing) diskWriters.set(fd, abs);
            return fd;
          }
          const cb = args[args.length - 1];
          if (typeof cb === 'function') {
            return original.apply(this, [
              ...args.slice(0, -1),
              (error, fd) => {
                if (!error) {
                  diskFds.add(fd);
                  if (writing) diskWriters.set(fd, abs);
                }
                cb(error, fd);
              },
            ]);
          }
        }
        if (abs === undefined || onDisk(abs) || (!readsVolume(abs) && !writing)) return original.apply(this, args);
        if (writing && isRealFile(abs)) return refuseReal(n, abs, args, isPromises);
        if (writing) {
          ensureParent(abs);
          markWrite(abs);
        }
        const rest = args.slice(1);
        if (isPromises) return source.open(abs, ...rest);
        if (n === 'openSync') {
          const fd = source.openSync(abs, ...rest);
          memFds.add(fd);
          return fd;
        }
        const cb = rest.pop();
        return source.open(abs, ...rest, (error, fd) => {
          if (!error) memFds.add(fd);
          cb(error, fd);
        });
      };
    }
    if (!isPromises) {
      for (const name of FD_OPS) {
        for (const n of [name, `${name}Sync`]) {
          patch(target, source, n, (args) => (typeof args[0] === 'number' && memFds.has(args[0]) ? args : undefined));
          if (FD_MUTATING.has(name)) {
            const viaVolume = target[n];
            target[n] = function guardedFd(...args) {
              const fd = args[0];
              if (typeof fd !== 'number' || memFds.has(fd) || diskFds.has(fd)) return viaVolume.apply(this, args);
              // A descriptor of a real file (opened to read): its file must not change.
              onRefused?.(`${name} fd ${fd}`);
              const error = refusal(name, `fd ${fd}`);
              if (n.endsWith('Sync')) throw error;
              const cb = args.find((a) => typeof a === 'function');
              process.nextTick(() => cb?.(error));
            };
          }
        }
      }
      const closeSync = target.closeSync;
      target.closeSync = function sandboxedCloseSync(fd) {
        if (memFds.has(fd)) {
          memFds.delete(fd);
          return mfs.closeSync(fd);
        }
        diskFds.delete(fd);
        try {
          return closeSync.call(this, fd);
        } finally {
          closedWriter(fd);
        }
      };
      const close = target.close;
      target.close = function sandboxedClose(fd, ...rest) {
        if (typeof fd === 'number' && diskFds.has(fd)) {
          diskFds.delete(fd);
          const cb = rest[rest.length - 1];
          if (typeof cb === 'function') {
            return close.call(this, fd, ...rest.slice(0, -1), (/** @type {unknown} */ error) => {
              closedWriter(fd);
              cb(error);
            });
          }
          closedWriter(fd);
        }
        return close.call(this, fd, ...rest);
      };
    }
  };

  api(fs, mfs, false);
  api(fs.promises, mfsPromises, true);
  syncBuiltinESMExports();

  // On disk, what changed under the root is read from the disk itself (by any process of the
  // tree: node, sh, curl…), comparing with what was there at the last call. A call looks only at
  // the paths that may have changed: what this thread wrote (marked as it wrote), the files it
  // holds open for writing, and what the watcher has named so far. Writes of other processes and
  // threads reach the watcher only on a turn of the loop, so while a child process or a worker of
  // this one runs, or after one ran since the last call, or when the watcher cannot tell, the call
  // reads the whole tree, as every call did before.
  const realStat = fs.lstatSync.bind(fs);
  const realReaddir = fs.readdirSync.bind(fs);
  const realRead = fs.readFileSync.bind(fs);
  const stampOf = (st) => `${st.size}:${st.mtimeMs}:${st.ino}:${st.mode & 0o777}`;
  const walkDisk = (from = rootAbs) => {
    const seen = new Map();
    const visit = (dir) => {
      let names;
      try {
        names = realReaddir(dir);
      } catch {
        return;
      }
      for (const name of names) {
        const abs = path.join(dir, String(name));
        let st;
        try {
          st = realStat(abs);
        } catch {
          continue;
        }
        if (st.isDirectory()) visit(abs);
        else if (st.isFile()) seen.set(abs, stampOf(st));
      }
    };
    visit(from);
    return seen;
  };
  /** @type {ReturnType<typeof watchTree> | undefined} */
  let tree;
  /** @type {Map<string, string> | undefined} */
  let diskKnown;
  if (rootOnDisk) {
    diskKnown = new Map();
    const known = diskKnown;
    tree = watchTree(rootAbs);
    tree.start((abs) => {
      try {
        const st = realStat(abs);
        if (st.isFile()) known.set(abs, stampOf(st));
      } catch {}
    });
    if (tree.blind) diskKnown = walkDisk();
  }
  let foreignRunning = 0;
  let foreignSince = false;
  /** A child process or worker of this one: until it exits (and at the next call) every call reads the whole tree. */
  const foreign = (/** @type {{ once?: Function } | undefined} */ running) => {
    foreignSince = true;
    if (!running || typeof running.once !== 'function') return;
    foreignRunning++;
    running.once('exit', () => {
      foreignRunning--;
      foreignSince = true;
    });
  };
  const report = (out, abs, stamp) => {
    if (diskKnown?.get(abs) === stamp) return;
    try {
      out[abs] = { mode: Number(stamp.split(':')[3]), data: realRead(abs) };
      diskKnown?.set(abs, stamp);
    } catch {}
  };
  const goneUnder = (out, abs) => {
    for (const known of [...(diskKnown?.keys() ?? [])]) {
      if (known === abs || known.startsWith(abs + path.sep)) {
        out[known] = null;
        diskKnown?.delete(known);
      }
    }
  };
  const takeDiskChanges = (out) => {
    const touched = tree?.take();
    if (!touched || foreignRunning > 0 || foreignSince) {
      foreignSince = false;
      diskDirty.clear();
      const now = walkDisk();
      for (const [abs, stamp] of now) report(out, abs, stamp);
      for (const abs of [...(diskKnown?.keys() ?? [])]) {
        if (now.has(abs)) continue;
        out[abs] = null;
        diskKnown?.delete(abs);
      }
      return;
    }
    for (const abs of diskWriters.values()) touched.add(abs);
    for (const abs of diskDirty) touched.add(abs);
    diskDirty.clear();
    for (const abs of touched) {
      if (!underRoot(abs)) continue;
      let st;
      try {
        st = realStat(abs);
      } catch {
        goneUnder(out, abs);
        continue;
      }
      if (st.isFile()) {
        report(out, abs, stampOf(st));
        continue;
      }
      // A folder (made, moved in, replaced), or a file replaced by something else: what it holds now.
      const now = st.isDirectory() ? walkDisk(abs) : new Map();
      for (const [file, stamp] of now) report(out, file, stamp);
      for (const known of [...(diskKnown?.keys() ?? [])]) {
        if ((known === abs || known.startsWith(abs + path.sep)) && !now.has(known)) {
          out[known] = null;
          diskKnown?.delete(known);
        }
      }
    }
  };

  /** Files under the root written since the last call: abs -> { mode, data } or null (gone). */
  const takeChanges = () => {
    const out = {};
    if (rootOnDisk) {
      const found = {};
      takeDiskChanges(found);
      // In path order, whatever order the kernel or the folder listing gave.
      for (const abs of Object.keys(found).sort()) out[abs] = found[abs];
      return out;
    }
    for (const abs of dirty) {
      let st;
      try {
        // Not followed: a link is no file of the world (the recorder leaves links out), and one the
        // agent pointed at a folder above it would make the walk go round for ever.
        st = mfs.lstatSync(abs);
      } catch {
        out[abs] = null;
        continue;
      }
      if (st.isDirectory()) walk(abs, out);
      else if (st.isFile()) out[abs] = { mode: modeOf(st), data: mfs.readFileSync(abs) };
      else out[abs] = null;
    }
    dirty.clear();
    return out;
  };
  const walk = (dir, out) => {
    // A written directory (mkdir, rename of a folder) may hide files; report what it holds
    // and mark it so the parent drops files it knew under it that are gone.
    out[`${dir}${path.sep}`] = 'dir';
    for (const name of mfs.readdirSync(dir)) {
      const abs = path.join(dir, String(name));
      const st = mfs.lstatSync(abs);
      if (st.isDirectory()) walk(abs, out);
      else if (st.isFile()) out[abs] = { mode: modeOf(st), data: mfs.readFileSync(abs) };
    }
  };

  /** Applies recorded effects (served tool calls): not reported back as agent writes. */
  const applyEffects = (effects) => {
    for (const e of effects) {
      if (e.data === null) {
        try {
          mfs.rmSync(e.abs, { force: true, recursive: true });
        } catch {}
      } else {
        mfs.mkdirSync(path.dirname(e.abs), { recursive: true });
        mfs.writeFileSync(e.abs, e.data, { mode: e.mode & 0o777 });
      }
    }
  };

  return {
    /** The volume (memfs loads and it is made now, if no call has made it yet). */
    volume: () => made(),
    /** Whether memfs is loaded (its volume made, or being made): before, none of its code can run. */
    loaded: () => volume !== undefined || loading,
    takeChanges,
    applyEffects,
    foreign,
    root: rootAbs,
  };
}
