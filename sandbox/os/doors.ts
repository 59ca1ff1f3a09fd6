// The sandbox's doors at the addresses the run reached: where a program inside that skips the
// proxy (curl with NO_PROXY naming the host, psql -h, python with its proxies off) finds the
// database or service it reached when recorded — at another machine's IP address (made the
// sandbox's own by the keeper of its network namespace: netns.ts) or at a host name (an address of
// its own in the sandbox's /etc/hosts). One home for `record --isolate` (src/record/isolate.ts) and
// the replay (src/replay/isolate.ts): each side says what a door leads to.
import net from 'node:net';
import { TapedeckError } from '../../src/recording/index.js';
import { namedServices, whyNoDoor } from './netns.js';
import type { OsSandbox } from './sandbox.js';

type Door = net.Server & { insidePort: number };

/** Each connection to `listener` carried to `to` and back (a database relay, the real database). */
export function pipeConnections(listener: net.Server, to: { host: string; port: number }): void {
  listener.on('connection', (inside: net.Socket) => {
    const outside = net.connect(to.port, to.host);
    inside.pipe(outside).pipe(inside);
    inside.on('error', () => outside.destroy());
    outside.on('error', () => inside.destroy());
  });
}

/**
 * Doors at other machines' IP addresses (10.0.3.7:5432), each host:port once. Where the sandbox
 * cannot make the address its own (no keeper), a note says so and the run goes on without that
 * door; a listener that cannot open there ends the run (`SANDBOX_FAILED`). `opened` is told of each
 * door (to close it, to allow it).
 */
export class OtherMachineDoors {
  private readonly served = new Set<string>();
  readonly notes: string[] = [];

  constructor(
    private readonly box: OsSandbox,
    private readonly opened: (door: Door, at: { host: string; port: number }) => void,
  ) {}

  /** A door at host:port inside for `what` ("the database", "a recorded service"), or undefined. */
  async open(host: string, port: number, what: string): Promise<Door | undefined> {
    const key = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    if (this.served.has(key)) return undefined;
    this.served.add(key);
    if (!(await this.box.local(host))) {
      this.notes.push(
        `${what} at ${key} cannot be served at that address inside the sandbox on this machine (its network namespace has no keeper: unshare, nsenter or ip is missing, or user namespaces are allowed to bubblewrap alone); programs other than Node do not reach it there`,
      );
      return undefined;
    }
    const door = await this.box.listen(port, host).catch((error: Error) => {
      throw new TapedeckError('SANDBOX_FAILED', `Cannot open ${key} inside the sandbox: ${error.message}`);
    });
    this.opened(door, { host, port });
    return door;
  }
}

/**
 * Doors for the services the URLs name by a host name: each name resolves inside to its own
 * address (`box.named`), where a listener at the URL's port is handed to `serve` (the proxy's
 * `serveAs`, as if the client had asked the proxy for that host:port). What could not open is
 * named in `unserved` ("api.internal:443 (why)"), for a note: the run goes on without that door.
 */
export async function openNamedDoors(
  box: OsSandbox,
  urls: Iterable<string>,
  serve: (listener: net.Server, target: { host: string; port: number }) => void,
): Promise<{ listeners: Door[]; addresses: string[]; unserved: string[] }> {
  const listeners: Door[] = [];
  const addresses: string[] = [];
  const unserved: string[] = [];
  for (const target of namedServices(urls)) {
    const address = await box.named(target.host);
    if (!address) {
      unserved.push(`${target.host}:${target.port} (no mount namespace for /etc/hosts)`);
      continue;
    }
    const listener = await box.listen(target.port, address).catch((error: Error) => {
      unserved.push(`${target.host}:${target.port} (${whyNoDoor(error)})`);
      return undefined;
    });
    if (!listener) continue;
    listeners.push(listener);
    addresses.push(address);
    serve(listener, target);
  }
  return { listeners, addresses, unserved };
}
