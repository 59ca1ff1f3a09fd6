// The processes a test's agent left: found in /proc by a token on their command line.
import { readdirSync, readFileSync } from 'node:fs';

/** The pids of every running process (zombies left out) whose command line carries `token` as an argument. */
export function processesWith(token: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(token)) pids.push(Number(name));
    } catch {}
  }
  return pids;
}
