// Loaded with `node --import` by bench/startup.ts: at exit, appends the process's whole CPU time
// (user + system, microsecond resolution, from process start) to the file $TAPEDECK_CPU_LOG.
import { appendFileSync } from 'node:fs';

const log = process.env.TAPEDECK_CPU_LOG;
if (log) {
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    appendFileSync(log, `${(user + system) / 1000}\n`);
  });
}
