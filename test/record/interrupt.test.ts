// `tapedeck record` driving a script: SIGTERM or Ctrl-C to tapedeck goes to the agent, and the
// recording is still written whole and readable, marked interrupted, with the steps made so far;
// an agent that ignores the signal is killed by a second one.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecording } from '../../src/recording/index.js';
import { bin, root } from '../cli/run-cli.js';
import { processesWith } from '../support/processes.js';
import { startServer, type TestServer, tempDir } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
let api: TestServer;
let agent: string;
let hits = 0;
beforeAll(async () => {
  tmp = tempDir('tapedeck-record-interrupt-');
  api = await startServer((_req, _body, res) => {
    hits++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  // One call, then it waits for ever; with IGNORE it ignores SIGTERM and SIGINT.
  agent = path.join(tmp.dir, 'agent.mjs');
  writeFileSync(
    agent,
    `if (process.env.IGNORE) { process.on('SIGTERM', () => {}); process.on('SIGINT', () => {}); }
await (await fetch(process.env.API_URL + '/items')).text();
process.stdout.write('answered\\n');
setInterval(() => {}, 1 << 30);
`,
  );
});
afterAll(async () => {
  await api?.close();
  tmp?.remove();
});

async function recordThenSignal(name: string, env: Record<string, string>, signals: NodeJS.Signals[]) {
  const token = `rec-${randomBytes(6).toString('hex')}`;
  const out = path.join(tmp.dir, name);
  const before = hits;
  const child = spawn(process.execPath, [bin, 'record', '--out', out, '--', process.execPath, agent, token], {
    cwd: root,
    env: { ...process.env, NO_COLOR: '1', API_URL: api.url, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Bounded wait for the agent to have its one call's answer.
  const deadline = Date.now() + 60_000;
  while (!stdout.includes('answered') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  expect(hits).toBe(before + 1);
  // ... and for the recorder to have written that call: the agent sends it a moment after its
  // answer (at the end of that turn of its loop), and a signal in between kills it with the call
  // unsent (on a loaded machine, seen once). What is tested is the recorder's side of a signal.
  const events = path.join(out, 'events.jsonl');
  const written = () => existsSync(events) && readFileSync(events, 'utf8').includes('"http.exchange"');
  while (!written() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  for (const signal of signals) {
    child.kill(signal);
    // Two equal signals sent back to back may reach the process as one (the kernel keeps one
    // pending): the second goes a moment later.
    if (signals.length > 1) await new Promise((r) => setTimeout(r, 300));
  }
  return { code: await exited, stderr, out, token };
}

describe('record interrupted', () => {
  it('SIGTERM: passed to the agent, the recording closed whole and marked interrupted', async () => {
    const run = await recordThenSignal('term', {}, ['SIGTERM']);
    expect(run.code).toBe(130);
    expect(run.stderr).toMatch(/tapedeck: recorded \d+ steps \(interrupted, killed by SIGTERM\)/);
    expect(processesWith(run.token)).toEqual([]);
    const recording = await readRecording(run.out);
    expect(recording.manifest.status).toBe('interrupted');
    expect(recording.manifest.stopped).toMatchObject({ reason: 'interrupted', signal: 'SIGTERM' });
    expect(recording.events.filter((e) => e.type === 'http.exchange')).toHaveLength(1);
    expect(recording.events.at(-1)).toMatchObject({ type: 'run.completed', payload: { status: 'interrupted' } });
    expect(recording.warnings.join('\n')).toMatch(/the run interrupted by SIGTERM after step 1/);
  }, 120_000);

  it('an agent that ignores the signal: the second one kills it, and the recording is still written', async () => {
    const run = await recordThenSignal('ignored', { IGNORE: '1' }, ['SIGINT', 'SIGINT']);
    expect(run.code).toBe(130);
    expect(processesWith(run.token)).toEqual([]);
    const recording = await readRecording(run.out);
    expect(recording.manifest.status).toBe('interrupted');
    expect(recording.manifest.stopped?.doing).toMatch(/given SIGINT, and it ended by SIGKILL/);
  }, 120_000);
});
