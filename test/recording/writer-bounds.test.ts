// The writer takes what an agent, a tool or a model server hands it, and the reader refuses lines
// nested past MAX_JSON_DEPTH or longer than MAX_LINE_BYTES: whatever the writer is given, what it
// writes reads back. A value nested past the limit is kept as its JSON text from that level down
// (any depth, in any event's payload); a model call's prompt past what a line holds is cut, its
// exchange's body keeping every byte; values within the limits read back exactly as given.
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bodyText,
  createRecordingWriter,
  MAX_JSON_DEPTH,
  MAX_LINE_BYTES,
  type RecordingWriter,
  readRecording,
} from '../../src/recording/index.js';
import { init, tempDir } from './helpers.js';

const time = '2026-11-24T12:00:01.000Z';
const nested = (depth: number, kind: 'array' | 'object'): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { k: value };
  return value;
};
const depthOf = (value: unknown): number => {
  let depth = 0;
  for (let v = value; v !== null && typeof v === 'object'; v = Array.isArray(v) ? v[0] : (v as { k: unknown }).k)
    depth++;
  return depth;
};

/** Appends a model call and a tool call carrying `value` where an agent's values go. */
function appendCarrying(w: RecordingWriter, value: unknown, prompt: string): void {
  w.append({ type: 'run.started', stepId: 0, time, payload: { command: ['node', 'agent.mjs'], cwd: '/work' } });
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
        headers: {},
        body: w.body(JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: prompt }] })),
      },
      response: { status: 200, headers: {}, body: w.body('{"choices":[]}') },
      startedAt: time,
      durationMs: 1,
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
      messages: [{ role: 'user', content: prompt, extra: value }],
      output: { toolCalls: [] },
      usage: { inputUncached: 1, cacheRead: 0, cacheWrite: 0, output: 1, reasoning: 0 },
      latencyMs: 1,
    },
  });
  w.append({ type: 'step.completed', stepId: 1, time, payload: { status: 'success', latencyMs: 1 } });
  w.append({ type: 'step.started', stepId: 2, time, payload: { stateType: 'API_CALL', name: 'tool' } });
  w.append({
    type: 'tool.called',
    stepId: 2,
    time,
    payload: {
      kind: 'in-process',
      name: 'tool',
      stateType: 'API_CALL',
      args: value,
      result: value,
      mutating: false,
      latencyMs: 1,
    },
  });
  w.append({ type: 'step.completed', stepId: 2, time, payload: { status: 'success', latencyMs: 1 } });
  w.append({ type: 'run.completed', stepId: 0, time, payload: { status: 'complete', exitCode: 0 } });
}

describe('what the writer is handed, it writes readable', () => {
  it('values nested to any depth: within the limit exactly, past it as their JSON text', async () => {
    const root = tempDir();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: 1, max: 260 }), fc.integer({ min: 261, max: 30_000 })),
        fc.constantFrom<'array' | 'object'>('array', 'object'),
        async (depth, kind) => {
          const dir = join(root, `run-${n++}`);
          const w = await createRecordingWriter(dir, init());
          const value = nested(depth, kind);
          appendCarrying(w, value, 'book a flight');
          await w.close('complete');
          const rec = await readRecording(dir);
          const tool = rec.events.find((e) => e.type === 'tool.called');
          if (tool?.type !== 'tool.called') throw new Error('no tool call');
          // The envelope and the payload object are the line's first two levels.
          if (depth <= MAX_JSON_DEPTH - 2) expect(tool.payload.args).toEqual(value);
          else {
            expect(depthOf(tool.payload.args)).toBeLessThan(MAX_JSON_DEPTH);
            expect(JSON.stringify(tool.payload.args)).toContain(kind === 'array' ? '[[' : '{\\"k\\"');
          }
        },
      ),
      { seed: 200, numRuns: 40 },
    );
  }, 60_000);

  it("a model call's prompt past what one line holds: cut in the model call, whole in the exchange's body", async () => {
    const dir = join(tempDir(), 'huge-prompt');
    const w = await createRecordingWriter(dir, init());
    const prompt = `start ${'x'.repeat(MAX_LINE_BYTES + 1024)} end`;
    appendCarrying(w, null, prompt);
    await w.close('complete');
    const rec = await readRecording(dir);
    const call = rec.events.find((e) => e.type === 'model.called');
    if (call?.type !== 'model.called') throw new Error('no model call');
    const content = String((call.payload.messages[0] as { content: string }).content);
    expect(content.startsWith('start xxx')).toBe(true);
    expect(content).toMatch(/… \[cut by tapedeck: \d+ characters\]$/);
    const exchange = rec.events.find((e) => e.type === 'http.exchange');
    if (exchange?.type !== 'http.exchange') throw new Error('no exchange');
    expect(bodyText(rec, exchange.payload.request.body)).toContain(' end"}]}');
  }, 60_000);
});
