// Programs an in-process run starts synchronously (execFileSync, spawnSync, execSync: the server's
// thread, and with it the child door, is blocked while they run) record into the run's recording
// like those started asynchronously: a Node tool's call and values, a Python tool's values. Their
// messages wait in the door's backlog until the thread is free; a run that ends right after them
// (its handler returns) used to close first and lose them all: the recording said "complete" with
// none of its calls. A program whose calls no capture layer sees (curl) is named in the manifest's
// `unwatched` and by verify. Two runs at once, each replaying exactly (in bwrap) with the API idle.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { record } from '../../src/record/index.js';
import { readManifest } from '../../src/recording/index.js';
import { runSyncChildrenAgent } from './fixtures/sync-children-agent.mjs';
import { FIXTURES, replayExact, tempDir } from './helpers.js';

// The API runs in a process of its own: a synchronous child blocks this thread, and a server
// in it would never answer the child's call.
const API = `const http = require('node:http');
const server = http.createServer((req, res) => { console.log('hit ' + req.url); res.end('answer to ' + req.url); });
server.listen(0, '127.0.0.1', () => console.log('port ' + server.address().port));`;

interface Api {
  url: string;
  close: () => void;
}

/** Starts the API process; each request's path is pushed to `hits` as the process reports it. */
async function startApi(hits: string[]): Promise<Api> {
  const child: ChildProcess = spawn(process.execPath, ['-e', API], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the API process ended (${code})`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (line.startsWith('port ')) resolve(line.slice(5));
      else if (line.startsWith('hit ')) hits.push(line.slice(4));
    });
  });
  return { url: `http://127.0.0.1:${port}`, close: () => child.kill() };
}

/** Waits until the API process has reported `n` hits (its lines come after the answers). */
async function hitsReach(hits: string[], n: number): Promise<void> {
  for (let i = 0; i < 200 && hits.length < n; i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

interface Event {
  type: string;
  payload: { request?: { url: string }; process?: string };
}

// The agent's command, as a server's recording names it. A replay without the OS sandbox refuses
// to run python3, so the replay needs bwrap.
const COMMAND = [process.execPath, '--import', 'tsx', path.join(FIXTURES, 'sync-children-agent.mjs')];
const BWRAP = detectIsolation().level === 'bwrap';

describe('programs an in-process run starts synchronously', () => {
  const tmp = tempDir('tapedeck-in-process-sync-');
  let api: Api;
  const hits: string[] = [];
  beforeAll(async () => {
    api = await startApi(hits);
  });
  afterAll(() => {
    api?.close();
    tmp.remove();
  });

  it("record into their run's recording, and replay from it exactly", { timeout: 180_000 }, async () => {
    const inputs = ['refund', 'late'].map((q) => ({ api: api.url, q }));
    const runs = await Promise.all(
      inputs.map((input) =>
        record({ out: path.join(tmp.dir, input.q), name: input.q, input, command: COMMAND }, () =>
          runSyncChildrenAgent(input),
        ),
      ),
    );
    await hitsReach(hits, 2);
    expect(hits.sort()).toEqual(['/node-tool?q=late', '/node-tool?q=refund']);
    for (const [i, run] of runs.entries()) {
      const q = inputs[i]?.q;
      const events = readFileSync(path.join(run.dir, 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Event);
      const urls = events
        .filter((e) => e.type === 'http.exchange')
        .map((e) => new URL(e.payload.request?.url ?? '').search);
      expect(urls).toEqual([`?q=${q}`]);
      // The Node tool's values and the Python tool's, each under its process's name.
      const processes = new Set(events.filter((e) => e.type === 'nondeterminism').map((e) => e.payload.process));
      expect([...processes].sort()).toEqual(['1', '2']);
      if (!BWRAP) continue;
      const before = hits.length;
      const result = await replayExact(run.dir, path.join(tmp.dir, `${q}-replay`), 'bwrap');
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(result.served.recording).toBe(1);
      expect(result.warnings ?? []).toEqual([]);
      expect(JSON.parse(result.output?.stdout.trim() ?? '{}')).toEqual(run.result);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(hits.length).toBe(before);
    }
  });

  it.runIf(BWRAP)(
    "are said to miss their run's values when the replay command starts them before its run's start",
    { timeout: 120_000 },
    async () => {
      // The command reads its input without runInput(): its run never starts, the programs it
      // starts are its own (0.1, 0.2), and the values the run's 1 and 2 drew go to none.
      const input = { api: api.url, q: 'unmarked' };
      const run = await record({ out: path.join(tmp.dir, 'unmarked'), name: 'unmarked', input, command: COMMAND }, () =>
        runSyncChildrenAgent(input),
      );
      const result = await replayExact(run.dir, path.join(tmp.dir, 'unmarked-replay'), 'bwrap', {
        SYNC_CHILDREN_INPUT: JSON.stringify(input),
      });
      expect(result.divergences).toEqual([]);
      const replayed = JSON.parse(result.output?.stdout.trim() ?? '{}') as typeof run.result;
      expect(replayed.node[1]).not.toBe(run.result.node[1]);
      expect(result.warnings).toContainEqual(
        expect.stringMatching(/started 2 processes before its run's start: .* processes 1, 2 drew .*call runInput\(\)/),
      );
      // Marked (the first test's replays), the same programs are the run's: nothing said.
    },
  );

  it('name a program whose calls no layer sees (curl), and leave what they could record unnamed', async () => {
    const input = { api: api.url, q: 'curl', curl: true };
    const run = await record({ out: path.join(tmp.dir, 'curl'), name: 'curl', input }, () =>
      runSyncChildrenAgent(input),
    );
    expect(run.result.curl).toBe('answer to /curl?q=curl');
    const manifest = await readManifest(run.dir);
    expect(manifest.unwatched).toEqual([{ program: 'curl', processes: 1 }]);
    // The Python tool opened no connection and ran with the hook: nothing said of it.
    expect(manifest.unhooked).toBeUndefined();
    expect(manifest.unrecorded).toBeUndefined();
  });
});
