// @ts-check
// Whether a TCP port listens in the network namespace of the process that asks, read from
// /proc/net/tcp{,6}: in the OS sandbox, its own loopback (a server of the agent's tree, a Unix
// socket of the tree carried over loopback). The recording's proxy door keeps such a connection
// inside; the sandbox's init does not name a connect to it, under way, as a refused attempt
// (ownPorts).
import fs from 'node:fs';

/** @param {number} port */
export function listensHere(port) {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(table, 'latin1');
    } catch {
      continue;
    }
    // Each line: "sl local_address rem_address st …"; st 0A is LISTEN.
    for (const line of text.split('\n').slice(1)) {
      const [, local = '', , state] = line.trim().split(/\s+/);
      if (state === '0A' && local.endsWith(`:${hex}`)) return true;
    }
  }
  return false;
}

/** The kernel's range for ports it hands a listener bound to port 0, in this network namespace. */
/** @returns {{ low: number, high: number }} */
export function ephemeralRange() {
  try {
    const [low = Number.NaN, high = Number.NaN] = fs
      .readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'latin1')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return { low, high };
  } catch {}
  return { low: 32768, high: 60999 };
}

/**
 * The loopback ports of strace lines' connects under way (EINPROGRESS) that the sandbox's own
 * listeners hold: one that listens as the line is read, or one in the kernel's ephemeral range —
 * the namespace starts empty, so such a port was handed to a listener of the tree (a Unix socket
 * carried over loopback, a server on port 0), which may have closed by the time the line is read.
 * A connect under way to another port nothing serves stays a refused attempt.
 * @param {string[]} lines @param {{ low: number, high: number }} range @param {(port: number) => boolean} [listens]
 * @returns {number[]}
 */
export function ownPorts(lines, range, listens = listensHere) {
  /** @type {number[]} */
  const own = [];
  for (const line of lines) {
    const m =
      /^\d+(?:<.*?>)?\s+connect\(.*sin6?_port=htons\((\d+)\).*(?:inet_addr\("127\.|"::1").*= -1 EINPROGRESS/.exec(line);
    const port = Number(m?.[1]);
    if (!m || own.includes(port)) continue;
    if ((port >= range.low && port <= range.high) || listens(port)) own.push(port);
  }
  return own;
}
