// Profiles the desk server (bench/production's) with recording on: `node --cpu-prof` on the
// server while it serves BENCH_PROFILE_SESSIONS sessions (default 600), 50 at a time, against a
// model that answers at once; prints the top functions by self time, and by file. Run:
// TAPEDECK_PG_URL=… npx tsx bench/profile-production.ts [RECORD=0 to profile it unrecorded]
// The inspector samples wall time: on a busy machine a function whose thread was descheduled
// shows as time spent in it. BENCH_PROFILE_PERF=1 samples the request thread's CPU instead, with
// `perf record` (JavaScript symbols from `--perf-basic-prof`), and prints its CPU a session by the
// innermost JavaScript frame's file (a system call's kernel time goes to the frame that made it).
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
session.post('Profiler.start');
process.on('SIGTERM', () => {
  session.post('Profiler.stop', (error, { profile }) => {
    mkdirSync(${JSON.stringify(profDir)}, { recursive: true });
    writeFileSync(${JSON.stringify(join(profDir, 'server.cpuprofile'))}, JSON.stringify(profile));
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
if (PERF) {
  await run(150); // warm: the SDK loaded, the pools open, the optimising compiler done with the hot paths
  perf = spawn('perf', ['record', '-q', '-F', '2000', '-g', '-t', String(pid), '-o', perfData], { stdio: 'inherit' });
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

/** The request thread's CPU a session from `perf script`: by the innermost JavaScript frame's file, and inclusive by function. */
function perfReport(): void {
  const script = spawnSync('perf', ['script', '-i', perfData, '-F', 'ip,sym'], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const samples = script.stdout
    .split('\n\n')
    .map((block) =>
      block
        .split('\n')
        .map((line) => line.trim().replace(/^[0-9a-f]+ /, ''))
        .filter(Boolean),
    )
    .filter((frames) => frames.length > 0);
  const msPerSample = 1000 / 2000 / SESSIONS;
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
    `request thread CPU ${(samples.length * msPerSample).toFixed(2)} ms/session (perf, 2000 samples/s; ${perfData})\nby the innermost JavaScript frame's file:\n${top(byFile, 40)}\ninclusive, by JavaScript function:\n${top(inclusive, 60)}\n`,
  );
}

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile')) as string;
const profile = JSON.parse(readFileSync(join(profDir, file), 'utf8')) as {
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
  const f = node.callFrame.url.replace(/^file:\/\//, '').replace(/.*\/(node_modules\/[^/]+|src|test|sandbox)\//, '$1/');
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
  `total sampled ${(total / SESSIONS).toFixed(2)} ms/session (incl. idle)\nby file:\n${top(byFile, 40)}\nby function:\n${top(byFn, 60)}\n`,
);
process.stdout.write(`profile: ${join(profDir, file)}\n`);
