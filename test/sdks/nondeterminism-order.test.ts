// MCP clients keep a server-notification stream open for the whole run, so there is nearly
// always a call in flight. The values the agent reads (clock, random, uuid) are handed back by a
// replay in the order the recording lists them; this checks that a long-lived stream does not
// reorder them: values read before a short streamed call must stay before values read during it.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordSession } from '../../src/record/index.js';
import { createRecordingWriter, readRecording } from '../../src/recording/index.js';
import { tempDir } from './harness.js';

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.remove());

const headers = { 'content-type': 'text/event-stream' };
const pid = 4242;

describe('nondeterministic values next to a long-lived stream', () => {
  it('are recorded in the order the agent read them', async () => {
    const dir = path.join(tmp.dir, 'order');
    const writer = await createRecordingWriter(dir, {
      name: 'order',
      agent: { command: ['node', 'agent.mjs'], cwd: tmp.dir },
    });
    const session = new RecordSession(writer);
    const stream = { id: 's', url: 'http://127.0.0.1:9/mcp' };
    const call = { id: 'l', url: 'http://127.0.0.1:9/slow' };
    const messages = [
      // The notification stream opens and stays open.
      { t: 'req', id: stream.id, pid, ts: 1000, method: 'GET', url: stream.url, headers: {} },
      { t: 'res', id: stream.id, ts: 1001, status: 200, headers, stream: true },
      // The agent reads a value while only the stream is open…
      { t: 'nd', pid, ts: 1002, batches: { random: [0.1], clock: [1002] } },
      // …then a streamed call starts, and the agent reads another value during it.
      { t: 'req', id: call.id, pid, ts: 1003, method: 'GET', url: call.url, headers: {} },
      { t: 'res', id: call.id, ts: 1004, status: 200, headers, stream: true },
      { t: 'nd', pid, ts: 1005, batches: { random: [0.2], clock: [1005] } },
      { t: 'chunk', id: call.id, off: 1, data: 'data: 1\n\n' },
      { t: 'end', id: call.id, ts: 1006 },
      { t: 'nd', pid, ts: 1007, batches: { random: [0.3], clock: [1007] } },
      // The client closes the notification stream at the end.
      { t: 'end', id: stream.id, ts: 1008, error: { code: 'AbortError', message: 'This operation was aborted' } },
    ];
    for (const message of messages) session.accept(message);
    await session.finish();
    await writer.close('complete');

    const recording = await readRecording(dir);
    const values = (kind: string) =>
      recording.events.flatMap((e) => (e.type === 'nondeterminism' && e.payload.kind === kind ? e.payload.values : []));
    expect(values('random')).toEqual([0.1, 0.2, 0.3]);
    expect(values('clock')).toEqual([1002, 1005, 1007]);
  });
});
