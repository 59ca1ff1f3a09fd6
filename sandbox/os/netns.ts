// The OS sandbox's network namespace, made and held from outside by a keeper: a shell that is root
// in a user namespace of its own (`unshare -r -n`), which owns the network namespace. The sandbox
// is started in it (`nsenter --user --net`, then bubblewrap's own nested user namespace, or the
// fallback's init), so its loopback is the keeper's to configure and no process inside can: the
// agent's user namespace is a child of the keeper's, with no capabilities (bwrap --cap-drop ALL,
// --disable-userns). The keeper adds addresses to that loopback when asked (`local`): a recorded
// database or service at 10.0.3.7 is then served inside at 10.0.3.7 itself, for any program
// (psql, curl, python), not only for the Node processes the preload redirects.
// The keeper also lowers the namespace's first unprivileged port to 0, so the doors of recorded
// services at their own ports (https://billing.svc.cluster.local at 443, http://10.0.3.7 at 80)
// can be opened inside by the sandbox's init, which has no capabilities; the agent may bind them
// too, in its own namespace, after tapedeck's doors have taken theirs.
// Where the keeper cannot start (no unshare, nsenter or ip; user namespaces allowed to bubblewrap
// alone), the sandbox starts as before: non-loopback addresses stay unreachable inside, and no
// door can open below port 1024.
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { which } from './detect.js';

/**
 * The keeper's program: brings loopback up, says so, then adds each address it reads (`4 a.b.c.d`
 * or `6 x::y`, checked before they are written) and answers `ok` or `no`, until its input closes
 * (tapedeck ended or closed the sandbox).
 */
const KEEPER = [
  'ip link set lo up || exit 1',
  '{ echo 0 > /proc/sys/net/ipv4/ip_unprivileged_port_start; } 2>/dev/null || true',
  'echo ready',
  'while read -r family address; do',
  '  case "$family" in',
  '    4) ip addr add "$address/32" dev lo ;;',
  '    6) ip -6 addr add "$address/128" dev lo nodad ;;',
  '    *) false ;;',
  '  esac >/dev/null 2>&1 && echo ok || echo no',
  'done',
].join('\n');

export interface NetKeeper {
  /** The keeper's pid (its namespaces are the sandbox's user and network parent). */
  readonly pid: number;
  /** `command args` run in the keeper's user and network namespaces. */
  enter(command: string, args: string[]): { command: string; args: string[] };
  /** Makes `address` (an IP literal) local inside; false when the keeper could not. */
  local(address: string): Promise<boolean>;
  /** Ends the keeper; resolves once it has exited and been reaped (at most 2 s), so none is left behind. */
  close(): Promise<void>;
}

/** An IP literal that is not loopback, in the form `ip` takes (brackets off), or undefined. */
export function nonLoopback(host: string): { family: 4 | 6; address: string } | undefined {
  const address = host.replace(/^\[|\]$/g, '');
  const family = net.isIP(address);
  if (family === 4) return address.startsWith('127.') || address === '0.0.0.0' ? undefined : { family, address };
  if (family === 6) {
    const plain = address.toLowerCase();
    if (plain === '::1' || plain === '::' || /^::ffff:127\./.test(plain) || plain.includes('%')) return undefined;
    return { family, address: plain };
  }
  return undefined;
}

/** The http(s) URLs among `urls` (values that are not one are skipped), with the port each names or implies. */
function httpTargets(urls: Iterable<string>): Array<{ hostname: string; port: number }> {
  const out: Array<{ hostname: string; port: number }> = [];
  for (const url of urls) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      continue;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
    out.push({ hostname: u.hostname, port: Number(u.port) || (u.protocol === 'https:' ? 443 : 80) });
  }
  return out;
}

/** The host:port of each URL at an IP address of another machine (10.0.3.7, [fd00::7]), once each. */
export function otherMachines(urls: Iterable<string>): Array<{ host: string; port: number }> {
  const out = new Map<string, { host: string; port: number }>();
  for (const { hostname, port } of httpTargets(urls)) {
    const ip = nonLoopback(hostname);
    if (ip) out.set(`${ip.address}:${port}`, { host: ip.address, port });
  }
  return [...out.values()];
}

/**
 * The host:port of each URL at a host NAME (api.internal:8080, billing.svc.cluster.local:443), once
 * each, lower case and without a final dot; not localhost, which is the sandbox's own already.
 */
export function namedServices(urls: Iterable<string>): Array<{ host: string; port: number }> {
  const out = new Map<string, { host: string; port: number }>();
  for (const { hostname, port } of httpTargets(urls)) {
    const host = hostname.toLowerCase().replace(/\.$/, '');
    if (net.isIP(host.replace(/^\[|\]$/g, '')) !== 0 || !/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(host)) continue;
    if (host === 'localhost') continue;
    out.set(`${host}:${port}`, { host, port });
  }
  return [...out.values()];
}

/** Why a door could not open inside (box.listen's error), in a few words for a note. */
export function whyNoDoor(error: Error): string {
  return /EACCES/.test(error.message)
    ? 'a port below 1024, which needs the keeper of the network namespace'
    : (/\b(E[A-Z]+)\b/.exec(error.message)?.[1] ?? error.message);
}

/** `done`, or after `ms` whichever comes first (the timer never outlives the wait). */
export async function untilOr(done: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([done, new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

let broken = false;

/**
 * The keeper's way does not work on this machine (the sandbox did not start in it): not tried again
 * by this process. `false` tries it again (a test that ran a sandbox without it).
 */
export function keeperFailed(failed = true): void {
  broken = failed;
}

/** Starts a keeper, or undefined when this machine cannot (the sandbox then starts without one). */
export async function startNetKeeper(unshare: string | undefined): Promise<NetKeeper | undefined> {
  const nsenter = which('nsenter');
  if (broken || !unshare || !nsenter || !which('ip')) return undefined;
  let child: ChildProcess;
  try {
    child = spawn(unshare, ['-r', '-n', '--', '/bin/sh', '-c', KEEPER], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
  } catch {
    return undefined;
  }
  const stdout = child.stdout;
  const stdin = child.stdin;
  if (!stdout || !stdin || child.pid === undefined) {
    child.kill('SIGKILL');
    return undefined;
  }
  const pid = child.pid;
  stdin.on('error', () => {});
  const answers: Array<(line: string) => void> = [];
  let rest = '';
  stdout.on('data', (data: Buffer) => {
    const lines = (rest + data.toString('utf8')).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) answers.shift()?.(line);
  });
  let ended = false;
  child.once('exit', () => {
    ended = true;
    for (const answer of answers.splice(0)) answer('no');
  });
  const next = () =>
    new Promise<string>((resolve) => {
      if (ended) resolve('no');
      else answers.push(resolve);
    });
  if ((await next()) !== 'ready') {
    if (!ended) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await untilOr(gone, 2000);
    }
    return undefined;
  }
  // The keeper must not keep this process alive, nor outlive it (its input closes with it).
  child.unref();
  for (const pipe of [stdout, stdin]) (pipe as unknown as { unref?: () => void }).unref?.();
  const made = new Map<string, Promise<boolean>>();
  return {
    pid,
    enter: (command, args) => ({
      command: nsenter,
      args: ['-t', String(pid), '--user', '--net', '--preserve-credentials', '--', command, ...args],
    }),
    local(host) {
      const ip = nonLoopback(host);
      if (!ip) return Promise.resolve(net.isIP(host.replace(/^\[|\]$/g, '')) !== 0);
      let done = made.get(ip.address);
      if (!done) {
        const answer = next();
        stdin.write(`${ip.family} ${ip.address}\n`);
        done = answer.then((line) => line === 'ok');
        made.set(ip.address, done);
      }
      return done;
    },
    async close() {
      stdin.end();
      if (ended) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await untilOr(gone, 2000);
    },
  };
}
