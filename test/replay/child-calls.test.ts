// Node child processes in an exact replay: each runs under the replay preload (NODE_OPTIONS), a
// child's calls are answered from the recording, and the calls it answered from the fast index are
// recorded as served before its parent's next call is matched (the notices are written at the
// child's exit; before, they reached the replayer after the whole run, and the parent's next call
// was a divergence, "matched only out of order"). A child that makes no call reads no fast index.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordAgent, replayExact, startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = fileURLToPath(new URL('fixtures/child-calls-agent.mjs', import.meta.url));
const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);

describe('node child processes in a replay', () => {
  const tmp = tempDir('tapedeck-child-calls-');
  let api: TestServer;
  let hits = 0;
  beforeAll(async () => {
    api = await startServer((req, _body, res) => {
      hits++;
      res.end(`answer to ${req.url}`);
    });
  });
  afterAll(async () => {
    await api?.close().catch(() => undefined);
    tmp.remove();
  });

  it("answers the children's calls from the recording, in order, and the agent's values as recorded", {
    timeout: 180_000,
  }, async () => {
    const out = path.join(tmp.dir, 'rec');
    const recorded = await recordAgent(AGENT, out, { API_URL: api.url });
    expect(recorded.exitCode).toBe(0);
    const seen = recorded.stdout.trim();
    expect(JSON.parse(seen)).toHaveLength(6);
    expect(hits).toBe(4);
    hits = 0;
    for (const isolation of LEVELS) {
      const result = await replayExact(out, path.join(tmp.dir, `replay-${isolation}`), isolation, { API_URL: api.url });
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(result.served.recording).toBe(4);
      expect(result.output?.stdout.trim(), isolation).toBe(seen);
    }
    expect(hits).toBe(0);
  });
});
