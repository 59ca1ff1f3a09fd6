// How the OS sandbox's launcher is started (sandbox.ts): bubblewrap's arguments (the read-only
// root, the private folders and what is bound back into them, the writable folders, this
// machine's keys hidden, /etc/hosts and the CA bundles replaced, seccomp), or the network
// namespace alone (the keeper's, or unshare's), each running the sandbox's init.
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { open, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { packagePath, packageRoot } from '../../src/package.js';
import { redactionKeyFile, sealKeyFile } from '../../src/recording/index.js';
import { BWRAP_BASE } from './detect.js';
import { hostsFile } from './hosts.js';
import type { NetKeeper } from './netns.js';
import type { OsSandboxOptions } from './sandbox.js';
import { seccompProgram } from './seccomp.js';

const INIT = packagePath('sandbox/os/init.mjs');
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

/** A path under a private folder that must be bound back in to stay visible. */
export function underMasked(p: string): boolean {
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
 * The tree a path under a private folder belongs to, bound back whole: the first folder below the
 * private one (`/tmp/proj/packages/agent` -> `/tmp/proj`), so what a program finds beside or above
 * its own path comes with it (a venv's `pyvenv.cfg` and `lib/` beside its `bin/python`, the
 * `node_modules` of a monorepo's root above a package, a tool's `share/`); a file directly in a
 * private folder (`/tmp/agent.mjs`) alone. `undefined` for a path not under one.
 */
export function privateTree(p: string): string | undefined {
  const masked = MASKED.find((m) => within(p, m));
  if (masked === undefined) return undefined;
  const first = path.relative(masked, p).split(path.sep)[0];
  return first ? path.join(masked, first) : p;
}

/** Variables that name where an agent's programs and modules are found (path lists). */
const PROGRAM_PATHS = ['PATH', 'PYTHONPATH', 'NODE_PATH', 'VIRTUAL_ENV', 'PYTHONHOME', 'CONDA_PREFIX'];

/**
 * The existing paths the agent's command and env point at: its arguments (the program, the scripts
 * it is run with), the program found on `PATH` when named bare (`python3 agent.py` with a venv's
 * `bin` first on `PATH`), and the folders of `PROGRAM_PATHS` (what its children are found by).
 * The launcher binds back, read-only, the tree of each that is under a private folder
 * (`privateTree`), as given and as its real path.
 */
export function pathsIn(argv: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  // A private folder itself is never shown whole (`--out /tmp`, /tmp on PATH): the agent's own
  // /tmp would be the real one, read-only.
  const add = (p: string) => {
    if (p.length < 4096 && !MASKED.includes(p) && existsSync(p)) out.push(p);
  };
  for (const arg of argv) {
    if (!arg || arg.startsWith('-') || arg.includes('\n')) continue;
    add(path.resolve(cwd, arg));
  }
  const program = argv[0];
  if (program && !program.includes('/'))
    for (const dir of (env.PATH ?? '').split(path.delimiter))
      if (path.isAbsolute(dir) && existsSync(path.join(dir, program))) {
        add(path.join(dir, program));
        break;
      }
  for (const name of PROGRAM_PATHS)
    for (const entry of (env[name] ?? '').split(path.delimiter)) if (path.isAbsolute(entry)) add(entry);
  return out;
}

/** The launcher's command line, and what it made private, replaced and bound (sandbox.ts's box keeps them). */
export interface Launcher {
  command: string;
  args: string[];
  /** The seccomp program's file, open for bwrap (stdio slot 4). */
  seccompFd?: number;
  /** The private folders inside (a fresh tmpfs each). */
  privateDirs: string[];
  /** The system CA bundles the run's CA stands in for inside. */
  substituted: Set<string>;
  /** Whether /etc/hosts inside is the file at `hostsPath` (bubblewrap only). */
  hostsBound: boolean;
}

/**
 * The launcher for `options`: files it needs are written under `tmp` (`hostsPath`, the CA bundle,
 * the seccomp program); what must be closed with the sandbox is added to `cleanup`.
 */
export async function launcher(
  options: OsSandboxOptions,
  keeper: NetKeeper | undefined,
  dirs: { tmp: string; inDir: string; hostsPath: string; cleanup: Array<() => Promise<unknown>> },
): Promise<Launcher> {
  const { isolation } = options;
  const { tmp, inDir, hostsPath, cleanup } = dirs;
  let args: string[];
  let command: string;
  let seccompFd: number | undefined;
  const privateDirs: string[] = [];
  /** The system CA bundles the run's CA stands in for inside. */
  const substituted = new Set<string>();
  let hostsBound = false;
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
      if (!existsSync(p)) continue;
      for (const shown of new Set([path.resolve(p), realpathSync(p)])) {
        const tree = privateTree(shown);
        if (tree !== undefined && existsSync(tree)) visible.add(tree);
      }
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
    await writeFile(hostsPath, hostsFile(options.hosts ?? []));
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
  return {
    command,
    args,
    ...(seccompFd !== undefined ? { seccompFd } : {}),
    privateDirs,
    substituted,
    hostsBound,
  };
}
