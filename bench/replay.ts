// Replay speed: exact replay of a 1,000-step synthetic recording whose model calls took 50 ms
// each when recorded, against (a) the recorded time and (b) the same agent talking to a live
// loopback server with no interception (baseline, measured here); and the time to materialise
// the world at step 500 against plainly writing the same files.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { materializeFs } from '../sandbox/index.js';
import { createRecordingWriter, readRecording, worldAt } from '../src/recording/index.js';
import { replay } from '../src/replay/index.js';

const STEPS = 1000;
const RECORDED_MS = 50;
const FILES = 50;

const AGENT = `
const url = process.env.MODEL_URL;
for (let i = 1; i <= ${STEPS}; i++) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-bench', messages: [{ role: 'user', content: 'step ' + i }] }) });
  await res.json();
}
`;

const answer = (i: number) =>
  JSON.stringify({
    id: `chatcmpl-${i}`,
    object: 'chat.completion',
    model: 'gpt-bench',
    choices: [{ index: 0, message: { role: 'assistant', content: `ok ${i}` }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
  });

async function writeSynthetic(dir: string, agent: string, fsRoot: string): Promise<void> {
  const writer = await createRecordingWriter(dir, {
    name: 'bench-1000',
    agent: { command: [process.execPath, agent], cwd: process.cwd() },
    world: { fsRoot },
  });
  const files: Record<string, { mode: number; size: number; sha256: string }> = {};
  for (let f = 0; f < FILES; f++) {
    const bytes = Buffer.from(`file ${f} v0\n`.repeat(20));
    files[`notes/f${f}.txt`] = { mode: 0o644, size: bytes.length, sha256: writer.putBlob(bytes) };
  }
  writer.writeSnapshot('pre', { fs: { files: { ...files } } });
  writer.append({
    type: 'run.started',
    stepId: 0,
    payload: { command: [process.execPath, agent], cwd: process.cwd() },
  });
  const start = Date.UTC(2026, 10, 24, 12);
  for (let i = 1; i <= STEPS; i++) {
    const exchangeId = `x${i}`;
    const body = JSON.stringify({ model: 'gpt-bench', messages: [{ role: 'user', content: `step ${i}` }] });
    writer.append({ type: 'step.started', stepId: i, payload: { stateType: 'FINALIZE', name: 'gpt-bench' } });
    writer.append({
      type: 'model.called',
      stepId: i,
      payload: {
        exchangeId,
        provider: 'openai',
        api: 'chat.completions',
        model: 'gpt-bench',
        streamed: false,
        messages: [{ role: 'user', content: `step ${i}` }],
        output: { text: `ok ${i}`, toolCalls: [] },
        latencyMs: RECORDED_MS,
      },
    });
    writer.append({
      type: 'http.exchange',
      stepId: i,
      payload: {
        exchangeId,
        request: {
          method: 'POST',
          url: 'http://127.0.0.1:9/v1/chat/completions',
          headers: { 'content-type': 'application/json' },
          body: writer.body(body, 'application/json'),
        },
        response: {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: writer.body(answer(i), 'application/json'),
        },
        startedAt: new Date(start + (i - 1) * RECORDED_MS).toISOString(),
        durationMs: RECORDED_MS,
      },
    });
    // Each step also changes a file, so the world at step k has history to fold.
    const path = `notes/f${i % FILES}.txt`;
    const bytes = Buffer.from(`file ${i % FILES} v${i}\n`.repeat(20));
    const after = { mode: 0o644, size: bytes.length, sha256: writer.putBlob(bytes) };
    writer.append({ type: 'fs.changed', stepId: i, payload: { path, op: 'modify', before: files[path], after } });
    files[path] = after;
    writer.append({ type: 'step.completed', stepId: i, payload: { status: 'success', latencyMs: RECORDED_MS } });
  }
  writer.writeSnapshot('post', { fs: { files } });
  writer.append({ type: 'run.completed', stepId: 0, payload: { status: 'complete', exitCode: 0 } });
  await writer.close('complete');
}

async function liveBaseline(agent: string): Promise<number> {
  let i = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(answer(++i));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
  const { spawn } = await import('node:child_process');
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [agent], { env: { ...process.env, MODEL_URL: url }, stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`baseline agent exited ${code}`))));
  });
  const ms = performance.now() - t0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return ms;
}

export async function run(): Promise<void> {
  const tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-bench-replay-'));
  try {
    const agent = path.join(tmp, 'agent.mjs');
    await writeFile(agent, AGENT);
    const dir = path.join(tmp, 'recording');
    await writeSynthetic(dir, agent, path.join(tmp, 'workspace'));
    const recorded = STEPS * RECORDED_MS;

    const baselineMs = await liveBaseline(agent);
    const t0 = performance.now();
    const result = await replay({
      recording: dir,
      mode: 'exact',
      env: { MODEL_URL: 'http://127.0.0.1:9/v1/chat/completions' },
      out: path.join(tmp, 'replay'),
      stdio: 'inherit',
    });
    const replayMs = performance.now() - t0;
    if (result.status !== 'complete' || result.served.recording !== STEPS) {
      throw new Error(
        `the replay did not run through: ${result.status}, ${result.served.recording} of ${STEPS} steps served`,
      );
    }
    if (result.divergences.length > 0) throw new Error(`the replay diverged: ${result.divergences[0]?.message}`);

    const recording = await readRecording(dir);
    const m0 = performance.now();
    const world = worldAt(recording, 500);
    await materializeFs(world.fs, recording.readBlob, path.join(tmp, 'world-500'));
    const materializeMs = performance.now() - m0;
    const p0 = performance.now();
    const plain = path.join(tmp, 'plain');
    await materializeFs({ files: {} }, recording.readBlob, plain);
    for (const [p, e] of Object.entries(world.fs.files)) {
      await writeFile(path.join(plain, p.replaceAll('/', '_')), recording.readBlob(e.sha256));
    }
    const plainMs = performance.now() - p0;

    const lines = [
      `exact replay, ${STEPS} steps recorded at ${RECORDED_MS} ms each (${(recorded / 1000).toFixed(0)} s recorded):`,
      `  replay time ${replayMs.toFixed(0)} ms; replay / recorded = ${(replayMs / recorded).toFixed(4)} (target <= 0.02)`,
      `  ${((STEPS / replayMs) * 1000).toFixed(0)} steps/s; ${(replayMs / STEPS).toFixed(2)} ms per step incl. agent start and sandbox`,
      `  baseline, same agent against a live loopback server without interception: ${baselineMs.toFixed(0)} ms; replay / baseline = ${(replayMs / baselineMs).toFixed(2)}`,
      `materialise the world at step 500 (${Object.keys(world.fs.files).length} files folded from ${500} changes): ${materializeMs.toFixed(1)} ms (target < 100 ms)`,
      `  baseline, writing the same files plainly: ${plainMs.toFixed(1)} ms; ratio ${(materializeMs / plainMs).toFixed(2)}`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
