// /etc/hosts inside the OS sandbox (sandbox.ts binds it over the real one with bubblewrap and
// rewrites it in place as names are added): tapedeck's names first, then the machine's own.
import { readFileSync } from 'node:fs';

/** A host name as /etc/hosts takes it. */
export const HOST_NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/i;

/** The n-th (from 1) loopback address a named service gets inside: 127.77.0.1, 127.77.0.2, … */
export function namedAddress(n: number): string {
  return `127.77.${Math.floor(n / 256) % 256}.${n % 256}`;
}

export function realHosts(): string {
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
export function hostsFile(hosts: string[], named: ReadonlyMap<string, string> = new Map()): string {
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
