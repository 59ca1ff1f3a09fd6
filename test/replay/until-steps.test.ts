// `replay --until K` stops the agent at step K whatever kind of step K and the steps before it
// are (file writes and reads, HTTP calls, an in-process tool() call, a request over a child's
// stdio), with the world as recorded at step K and the replay's steps 1..K all there. File steps
// are not questions to the replayer: the preload counts them against a budget the replayer renews
// (sandbox/preload/replay.mjs, sandbox/preload/shared-file-ops.mjs).
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { fileBytes, type Recording, readRecording, worldAt } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = fileURLToPath(new URL('./fixtures/until-steps-agent.mjs', import.meta.url));
const tmp = tempDir('tapedeck-until-steps-');
const workspace = path.join(tmp.dir, 'ws');
let api: TestServer;
let recording: Recording;

beforeAll(async () => {
  api = await startServer((_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
  rmSync(workspace, { recursive: true, force: true });
  mkdirSync(workspace, { recursive: true });
  const out = path.join(tmp.dir, 'rec');
  const result = await recordCommand({
    command: [process.execPath, AGENT],
    env: { TOOL_URL: api.url, WORKSPACE: workspace },
    fsRoot: workspace,
    out,
    stdio: 'ignore',
  });
  expect(result.exitCode).toBe(0);
  recording = await readRecording(out);
}, 60_000);

afterAll(async () => {
  await api?.close();
  if (!process.env.KEEP) tmp.remove();
});

/** A world folder's files: path -> content. */
function filesIn(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    try {
      out[name] = readFileSync(path.join(dir, name), 'utf8');
    } catch {}
  }
  return out;
}

/** The recorded world at `step`: path -> content. */
function recordedAt(step: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [p, entry] of Object.entries(worldAt(recording, step).fs.files))
    out[p] = Buffer.from(fileBytes(entry, recording.readBlob)).toString('utf8');
  return out;
}

const stepsOf = (r: Recording) => [...new Set(r.events.filter((e) => e.type === 'step.started').map((e) => e.stepId))];

async function replayUntil(k: number, isolation: 'none' | 'auto') {
  const out = path.join(tmp.dir, `until-${k}-${isolation}`);
  const result = await replay({
    recording: recording.dir,
    mode: 'exact',
    until: k,
    isolation,
    env: { TOOL_URL: api.url, WORKSPACE: workspace },
    out,
    stdio: 'ignore',
  });
  return { result, replayed: await readRecording(out) };
}

describe('replay --until K', () => {
  it('records steps of every kind: file writes in a row, HTTP, tool(), stdio RPC, a read', () => {
    const kinds = recording.events
      .filter((e) => e.type === 'tool.called')
      .map((e) => `${e.stepId}:${e.payload.kind}:${e.payload.name}`);
    expect(kinds).toEqual([
      '1:in-process:write_file',
      '2:in-process:write_file',
      '3:in-process:write_file',
      '4:http:GET /ping',
      '5:in-process:write_file',
      '6:in-process:lookup',
      '7:in-process:write_file',
      '8:in-process:append_file',
      '9:in-process:read_file',
      '10:mcp:echo',
      '11:http:POST /done',
      '12:in-process:write_file',
      '13:in-process:delete_file',
    ]);
  });

  it('stops at every step K with the world of step K and the steps 1..K', async () => {
    const last = Math.max(...stepsOf(recording));
    for (let k = 1; k < last; k++) {
      const { result, replayed } = await replayUntil(k, 'none');
      expect(result.divergences, `until ${k}`).toEqual([]);
      expect(filesIn(path.join(result.worldDir as string, 'fs')), `until ${k}`).toEqual(recordedAt(k));
      expect(stepsOf(replayed), `until ${k}`).toEqual(Array.from({ length: k }, (_, i) => i + 1));
    }
  }, 120_000);

  it('stops at a file step in the OS sandbox too, the world copy on disk', async () => {
    for (const k of [2, 10]) {
      const { result, replayed } = await replayUntil(k, 'auto');
      expect(filesIn(path.join(result.worldDir as string, 'fs')), `until ${k}`).toEqual(recordedAt(k));
      expect(stepsOf(replayed), `until ${k}`).toEqual(Array.from({ length: k }, (_, i) => i + 1));
    }
  }, 60_000);
});
