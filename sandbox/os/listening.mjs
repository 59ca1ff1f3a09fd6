// @ts-check
// Whether a TCP port listens in the network namespace of the process that asks, read from
// /proc/net/tcp{,6}: in the OS sandbox, its own loopback (a server of the agent's tree, a Unix
// socket of the tree carried over loopback). The recording's proxy door keeps such a connection
// inside; the sandbox's init does not name a connect to it, under way, as a refused attempt.
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
