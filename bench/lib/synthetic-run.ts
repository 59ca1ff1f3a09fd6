// A synthetic recorded run of any length, replayable by a real agent: `steps` model calls made with
// fetch (OpenAI chat completions, recorded at `recordedMs` each), each step also changing one of
// `files` workspace files, so time travel and the world have history to fold. bench/replay.ts and
// bench/scale.ts replay it; the agent script it writes makes exactly the recorded calls.
import { writeFile } from 'node:fs/promises';
import { createRecordingWriter } from '../../src/recording/index.js';

export const MODEL_URL = 'http://127.0.0.1:9/v1/chat/completions';

/** The agent: `steps` sequential fetch calls to MODEL_URL (from the environment). */
export function agentSource(steps: number): string {
  return `
const url = process.env.MODEL_URL;
for (let i = 1; i <= ${steps}; i++) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-bench', messages: [{ role: 'user', content: 'step ' + i }] }) });
  await res.json();
}
`;
}

export const answer = (i: number): string =>
  JSON.stringify({
    id: `chatcmpl-${i}`,
    object: 'chat.completion',
    model: 'gpt-bench',
    choices: [{ index: 0, message: { role: 'assistant', content: `ok ${i}` }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
  });

export interface SyntheticRun {
  steps: number;
  recordedMs?: number;
  files?: number;
}

/** Writes the agent to `agent` and its recording to `dir`. */
export async function writeSyntheticRun(
  dir: string,
  agent: string,
  fsRoot: string,
  { steps, recordedMs = 50, files: fileCount = 50 }: SyntheticRun,
): Promise<void> {
  await writeFile(agent, agentSource(steps));
  const writer = await createRecordingWriter(dir, {
    name: `bench-${steps}`,
    agent: { command: [process.execPath, agent], cwd: process.cwd() },
    world: { fsRoot },
  });
  const files: Record<string, { mode: number; size: number; sha256: string }> = {};
  for (let f = 0; f < fileCount; f++) {
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
  for (let i = 1; i <= steps; i++) {
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
        usage: { inputUncached: 10, cacheRead: 0, cacheWrite: 0, output: 2, reasoning: 0 },
        latencyMs: recordedMs,
      },
    });
    writer.append({
      type: 'http.exchange',
      stepId: i,
      payload: {
        exchangeId,
        request: {
          method: 'POST',
          url: MODEL_URL,
          headers: { 'content-type': 'application/json' },
          body: writer.body(body, 'application/json'),
        },
        response: {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: writer.body(answer(i), 'application/json'),
        },
        startedAt: new Date(start + (i - 1) * recordedMs).toISOString(),
        durationMs: recordedMs,
      },
    });
    if (fileCount > 0) {
      // Each step also changes a file, so the world at step k has history to fold.
      const path = `notes/f${i % fileCount}.txt`;
      const bytes = Buffer.from(`file ${i % fileCount} v${i}\n`.repeat(20));
      const after = { mode: 0o644, size: bytes.length, sha256: writer.putBlob(bytes) };
      writer.append({ type: 'fs.changed', stepId: i, payload: { path, op: 'modify', before: files[path], after } });
      files[path] = after;
    }
    writer.append({ type: 'step.completed', stepId: i, payload: { status: 'success', latencyMs: recordedMs } });
  }
  writer.writeSnapshot('post', { fs: { files } });
  writer.append({ type: 'run.completed', stepId: 0, payload: { status: 'complete', exitCode: 0 } });
  await writer.close('complete');
}
