// The OS sandbox's cost, as ratios against the in-process path measured in the same run:
//   1. per replay: the same small replay (a Node agent, 10 calls) in the OS sandbox (bubblewrap:
//      namespaces, the init, the proxy and its CA, the world copy) and with the in-process
//      preload alone (isolation none); the added time per replay and the ratio;
//   2. per call: 300 calls answered through the proxy (a Python agent, urllib with HTTP_PROXY)
//      against 300 answered in-process (a Node agent, fetch), each net of its own agent's start
//      (an agent making no call, timed the same way).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { detectIsolation } from '../sandbox/os/detect.js';
import { createRecordingWriter } from '../src/recording/index.js';
import { replay } from '../src/replay/index.js';

const CALLS = 300;
const SMALL = 10;
const RUNS = 5;

const nodeAgent = (n: number) => `
for (let i = 1; i <= ${n}; i++) {
  const res = await fetch('http://api.test/items/' + i);
  await res.json();
}
`;
const pythonAgent = (n: number) => `
import urllib.request
for i in range(1, ${n} + 1):
    urllib.request.urlopen('http://api.test/items/%d' % i).read()
`;

async function writeRecordingOf(dir: string, command: string[], calls: number): Promise<void> {
  const writer = await createRecordingWriter(dir, { name: `bench-${calls}`, agent: { command, cwd: process.cwd() } });
  writer.writeSnapshot('pre', {});
  writer.append({ type: 'run.started', stepId: 0, payload: { command, cwd: process.cwd() } });
  const start = Date.UTC(2026, 10, 26, 12);
  for (let i = 1; i <= calls; i++) {
    writer.append({ type: 'step.started', stepId: i, payload: { stateType: 'API_CALL', name: 'GET /items' } });
    writer.append({
      type: 'http.exchange',
      stepId: i,
      payload: {
        exchangeId: `x${i}`,
        request: { method: 'GET', url: `http://api.test/items/${i}`, headers: {} },
        response: {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: writer.body(JSON.stringify({ id: i, name: `item ${i}` }), 'application/json'),
        },
        startedAt: new Date(start + i * 10).toISOString(),
        durationMs: 5,
      },
    });
    writer.append({ type: 'step.completed', stepId: i, payload: { status: 'success', latencyMs: 5 } });
  }
  writer.writeSnapshot('post', {});
  writer.append({ type: 'run.completed', stepId: 0, payload: { status: 'complete', exitCode: 0 } });
  await writer.close('complete');
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function timeReplay(dir: string, out: string, isolation: 'bwrap' | 'none', calls: number): Promise<number> {
  const t0 = performance.now();
  const result = await replay({
    recording: dir,
    mode: 'exact',
    isolation,
    out,
    stdio: 'ignore',
    trustRecording: true, // synthetic, written by the bench (no seal)
  });
  const ms = performance.now() - t0;
  if (result.status !== 'complete' || result.divergences.length > 0 || result.served.recording !== calls) {
    throw new Error(
      `replay (${isolation}) did not run through: ${result.status}, ${result.served.recording}/${calls} served, ${result.divergences[0]?.message ?? ''}`,
    );
  }
  await rm(out, { recursive: true, force: true });
  return ms;
}

export async function run(): Promise<void> {
  if (detectIsolation().level !== 'bwrap') {
    process.stdout.write(`no OS sandbox on this machine (${detectIsolation().notes.join('; ')}): nothing to measure\n`);
    return;
  }
  const tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-bench-sandbox-'));
  try {
    const file = async (name: string, text: string) => {
      const p = path.join(tmp, name);
      await writeFile(p, text);
      return p;
    };
    const recordingFor = async (name: string, command: string[], calls: number) => {
      const dir = path.join(tmp, name);
      await writeRecordingOf(dir, command, calls);
      return dir;
    };
    // 1. per replay
    const small = await recordingFor('small', [process.execPath, await file('small.mjs', nodeAgent(SMALL))], SMALL);
    const inProcess: number[] = [];
    const sandboxed: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      inProcess.push(await timeReplay(small, path.join(tmp, 'out'), 'none', SMALL));
      sandboxed.push(await timeReplay(small, path.join(tmp, 'out'), 'bwrap', SMALL));
    }
    const a = median(inProcess);
    const b = median(sandboxed);

    // 2. per call
    const nodeMany = await recordingFor(
      'node-many',
      [process.execPath, await file('many.mjs', nodeAgent(CALLS))],
      CALLS,
    );
    const nodeNone = await recordingFor('node-none', [process.execPath, await file('none.mjs', nodeAgent(0))], 0);
    const pyMany = await recordingFor('py-many', ['python3', await file('many.py', pythonAgent(CALLS))], CALLS);
    const pyNone = await recordingFor('py-none', ['python3', await file('none.py', pythonAgent(0))], 0);
    const per = async (many: string, none: string) => {
      const full: number[] = [];
      const empty: number[] = [];
      for (let r = 0; r < 3; r++) {
        full.push(await timeReplay(many, path.join(tmp, 'out'), 'bwrap', CALLS));
        empty.push(await timeReplay(none, path.join(tmp, 'out'), 'bwrap', 0));
      }
      return Math.max(0, median(full) - median(empty)) / CALLS;
    };
    const inProcessCall = await per(nodeMany, nodeNone);
    const proxyCall = await per(pyMany, pyNone);

    const lines = [
      `per replay (Node agent, ${SMALL} calls, median of ${RUNS}):`,
      `  in-process preload alone ${a.toFixed(0)} ms; OS sandbox ${b.toFixed(0)} ms; added ${(b - a).toFixed(0)} ms per replay; ratio ${(b / a).toFixed(2)}`,
      `per call (${CALLS} calls, net of the agent's start, median of 3):`,
      `  in-process (Node fetch, answered in the agent) ${inProcessCall.toFixed(2)} ms; through the proxy (Python urllib) ${proxyCall.toFixed(2)} ms; ratio ${(proxyCall / Math.max(inProcessCall, 0.001)).toFixed(1)}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
