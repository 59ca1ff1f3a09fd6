// Processes an agent starts with an env of their own (an MCP client's stdio transport passes
// PATH, HOME and four more; execa with `extendEnv: false`; `env -i`) are recorded and replayed as
// the agent's: tapedeck's variables (the preload, where to record, the replay's config, the OS
// sandbox's proxy) are given back to every process whatever env it got (keepGivenEnv in
// sandbox/preload/shared-process.mjs). Before, such a Node child ran unrecorded: its calls were
// missing from the recording and its replay diverged at its first call. Every kind of start: a
// Node child given only PATH, one given an empty env, one with NODE_OPTIONS of its own, a worker
// given an empty env; in the OS sandbox also a shell given only PATH that runs Node, and curl
// given only PATH under `record --isolate`. The replay reproduces every process's answers and
// values with the API running (it is never reached).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { replayExact, startServer, type TestServer, tempDir } from '../record/helpers.js';

const AGENT = fileURLToPath(new URL('fixtures/own-env-agent.mjs', import.meta.url));
const BWRAP = detectIsolation().level === 'bwrap';
const NODE_STARTS = ['agent', 'path-only', 'empty-env', 'own-options', 'worker'];

describe('processes started with an env of their own', () => {
  const tmp = tempDir('tapedeck-own-env-');
  let api: TestServer;
  let hits: string[] = [];
  beforeAll(async () => {
    api = await startServer((req, _body, res) => {
      hits.push((req.url ?? '').slice(1));
      res.end(`answer to ${req.url}`);
    });
  });
  afterAll(async () => {
    await api?.close().catch(() => undefined);
    tmp.remove();
  });

  async function record(name: string, env: Record<string, string>, isolate: boolean) {
    const out = path.join(tmp.dir, name);
    let stdout = '';
    const recorded = await recordCommand({
      command: [process.execPath, AGENT],
      env: { API_URL: api.url, ...env },
      out,
      stdio: 'pipe',
      isolate,
      onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
    });
    expect(recorded.exitCode).toBe(0);
    return { out, seen: stdout.trim() };
  }

  async function calledPaths(dir: string): Promise<string[]> {
    const recording = await readRecording(dir);
    return recording.events
      .filter((e) => e.type === 'http.exchange')
      .map((e) => new URL((e.payload as { request: { url: string } }).request.url).pathname.slice(1))
      .sort();
  }

  it.each(BWRAP ? (['none', 'bwrap'] as const) : (['none'] as const))(
    'Node children and a worker are recorded, and replay exactly at isolation %s',
    { timeout: 180_000 },
    async (isolation) => {
      hits = [];
      const { out, seen } = await record(`rec-${isolation}`, {}, false);
      expect(hits.sort()).toEqual([...NODE_STARTS].sort());
      const values = JSON.parse(seen) as unknown[];
      expect(values).toHaveLength(7);
      // Every process's call is in the recording.
      expect(await calledPaths(out)).toEqual([...NODE_STARTS].sort());

      hits = [];
      const result = await replayExact(out, path.join(tmp.dir, `replay-${isolation}`), isolation, { API_URL: api.url });
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(result.served.recording).toBe(NODE_STARTS.length);
      expect(result.output?.stdout.trim()).toBe(seen);
      expect(hits).toEqual([]);
    },
  );

  it.runIf(BWRAP)(
    'in the OS sandbox, a shell and curl given only PATH are recorded (--isolate) and replayed',
    { timeout: 180_000 },
    async () => {
      hits = [];
      const { out, seen } = await record('rec-isolated', { OWN_ENV_SHELL: '1', OWN_ENV_CURL: '1' }, true);
      const all = [...NODE_STARTS, 'shell', 'curl'].sort();
      expect(hits.sort()).toEqual(all);
      expect(JSON.parse(seen)).toHaveLength(9);
      expect(await calledPaths(out)).toEqual(all);

      hits = [];
      const result = await replayExact(out, path.join(tmp.dir, 'replay-isolated'), 'bwrap', { API_URL: api.url });
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(result.served.recording).toBe(all.length);
      expect(result.output?.stdout.trim()).toBe(seen);
      expect(hits).toEqual([]);
    },
  );
});
