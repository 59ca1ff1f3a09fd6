// The session writes each step through its step log (src/record/step-log.ts): numbered in
// order, each event handed to the onEvent observer as appended, and the tool calls a model
// decided counted off, so `record` can say which one no step carried out.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordedEvent, RecordSession } from '../../src/record/index.js';
import { createRecordingWriter, readRecording } from '../../src/recording/index.js';
import { tempDir } from './helpers.js';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.remove());

const pid = 7;
const json = (value: unknown) => {
  const text = JSON.stringify(value);
  return { size: Buffer.byteLength(text), text };
};
/** An OpenAI chat call whose answer is `message`. */
const chat = (id: string, ts: number, message: Record<string, unknown>) => ({
  t: 'xchg',
  id,
  pid,
  ts,
  method: 'POST',
  url: 'https://api.openai.com/v1/chat/completions',
  headers: { 'content-type': 'application/json' },
  body: json({ model: 'gpt-4o', messages: [{ role: 'user', content: 'weather?' }] }),
  res: {
    ts: ts + 1,
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: json({
      id: `chatcmpl-${id}`,
      object: 'chat.completion',
      model: 'gpt-4o',
      choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    }),
  },
  end: ts + 2,
});

describe('the session writes its steps through one log', () => {
  it('numbers them, tells the observer of each event, and names a decided tool call no step carried out', async () => {
    const dir = path.join(tmp.dir, 'steps');
    const writer = await createRecordingWriter(dir, {
      name: 'steps',
      agent: { command: ['node', 'agent.mjs'], cwd: tmp.dir },
    });
    const seen: RecordedEvent[] = [];
    const session = new RecordSession(writer, { onEvent: (event) => void seen.push(event) });
    const decided = {
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
    };
    session.accept(chat('a', 1000, decided));
    session.accept(chat('b', 1010, { content: 'It is sunny.' }));
    await session.finish();
    await writer.close('complete');

    expect(session.steps).toBe(2);
    expect(session.lastOutput).toBe('It is sunny.');
    expect(session.toolCalls.silent()).toEqual([{ step: 1, toolCallId: 'call_1', name: 'get_weather' }]);
    const recording = await readRecording(dir);
    expect(seen.map((e) => [e.seq, e.type, e.stepId])).toEqual(recording.events.map((e) => [e.seq, e.type, e.stepId]));
    expect([...new Set(seen.map((e) => e.stepId))]).toEqual([1, 2]);
  });
});
