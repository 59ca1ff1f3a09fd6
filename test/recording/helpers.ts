// Shared helpers for the recording tests: temp directories and a small realistic run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import {
  type RecordingError,
  type RecordingWriter,
  readRecording,
  type WriterInit,
} from '../../src/recording/index.js';

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temporary directory, removed after the test file. */
export function tempDir(prefix = 'tapedeck-rec-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export const TEST_KEY = 'test-redaction-key';

export function init(name = 'test run', extra: Partial<WriterInit> = {}): WriterInit {
  return {
    name,
    agent: { command: ['node', 'agent.mjs'], cwd: '/work/agent' },
    runtime: { node: 'v20.0.0', platform: 'linux', sdkVersions: { openai: '6.0.0' } },
    createdAt: '2026-11-24T12:00:00.000Z',
    traceId: '0123456789abcdef0123456789abcdef',
    redaction: { key: TEST_KEY },
    ...extra,
  };
}

/** Writes one THINK step (model call + its http exchange) and one API_CALL tool step. */
export function writeTwoSteps(w: RecordingWriter, time = '2026-11-24T12:00:01.000Z'): void {
  w.append({ type: 'run.started', stepId: 0, time, payload: { command: ['node', 'agent.mjs'], cwd: '/work/agent' } });
  w.append({ type: 'step.started', stepId: 1, time, payload: { stateType: 'THINK', name: 'gpt-4o' } });
  w.append({
    type: 'http.exchange',
    stepId: 1,
    time,
    payload: {
      exchangeId: 'x1',
      request: {
        method: 'POST',
        url: 'http://127.0.0.1:9999/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body: w.body('{"model":"gpt-4o","messages":[{"role":"user","content":"book a flight"}]}', 'application/json'),
      },
      response: { status: 200, headers: {}, body: w.body('{"choices":[]}', 'application/json') },
      startedAt: time,
      durationMs: 12,
    },
  });
  w.append({
    type: 'model.called',
    stepId: 1,
    time,
    payload: {
      exchangeId: 'x1',
      provider: 'openai',
      api: 'chat.completions',
      model: 'gpt-4o',
      streamed: false,
      messages: [{ role: 'user', content: 'book a flight' }],
      output: { toolCalls: [{ id: 'c1', name: 'search_flights', arguments: '{"to":"LIS"}' }] },
      usage: { inputUncached: 10, cacheRead: 0, cacheWrite: 0, output: 5, reasoning: 0 },
      latencyMs: 12,
    },
  });
  w.append({ type: 'step.completed', stepId: 1, time, payload: { status: 'success', latencyMs: 12 } });
  w.append({
    type: 'step.started',
    stepId: 2,
    parentStepId: 1,
    time,
    payload: { stateType: 'API_CALL', name: 'search_flights' },
  });
  w.append({
    type: 'tool.called',
    stepId: 2,
    parentStepId: 1,
    time,
    payload: {
      kind: 'http',
      name: 'search_flights',
      stateType: 'API_CALL',
      args: { to: 'LIS' },
      result: { flights: [{ id: 'TP123' }] },
      mutating: false,
      latencyMs: 3,
    },
  });
  w.append({ type: 'step.completed', stepId: 2, parentStepId: 1, time, payload: { status: 'success', latencyMs: 3 } });
}

/** The RecordingError reading `dir` fails with (the test fails when it reads). */
export async function readError(dir: string, options?: Parameters<typeof readRecording>[1]): Promise<RecordingError> {
  try {
    await readRecording(dir, options);
  } catch (error) {
    expect((error as Error).name).toBe('RecordingError');
    return error as RecordingError;
  }
  throw new Error(`reading ${dir} did not fail`);
}
