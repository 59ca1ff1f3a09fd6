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

/**
 * The processes this one started and has not yet reaped (a zombie is listed too), each as
 * `pid command line`, so that a test's failure names what was left.
 */
export function ownChildren(): string[] {
  const out: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      out.push(`${name} ${cmdline || '(exited, not yet reaped)'}`);
    } catch {}
  }
  return out;
}
