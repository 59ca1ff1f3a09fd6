// Passes a bench child's stdout through, replacing each `@mark <name>` line with
// {"mark": "<name>", "atMs": <when it arrived, by this process's clock>}: the wall time between two
// marks as seen from outside the child. A replay serves the child's own clocks (performance.now,
// process.hrtime, Date) from its recording, so a replayed loop timing itself reports the recorded
// run's time; this process is not replayed.
import { performance } from 'node:perf_hooks';

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  const atMs = performance.now();
  pending += chunk;
  let end = pending.indexOf('\n');
  while (end >= 0) {
    const line = pending.slice(0, end);
    pending = pending.slice(end + 1);
    process.stdout.write(
      line.startsWith('@mark ') ? `${JSON.stringify({ mark: line.slice(6), atMs })}\n` : `${line}\n`,
    );
    end = pending.indexOf('\n');
  }
});
process.stdin.on('end', () => {
  if (pending !== '') process.stdout.write(pending);
});
