// Step barriers skipped while the world stands still (record --fs without --db,
// src/record/preload/record-quiet.mjs): the agent process watches the fs root itself, and a
// boundary at which nothing changed is not a round trip to the recorder. Changes must still land
// in the step during which they happened: a tool API's writes during its call (in a folder made
// during the run too), the agent's own writes between calls, another process's writes between
// calls, and nothing in the calls that changed nothing.
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { canonicalJson, readRecording, worldAt } from '../../src/recording/index.js';
import { startServer, type TestServer, tempDir } from './helpers.js';

interface QuietWorld {
  check(): Promise<boolean>;
  sent(message: unknown): void;
  close(): void;
}
const QUIET_MODULE = path.join(import.meta.dirname, '../../src/record/preload/record-quiet.mjs');
const { createQuietWorld } = (await import(QUIET_MODULE)) as {
  createQuietWorld(root: string, exclude: string[]): QuietWorld;
};

const tmp = tempDir('tapedeck-quiet-world-');
afterAll(() => tmp.remove());

describe('a quiet world (the check in the agent process)', () => {
  it('says quiet only when nothing under the root changed and nothing that drains was sent', async () => {
    const root = path.join(tmp.dir, 'unit');
    const own = path.join(root, 'recording');
    mkdirSync(path.join(root, 'a'), { recursive: true });
    mkdirSync(own);
    writeFileSync(path.join(root, 'a', 'f.txt'), 'one\n');
    const world = createQuietWorld(root, [own]);
    try {
      // The first boundary starts watching: a round trip.
      expect(await world.check()).toBe(false);
      expect(await world.check()).toBe(true);
      // Another process's write, made before the boundary.
      execFileSync('sh', ['-c', `echo two > '${path.join(root, 'a', 'f.txt')}'`]);
      expect(await world.check()).toBe(false);
      expect(await world.check()).toBe(true);
      // The recording's own folder is not the world.
      writeFileSync(path.join(own, 'events.jsonl'), '{}\n');
      expect(await world.check()).toBe(true);
      // A message whose handling drains the world: the recorder must handle it while the agent waits.
      world.sent({ t: 'tool' });
      expect(await world.check()).toBe(false);
      world.sent({ t: 'req' });
      world.sent({ t: 'chunk' });
      expect(await world.check()).toBe(true);
      // A folder made during the run is watched from then on: a write inside it later is seen.
      mkdirSync(path.join(root, 'new', 'deep'), { recursive: true });
      expect(await world.check()).toBe(false);
      expect(await world.check()).toBe(true);
      execFileSync('sh', ['-c', `echo x > '${path.join(root, 'new', 'deep', 'g.txt')}'`]);
      expect(await world.check()).toBe(false);
      // Removed and made again under the same name: watched again.
      rmSync(path.join(root, 'new'), { recursive: true });
      expect(await world.check()).toBe(false);
      mkdirSync(path.join(root, 'new'));
      expect(await world.check()).toBe(false);
      expect(await world.check()).toBe(true);
      writeFileSync(path.join(root, 'new', 'h.txt'), 'h\n');
      expect(await world.check()).toBe(false);
      // A folder moved in from outside the root, with a folder in it.
      const outside = path.join(tmp.dir, 'outside');
      mkdirSync(path.join(outside, 'sub'), { recursive: true });
      renameSync(outside, path.join(root, 'moved'));
      expect(await world.check()).toBe(false);
      expect(await world.check()).toBe(true);
      writeFileSync(path.join(root, 'moved', 'sub', 'i.txt'), 'i\n');
      expect(await world.check()).toBe(false);
      expect(await world.check()).toBe(true);
    } finally {
      world.close();
    }
  });

  it('is never quiet when it cannot watch the root', async () => {
    const world = createQuietWorld(path.join(tmp.dir, 'missing'), []);
    try {
      expect(await world.check()).toBe(false);
      expect(await world.check()).toBe(false);
    } finally {
      world.close();
    }
  });
});

const AGENT = `
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
const [url, ws] = [process.env.TOOL_URL, process.env.WORKSPACE];
const call = (p) => fetch(url + p, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }).then((r) => r.text());
const httpCall = (p) => new Promise((resolve, reject) => {
  http.get(url + p, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject);
});
await call('/read');                                  // 1 API_CALL: nothing changes
await call('/write?path=server/a.txt&text=a1');        // 2 API_CALL: the server makes server/a.txt (a new folder)
await call('/read');                                  // 3 API_CALL: nothing
writeFileSync(join(ws, 'agent.txt'), 'by the agent\\n'); // 4 FILE_WRITE: the agent, between calls
await call('/read');                                  // 5 API_CALL: nothing
execFileSync('sh', ['-c', 'echo by another process > "$0"', join(ws, 'other.txt')]); // 6: another process, between calls
await call('/write?path=server/a.txt&text=a2');        // 7 API_CALL: the server changes server/a.txt
await call('/read');                                  // 8 API_CALL: nothing
await call('/write?path=top.txt&text=t');             // 9 API_CALL: the server makes top.txt
writeFileSync(join(ws, 'agent.txt'), 'again\\n');       // 10 FILE_WRITE
await httpCall('/read');                              // 11 API_CALL (node:http): nothing
await httpCall('/write?path=server/b.txt&text=b');     // 12 API_CALL (node:http): the server makes server/b.txt
writeFileSync(join(ws, 'agent.txt'), 'last\\n');        // 13 FILE_WRITE
// A Request object: read from a copy of the response, not at the dispatcher.
await fetch(new Request(url + '/write?path=server/c.txt&text=c', { method: 'POST' })).then((r) => r.text()); // 14
await fetch(new Request(url + '/read')).then((r) => r.text()); // 15: nothing
writeFileSync(join(ws, 'agent.txt'), 'end\\n');         // 16 FILE_WRITE
`;

describe('record --fs with quiet step barriers', () => {
  let api: TestServer;
  const ws = path.join(tmp.dir, 'ws');
  beforeAll(async () => {
    api = await startServer((req, _body, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/write') {
        const file = path.join(ws, url.searchParams.get('path') ?? 'x');
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, `${url.searchParams.get('text')}\n`);
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  afterAll(() => api?.close());

  it('attributes every change to the step during which it happened', async () => {
    mkdirSync(ws, { recursive: true });
    writeFileSync(path.join(ws, 'keep.txt'), 'unchanged\n');
    const agent = path.join(tmp.dir, 'agent.mjs');
    writeFileSync(agent, AGENT);
    // The recording inside the fs root, as with `--fs .` and the default folder.
    const out = path.join(ws, 'recordings', 'rec');
    const result = await recordCommand({
      command: [process.execPath, agent],
      env: { TOOL_URL: api.url, WORKSPACE: ws },
      fsRoot: ws,
      out,
      stdio: 'ignore',
    });
    expect(result.exitCode).toBe(0);
    const recording = await readRecording(out);
    const steps = recording.events.filter((e) => e.type === 'step.started');
    const changes = steps.map((s) =>
      recording.events
        .filter((e) => e.stepId === s.stepId && e.type === 'fs.changed')
        .map((e) => {
          const p = e.payload as { path: string; op: string };
          return `${p.op} ${p.path}`;
        }),
    );
    expect(steps.map((s) => (s.payload as { stateType: string }).stateType)).toEqual([
      'API_CALL',
      'API_CALL',
      'API_CALL',
      'FILE_WRITE',
      'API_CALL',
      'FILE_WRITE',
      'API_CALL',
      'API_CALL',
      'API_CALL',
      'FILE_WRITE',
      'API_CALL',
      'API_CALL',
      'FILE_WRITE',
      'API_CALL',
      'API_CALL',
      'FILE_WRITE',
    ]);
    expect(changes).toEqual([
      [],
      ['create server/a.txt'],
      [],
      ['create agent.txt'],
      [],
      ['create other.txt'],
      ['modify server/a.txt'],
      [],
      ['create top.txt'],
      ['modify agent.txt'],
      [],
      ['create server/b.txt'],
      ['modify agent.txt'],
      ['create server/c.txt'],
      [],
      ['modify agent.txt'],
    ]);
    expect(canonicalJson(worldAt(recording, steps.length).fs)).toBe(canonicalJson(recording.post.fs));
  });
});
