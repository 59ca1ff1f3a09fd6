// The benches' local API: a plain node:http server in its own process answering every request with
// the same 1 KiB JSON body (keep-alive), and the agent's own loop time per call, which the
// workloads print as a {"ms": <wall>, "cpuMs": <CPU>} line.
import { type ChildProcess, spawn } from 'node:child_process';
import type { Measure } from './process.js';

const SERVER = `
const http = require('node:http');
const answer = JSON.stringify({ ok: true, data: 'y'.repeat(1000) });
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }); res.end(answer); });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
`;

/** Starts the server; kill `child` when done. */
export function startLoopbackServer(): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout?.once('data', (d: Buffer) => resolve({ url: `http://127.0.0.1:${d.toString().trim()}`, child }));
    child.once('error', reject);
  });
}

/** The agent's loop time per call (wall, or CPU) over `calls` calls, from the line it printed. */
export function loopPerCall(m: Measure, key: 'ms' | 'cpuMs', calls: number): number {
  const lines = m.stdout.split('\n');
  if (key === 'ms') {
    // Timed from outside when the run was stamped (measure's `stamp`): a replayed loop's own
    // clock is the recorded run's.
    const mark = (name: string) =>
      lines
        .flatMap((l) => (l.startsWith('{"mark":') ? [JSON.parse(l) as { mark: string; atMs: number }] : []))
        .find((x) => x.mark === name)?.atMs;
    const [start, end] = [mark('start'), mark('end')];
    if (start !== undefined && end !== undefined) return (end - start) / calls;
  }
  const line = lines.find((l) => l.startsWith('{"ms":'));
  if (!line) throw new Error(`the agent printed no loop time: ${m.stdout.slice(-500)}`);
  return (JSON.parse(line) as Record<string, number>)[key]! / calls;
}
