// Profiles the desk server (bench/production's) with recording on: `node --cpu-prof` on the
// server while it serves BENCH_PROFILE_SESSIONS sessions (default 600), 50 at a time, against a
// model that answers at once, after BENCH_PROFILE_WARMUP (default 150); prints the top functions
// by self time, and by file, of the request thread and of the recording thread. Run:
// TAPEDECK_PG_URL=… npx tsx bench/profile-production.ts [RECORD=0 to profile it unrecorded]
// The inspector samples wall time: on a busy machine a function whose thread was descheduled
// shows as time spent in it. BENCH_PROFILE_PERF=1 samples the server's CPU instead, every thread,
// with `perf record` (JavaScript symbols from `--perf-basic-prof`), and prints its CPU a session by
// thread, and the request thread's and the recording thread's by the innermost JavaScript frame's
// file (a system call's kernel time goes to the frame that made it).
// `--perf-basic-prof` never retires a map entry, so code compiled where freed code was can show
// under the old name (a few tenths of a ms under node_modules/yaml, which the server never runs).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  createDeskDatabase,
  postSession,
  sessionInput,
  startDeskModel,
  startDeskServer,
} from '../test/production/desk-world.js';

const SESSIONS = Number(process.env.BENCH_PROFILE_SESSIONS ?? 600);
const PERF = process.env.BENCH_PROFILE_PERF === '1';
/** Sessions served before profiling starts (BENCH_PROFILE_WARMUP, default 150). */
const WARMUP = Number(process.env.BENCH_PROFILE_WARMUP ?? 150);
const admin = process.env.TAPEDECK_PG_URL;
if (!admin) throw new Error('set TAPEDECK_PG_URL');
const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-profile-'));
const profDir = join(tmp, 'prof');
const exitHook = join(tmp, 'profile-hook.mjs');
// --cpu-prof is not allowed in NODE_OPTIONS: the server profiles itself through the inspector.
writeFileSync(
  exitHook,
  `import inspector from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
const session = new inspector.Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 200 });
// Started after the warm-up (SIGUSR2), in every thread.
process.on('SIGUSR2', () => {
  session.post('Profiler.start');
  for (const sessionId of workers.keys()) toWorker(sessionId, 'Profiler.start');
});
// The recording thread too, through the NodeWorker domain: its profile is a message from it.
const workers = new Map();
let nextId = 1;
const toWorker = (sessionId, method, params = {}) => {
  const id = nextId++;
  session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) });
  return id;
};
session.on('NodeWorker.attachedToWorker', ({ params }) => {
  const { sessionId } = params;
  workers.set(sessionId, { stop: undefined, profile: undefined });
  toWorker(sessionId, 'Profiler.enable');
  toWorker(sessionId, 'Profiler.setSamplingInterval', { interval: 200 });
  toWorker(sessionId, 'Runtime.runIfWaitingForDebugger');
});
session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
  const w = workers.get(params.sessionId);
  const message = JSON.parse(params.message);
  if (w !== undefined && message.id === w.stop) w.done(message.result.profile);
});
session.post('NodeWorker.enable', { waitForDebuggerOnStart: true });
process.on('SIGTERM', () => {
  mkdirSync(${JSON.stringify(profDir)}, { recursive: true });
  const stopped = [...workers].map(([sessionId, w], i) => new Promise((resolve) => {
    w.done = (profile) => {
      writeFileSync(${JSON.stringify(profDir)} + '/worker-' + i + '.cpuprofile', JSON.stringify(profile));
      resolve();
    };
    w.stop = toWorker(sessionId, 'Profiler.stop');
  }));
  session.post('Profiler.stop', async (error, { profile }) => {
    writeFileSync(${JSON.stringify(join(profDir, 'server.cpuprofile'))}, JSON.stringify(profile));
    await Promise.race([Promise.all(stopped), new Promise((r) => setTimeout(r, 5000))]);
    process.exit(0);
  });
});
`,
);
const db = await createDeskDatabase(admin, { items: 20_000 });
const c = new pg.Client({ connectionString: db.adminUrl });
await c.connect();
await c.query(`ALTER ROLE ${db.role} RESET log_statement`);
await c.end();
const model = await startDeskModel(0);
const server = await startDeskServer({
  DATABASE_URL: db.url,
  OPENAI_API_KEY: `sk-test-${'bench'.repeat(6)}`,
  TAPEDECK_REDACTION_KEY: 'bench-production-key',
  POOL_MAX: '10',
  RECORDINGS: join(tmp, 'recordings'),
  RECORD: process.env.RECORD ?? '1',
  NODE_OPTIONS: PERF ? '--perf-basic-prof --interpreted-frames-native-stack' : `--import=${exitHook}`,
});
let n = 0;
const run = async (count: number) => {
  let left = count;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (left-- > 0) {
        const i = n++ % 2500;
        const answer = await postSession(
          server.url,
          sessionInput(i, model.url, `sk-live-bench${String(i).padStart(6, '0')}${'b'.repeat(16)}`),
        );
        if (answer.status !== 200) throw new Error(`session failed ${answer.status}`);
      }
    }),
  );
};
const pid = server.child.pid as number;
const perfData = join(tmp, 'perf.data');
let perf: ReturnType<typeof spawn> | undefined;
// Warm: the SDK loaded, the pools open, the optimising compiler done with the hot paths (the
// recorder's last: its CPU a session falls for ~1,500 sessions, see bench/production.ts WARMUP).
await run(WARMUP);
if (!PERF) process.kill(pid, 'SIGUSR2');
if (PERF) {
  perf = spawn('perf', ['record', '-q', '-F', '2000', '-g', '-p', String(pid), '-o', perfData], { stdio: 'inherit' });
  await new Promise((r) => setTimeout(r, 500));
}
const t0 = performance.now();
await run(SESSIONS);
process.stdout.write(`${SESSIONS} sessions in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
if (perf !== undefined) {
  const exited = new Promise((r) => perf?.once('exit', r));
  perf.kill('SIGINT');
  await exited;
}
await new Promise((r) => setTimeout(r, 1000));
await server.stop();
await model.close();
await db.drop();
rmSync(join(tmp, 'recordings'), { recursive: true, force: true });
if (PERF) {
  perfReport();
  rmSync(`/tmp/perf-${pid}.map`, { force: true });
  process.exit(0);
}

/**
 * The server's CPU a session from `perf script`, thread by thread (the request thread, the
 * recording thread, the rest: GC and compiler helpers, libuv's pool): by the innermost
 * JavaScript frame's file, and inclusive by function, for each of the first two.
 */
function perfReport(): void {
  const script = spawnSync('perf', ['script', '-i', perfData, '-F', 'tid,ip,sym'], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const byThread = new Map<number, string[][]>();
  for (const block of script.stdout.split('\n\n')) {
    const lines = block
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
    const tid = Number(lines.shift());
    if (!Number.isFinite(tid)) continue;
    const frames = lines.map((line) => line.replace(/^[0-9a-f]+ /, ''));
    if (!byThread.has(tid)) byThread.set(tid, []);
    byThread.get(tid)?.push(frames);
  }
  const msPerSample = 1000 / 2000 / SESSIONS;
  const jsSamples = (samples: string[][]) => samples.filter((f) => f.some((x) => x.startsWith('JS:'))).length;
  // The recording thread: the thread other than the request thread that runs the most JavaScript.
  const recordingTid = [...byThread]
    .filter(([tid]) => tid !== pid)
    .sort((a, b) => jsSamples(b[1]) - jsSamples(a[1]))[0]?.[0];
  const all = [...byThread.values()].reduce((n, s) => n + s.length, 0);
  const of = (tid: number | undefined) => (tid === undefined ? 0 : (byThread.get(tid)?.length ?? 0));
  process.stdout.write(
    `server CPU ${(all * msPerSample).toFixed(2)} ms/session (perf, 2000 samples/s; ${perfData}): request thread ${(of(pid) * msPerSample).toFixed(2)}, recording thread ${(of(recordingTid) * msPerSample).toFixed(2)}, the rest ${((all - of(pid) - of(recordingTid)) * msPerSample).toFixed(2)}\n`,
  );
  for (const [name, tid] of [
    ['request thread', pid],
    ['recording thread', recordingTid],
  ] as const) {
    if (tid !== undefined) threadReport(name, byThread.get(tid) ?? [], msPerSample);
  }
}

function threadReport(name: string, samples: string[][], msPerSample: number): void {
  const short = (frame: string) =>
    frame
      .replace(/^JS:[*^~]?/, '')
      .replace('file://', '')
      .replace(/\/\S*?\/(?=(node_modules|src|test|sandbox)\/)/, '');
  const byFile = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const frames of samples) {
    const js = frames.find((f) => f.startsWith('JS:'));
    const file = frames.some((f) => /Heap::|Scavenge|MarkCompact|MinorGC/.test(f))
      ? '(garbage collection)'
      : js === undefined
        ? '(no JavaScript frame)'
        : short(js)
            .replace(/^\S* ?/, '')
            .replace(/:\d+:\d+$/, '')
            .replace(/^(node_modules\/[^/]+).*/, '$1');
    byFile.set(file, (byFile.get(file) ?? 0) + 1);
    for (const f of new Set(frames.filter((x) => x.startsWith('JS:')).map(short)))
      inclusive.set(f, (inclusive.get(f) ?? 0) + 1);
  }
  const top = (m: Map<string, number>, k: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, k)
      .map(([name, n]) => `  ${(n * msPerSample).toFixed(3)} ms/session  ${name}`)
      .join('\n');
  process.stdout.write(
    `${name}: ${(samples.length * msPerSample).toFixed(2)} ms/session\nby the innermost JavaScript frame's file:\n${top(byFile, 40)}\ninclusive, by JavaScript function:\n${top(inclusive, 60)}\n`,
  );
}

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
for (const file of readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'))) report(join(profDir, file));

/** A profile's top functions by self time, and by file (server.cpuprofile: the request thread; worker-N: the recording thread). */
function report(file: string): void {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: Node[];
    samples: number[];
    timeDeltas: number[];
  };
  const self = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const byFn = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const t = (self.get(node.id) ?? 0) / 1000;
    total += t;
    const f = node.callFrame.url
      .replace(/^file:\/\//, '')
      .replace(/.*\/(node_modules\/[^/]+|src|test|sandbox)\//, '$1/');
    const key = `${node.callFrame.functionName || '(anon)'} ${f}:${node.callFrame.lineNumber + 1}`;
    byFn.set(key, (byFn.get(key) ?? 0) + t);
    byFile.set(f || node.callFrame.functionName, (byFile.get(f || node.callFrame.functionName) ?? 0) + t);
  }
  const top = (m: Map<string, number>, k: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, k)
      .map(([name, ms]) => `  ${(ms / SESSIONS).toFixed(3)} ms/session  ${((100 * ms) / total).toFixed(1)}%  ${name}`)
      .join('\n');
  process.stdout.write(
    `== ${file}\ntotal sampled ${(total / SESSIONS).toFixed(2)} ms/session (incl. idle)\nby file:\n${top(byFile, 40)}\nby function:\n${top(byFn, 60)}\n`,
  );
}
