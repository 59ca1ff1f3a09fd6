// Node processes an in-process run starts (a tool run as `node tool.js`, an MCP server over stdio)
// record into that run's recording (src/record/child-door.ts): two runs at once, each starting a
// child that calls the API and draws values (and a grandchild started with an env of its own that
// does too), and one that draws and ends in its first turn; each
// recording holds its own run's calls and its children's, and replays exactly (the replay's
// program starts them again) with the API idle.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { childDoorOpen } from '../../src/record/child-door.js';
import { record } from '../../src/record/index.js';
import { runChildrenAgent } from './fixtures/children-agent.mjs';
import { FIXTURES, replayExact, startServer, type TestServer, tempDir } from './helpers.js';

const AGENT = path.join(FIXTURES, 'children-agent.mjs');
const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);

describe('processes an in-process run starts', () => {
  const tmp = tempDir('tapedeck-in-process-children-');
  let api: TestServer;
  const hits: string[] = [];
  beforeAll(async () => {
    api = await startServer((req, _body, res) => {
      hits.push(req.url ?? '');
      res.end(`answer to ${req.url}`);
    });
  });
  afterAll(async () => {
    await api?.close().catch(() => undefined);
    tmp.remove();
  });

  it("record into their run's recording, and replay from it", { timeout: 180_000 }, async () => {
    const inputs = ['refund', 'late'].map((q) => ({ api: api.url, q }));
    const runs = await Promise.all(
      inputs.map((input) =>
        record({ out: path.join(tmp.dir, input.q), name: input.q, input, command: [process.execPath, AGENT] }, () =>
          runChildrenAgent(input),
        ),
      ),
    );
    expect(hits.sort()).toEqual([
      '/child?q=late',
      '/child?q=refund',
      '/grandchild?q=late',
      '/grandchild?q=refund',
      '/own?q=late',
      '/own?q=refund',
    ]);
    // The door closes with the last run, and its socket goes with it.
    expect(childDoorOpen()).toBe(false);
    for (const [i, run] of runs.entries()) {
      const q = inputs[i]?.q;
      const events = readFileSync(path.join(run.dir, 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; payload: { request?: { url: string }; process?: string } });
      const urls = events
        .filter((e) => e.type === 'http.exchange')
        .map((e) => new URL(e.payload.request?.url ?? '').pathname + new URL(e.payload.request?.url ?? '').search);
      expect(urls).toEqual([`/own?q=${q}`, `/child?q=${q}`, `/grandchild?q=${q}`]);
      const names = new Set(events.filter((e) => e.type === 'nondeterminism').map((e) => e.payload.process ?? 'run'));
      expect([...names].sort()).toEqual(['1', '1.1', '2', 'run']);
      for (const isolation of LEVELS) {
        const before = hits.length;
        const result = await replayExact(run.dir, path.join(tmp.dir, `${q}-replay-${isolation}`), isolation);
        expect(result.divergences, result.output?.stderr).toEqual([]);
        expect(result.served.recording).toBe(3);
        expect(JSON.parse(result.output?.stdout.trim() ?? '{}')).toEqual(run.result);
        expect(hits.length).toBe(before);
      }
    }
    expect(existsSync(tmp.dir)).toBe(true);
  });
});
