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
import { fileBytes, readRecording, worldAt } from '../src/recording/index.js';
import { replay } from '../src/replay/index.js';
import { answer, MODEL_URL, writeSyntheticRun } from './lib/synthetic-run.js';

const STEPS = 1000;
const RECORDED_MS = 50;
const FILES = 50;

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
    const dir = path.join(tmp, 'recording');
    await writeSyntheticRun(dir, agent, path.join(tmp, 'workspace'), {
      steps: STEPS,
      recordedMs: RECORDED_MS,
      files: FILES,
    });
    const recorded = STEPS * RECORDED_MS;

    const baselineMs = await liveBaseline(agent);
    const t0 = performance.now();
    const result = await replay({
      recording: dir,
      mode: 'exact',
      trustRecording: true, // synthetic, written by the bench (no seal)
      env: { MODEL_URL },
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
      await writeFile(path.join(plain, p.replaceAll('/', '_')), fileBytes(e, recording.readBlob));
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
