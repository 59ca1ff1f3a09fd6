// A record() called inside a recorded run (an agent library recording its own work, under a server
// adapter's run) is part of that run: the session's recording holds every call and value, the inner
// call makes no recording of its own, its tags are the session's, and the session replays exactly
// (its command runs the same code, whose record() is part of the replay's run). Two sessions at once.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record } from '../../src/record/index.js';
import { type HttpExchangePayload, readRecording } from '../../src/recording/index.js';
import { runNestedAgent } from './fixtures/nested-agent.mjs';
import { FIXTURES, replayExact, startServer, type TestServer, tempDir } from './helpers.js';

// The fixture imports tapedeck's source: its replay command runs it with tsx.
const COMMAND = [process.execPath, '--import', 'tsx', path.join(FIXTURES, 'nested-agent.mjs')];

describe('record() inside a recorded run', () => {
  const tmp = tempDir('tapedeck-in-process-nested-');
  let api: TestServer;
  const hits: string[] = [];
  beforeAll(async () => {
    api = await startServer((req, _body, res) => {
      hits.push(req.url ?? '');
      res.end(`answer to ${new URL(req.url ?? '/', 'http://x').pathname}`);
    });
  });
  afterAll(async () => {
    await api?.close().catch(() => undefined);
    tmp.remove();
  });

  it('is part of that run: one recording with every call, which replays exactly', { timeout: 180_000 }, async () => {
    const innerOut = path.join(tmp.dir, 'inner');
    const inputs = ['refund', 'late'].map((q) => ({ api: api.url, q, innerOut: path.join(innerOut, q) }));
    const runs = await Promise.all(
      inputs.map((input) =>
        record({ out: path.join(tmp.dir, input.q), name: input.q, input, command: COMMAND }, () =>
          runNestedAgent(input),
        ),
      ),
    );
    expect(() => readdirSync(innerOut)).toThrow();
    for (const [i, run] of runs.entries()) {
      const q = inputs[i]?.q;
      expect(run.result).toMatchObject({ inner: 'answer to /inner', innerRecorded: false });
      const recording = await readRecording(run.dir);
      const paths = recording.events
        .filter((e) => e.type === 'http.exchange')
        .map((e) => new URL((e.payload as HttpExchangePayload).request.url).pathname);
      expect(paths).toEqual(['/outer', '/inner', '/after']);
      expect(recording.manifest.tags).toEqual(['inner']);
      const before = hits.length;
      const replayed = await replayExact(run.dir, path.join(tmp.dir, `${q}-replay`), 'none');
      expect(replayed.divergences, replayed.output?.stderr).toEqual([]);
      expect(replayed.warnings ?? []).toEqual([]);
      expect(JSON.parse(replayed.output?.stdout.trim() ?? '{}')).toEqual(run.result);
      expect(hits.length).toBe(before);
    }
  });
});
