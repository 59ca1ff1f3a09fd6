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

type FileLook = { path: string; gone: true } | { path: string; mode: number; key: string; data: string };
interface QuietWorld {
  check(): Promise<boolean | FileLook[]>;
  own(paths: string[]): FileLook[] | undefined;
  sent(message: unknown): void;
  close(): void;
}
/** What a look says of each file: its path and text, or gone. */
const said = (files: boolean | FileLook[] | undefined) =>
  Array.isArray(files)
    ? files.map((f) => ('gone' in f ? `${f.path} gone` : `${f.path} ${Buffer.from(f.data, 'base64').toString()}`))
    : files;
const QUIET_MODULE = path.join(import.meta.dirname, '../../src/record/preload/record-quiet.mjs');
const { createQuietWorld } = (await import(QUIET_MODULE)) as {
  createQuietWorld(root: string, exclude: string[]): QuietWorld;
};

const tmp = tempDir('tapedeck-quiet-world-');

/**
 * A tool API for the describe block it is called in: `/write?path=&text=` writes a file under `ws`
 * during the call, `/v1/chat/completions` answers as a model and writes `model.txt` during the
 * call, anything else does nothing. Its `url` once started.
 */
function toolServer(ws: string): { readonly url: string } {
  let api: TestServer | undefined;
  beforeAll(async () => {
    api = await startServer((req, _body, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/write') {
        const file = path.join(ws, url.searchParams.get('path') ?? 'x');
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, `${url.searchParams.get('text')}\n`);
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      if (url.pathname !== '/v1/chat/completions') {
        res.end('{"ok":true}');
        return;
      }
      writeFileSync(path.join(ws, 'model.txt'), 'written during the model call\n');
      res.end(JSON.stringify(MODEL_ANSWER));
    });
  });
  afterAll(() => api?.close());
  return {
    get url() {
      return api?.url ?? '';
    },
  };
}
/** A FAKE chat completion (the only fake: a model's answer shape for the recorder to classify). */
const MODEL_ANSWER = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'fake-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};

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
      // Another process's write, made before the boundary: the file read here, as it is now.
      execFileSync('sh', ['-c', `echo two > '${path.join(root, 'a', 'f.txt')}'`]);
      expect(said(await world.check())).toEqual(['a/f.txt two\n']);
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
      expect(said(await world.check())).toEqual(['new/deep/g.txt x\n']);
      // Removed (what was there is gone) and made again under the same name: watched again. A
      // folder made is the recorder's to look at (a round trip).
      rmSync(path.join(root, 'new'), { recursive: true });
      expect(said(await world.check())).toEqual(expect.arrayContaining(['new gone', 'new/deep/g.txt gone']));
      mkdirSync(path.join(root, 'new'));
      expect(await world.check()).toBe(false);
      expect(await world.check()).toBe(true);
      writeFileSync(path.join(root, 'new', 'h.txt'), 'h\n');
      expect(said(await world.check())).toEqual(['new/h.txt h\n']);
      // A folder moved in from outside the root, with a folder in it.
      const outside = path.join(tmp.dir, 'outside');
      mkdirSync(path.join(outside, 'sub'), { recursive: true });
      renameSync(outside, path.join(root, 'moved'));
      expect(await world.check()).toBe(false);
      expect(await world.check()).toBe(true);
      writeFileSync(path.join(root, 'moved', 'sub', 'i.txt'), 'i\n');
      expect(said(await world.check())).toEqual(['moved/sub/i.txt i\n']);
      expect(await world.check()).toBe(true);
    } finally {
      world.close();
    }
  });

  it('reads a few changed files itself, and leaves the rest to a round trip', async () => {
    const root = path.join(tmp.dir, 'looks');
    mkdirSync(path.join(root, 'a'), { recursive: true });
    for (const name of ['f.txt', 'g.txt', 'h.txt']) writeFileSync(path.join(root, 'a', name), `${name}\n`);
    const world = createQuietWorld(root, []);
    const sh = (script: string) => execFileSync('sh', ['-c', script], { cwd: root });
    try {
      expect(await world.check()).toBe(false);
      // Changed and removed files, by another process.
      sh('echo F > a/f.txt; rm a/g.txt; echo new > a/n.txt');
      expect(said(await world.check())).toEqual(['a/f.txt F\n', 'a/g.txt gone', 'a/n.txt new\n']);
      // A file over the size limit, a link, a folder made, more files than the limit: the recorder looks.
      writeFileSync(path.join(root, 'a', 'big.bin'), Buffer.alloc((1 << 20) + 1));
      expect(await world.check()).toBe(false);
      sh('ln -s f.txt a/link');
      expect(await world.check()).toBe(false);
      sh('mkdir a/d');
      expect(await world.check()).toBe(false);
      sh('for i in $(seq 1 65); do echo $i > a/m$i.txt; done');
      expect(await world.check()).toBe(false);
      expect(await world.check()).toBe(true);
      // A message that drains, with a change: a round trip all the same.
      sh('echo F2 > a/f.txt');
      world.sent({ t: 'tool' });
      expect(await world.check()).toBe(false);
      // A quiet message (it carries what changed) does not drain.
      world.sent({ t: 'tool', quiet: true, files: [] });
      expect(await world.check()).toBe(true);
    } finally {
      world.close();
    }
  });

  it("accounts for this process's own file calls as long as nobody changed the file since", async () => {
    const root = path.join(tmp.dir, 'own');
    mkdirSync(root, { recursive: true });
    writeFileSync(path.join(root, 'old.txt'), 'old\n');
    const world = createQuietWorld(root, []);
    const at = (rel: string) => path.join(root, rel);
    try {
      // Before the first boundary there is no baseline: the message drains as before.
      writeFileSync(at('f.txt'), 'zero\n');
      expect(world.own([at('f.txt')])).toBeUndefined();
      expect(await world.check()).toBe(false);
      writeFileSync(at('f.txt'), 'one\n');
      expect(said(world.own([at('f.txt')]))).toEqual(['f.txt one\n']);
      writeFileSync(at('f.txt'), 'two\n');
      expect(said(world.own([at('f.txt')]))).toEqual(['f.txt two\n']);
      renameSync(at('old.txt'), at('new.txt'));
      expect(said(world.own([at('old.txt'), at('new.txt')]))).toEqual(['old.txt gone', 'new.txt old\n']);
      // Everything the watcher saw was reported: the boundary is quiet.
      expect(await world.check()).toBe(true);
      // Another process changes the file right after this one wrote it: read again at the boundary.
      writeFileSync(at('f.txt'), 'three\n');
      expect(said(world.own([at('f.txt')]))).toEqual(['f.txt three\n']);
      execFileSync('sh', ['-c', `echo four > '${at('f.txt')}'`]);
      expect(said(await world.check())).toEqual(['f.txt four\n']);
      // A change this process did not report, already seen when it makes its own: the recorder
      // drains both with the call's message (its step), as before.
      execFileSync('sh', ['-c', `echo other > '${at('o.txt')}'`]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      writeFileSync(at('f.txt'), 'five\n');
      expect(world.own([at('f.txt')])).toBeUndefined();
      expect(await world.check()).toEqual(expect.any(Array));
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
  const ws = path.join(tmp.dir, 'ws');
  const api = toolServer(ws);

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

// The agent's own file calls in every form, other processes' writes, and the server's writes
// during calls, recorded twice: with quiet barriers (the agent reads what changed itself) and
// with a round trip at every boundary (onEvent turns quiet barriers off). Each step must hold
// the same changes, with the same contents.
const MIXED = `
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { join } from 'node:path';
const [url, ws] = [process.env.TOOL_URL, process.env.WORKSPACE];
const at = (p) => join(ws, p);
const call = (p) => fetch(url + p, { method: 'POST', body: '{}' }).then((r) => r.text());
const sh = (script) => execFileSync('sh', ['-c', script], { cwd: ws });
await call('/read');
fs.writeFileSync(at('a.txt'), 'a\\n');
await call('/read');
fs.appendFileSync(at('a.txt'), 'more\\n');
await call('/read');
await fs.promises.writeFile(at('b.txt'), 'b\\n');
await call('/read');
await new Promise((resolve, reject) => fs.writeFile(at('c.txt'), 'c\\n', (e) => (e ? reject(e) : resolve())));
await call('/read');
fs.renameSync(at('a.txt'), at('d/a2.txt'));
await call('/read');
fs.unlinkSync(at('b.txt'));
await call('/read');
fs.rmSync(at('sub'), { recursive: true });
await call('/read');
fs.writeFileSync(at('big.bin'), Buffer.alloc(2 * 1024 * 1024, 7));
await call('/read');
sh('echo by another process > other.txt');
await call('/write?path=d/server.txt&text=s1');
await call('/write?path=keep.txt&text=changed');
fs.writeFileSync(at('keep.txt'), 'changed\\n');
await call('/read');
fs.mkdirSync(at('made'));
fs.writeFileSync(at('made/f.txt'), 'f\\n');
await call('/read');
fs.writeFileSync(at('twice.txt'), '1\\n');
fs.writeFileSync(at('twice.txt'), '2\\n');
await fs.promises.rm(at('c.txt'));
await call('/read');
// A model call during which the model's server writes a file: a step of its own after the model's.
await fetch(url + '/v1/chat/completions', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }] }),
}).then((r) => r.json());
await call('/read');
fs.writeFileSync(at('last.txt'), 'end\\n');
`;

describe('record --fs: files the agent reads itself', () => {
  const ws = path.join(tmp.dir, 'mixed');
  const api = toolServer(ws);

  /** Each step's name and its fs changes (op, path, content digest), in order. */
  async function record(quiet: boolean) {
    rmSync(ws, { recursive: true, force: true });
    mkdirSync(path.join(ws, 'd'), { recursive: true });
    mkdirSync(path.join(ws, 'sub', 'deeper'), { recursive: true });
    writeFileSync(path.join(ws, 'sub', 'x.txt'), 'x\n');
    writeFileSync(path.join(ws, 'sub', 'deeper', 'y.txt'), 'y\n');
    writeFileSync(path.join(ws, 'keep.txt'), 'keep\n');
    const agent = path.join(tmp.dir, 'mixed-agent.mjs');
    writeFileSync(agent, MIXED);
    const out = path.join(tmp.dir, `mixed-${quiet ? 'quiet' : 'round-trips'}`);
    const result = await recordCommand({
      command: [process.execPath, agent],
      env: { TOOL_URL: api.url, WORKSPACE: ws },
      fsRoot: ws,
      out,
      stdio: 'ignore',
      ...(quiet ? {} : { onEvent: () => {} }),
    });
    expect(result.exitCode).toBe(0);
    const recording = await readRecording(out);
    const steps = recording.events.filter((e) => e.type === 'step.started');
    expect(canonicalJson(worldAt(recording, steps.length).fs)).toBe(canonicalJson(recording.post.fs));
    return steps.map((s) => [
      (s.payload as { name: string }).name,
      ...recording.events
        .filter((e) => e.stepId === s.stepId && e.type === 'fs.changed')
        .map((e) => {
          const p = e.payload as { path: string; op: string; after?: { sha256: string; mode: number } };
          return `${p.op} ${p.path} ${p.after?.sha256.slice(0, 12) ?? ''} ${p.after?.mode ?? ''}`;
        }),
    ]);
  }

  it('gives each step the changes a round trip at every boundary gives', async () => {
    const quiet = await record(true);
    const exact = await record(false);
    // Except a file written twice in one turn: the round-trip path drains for the first write's
    // message only once the second is made, so the first step holds the second's content and the
    // second step nothing; each write's own message carries what it wrote.
    const but = (steps: string[][]) => steps.map((s) => s.filter((c) => !c.includes('twice.txt')));
    expect(but(quiet)).toEqual(but(exact));
    // What the steps hold, in short: the agent's writes in its write steps, other processes'
    // between calls, the server's in its calls.
    const changed = quiet
      .filter((s) => s.length > 1)
      .map((s) => [s[0], ...s.slice(1).map((c) => c.split(' ').slice(0, 2).join(' '))]);
    expect(changed).toEqual([
      ['write_file', 'create a.txt'],
      ['append_file', 'modify a.txt'],
      ['write_file', 'create b.txt'],
      ['write_file', 'create c.txt'],
      ['rename_file', 'delete a.txt', 'create d/a2.txt'],
      ['delete_file', 'delete b.txt'],
      ['delete_file', 'delete sub/deeper/y.txt', 'delete sub/x.txt'],
      ['write_file', 'create big.bin'],
      ['file changes', 'create other.txt'],
      ['POST /write', 'create d/server.txt'],
      ['POST /write', 'modify keep.txt'],
      ['write_file', 'create made/f.txt'],
      ['write_file', 'create twice.txt'],
      ['write_file', 'modify twice.txt'],
      ['delete_file', 'delete c.txt'],
      ['file changes', 'create model.txt'],
      ['write_file', 'create last.txt'],
    ]);
    // The model's own step holds no change, and the file's step comes right after it.
    const model = quiet.findIndex((step) => step[0] === 'fake-model');
    expect(quiet[model]).toEqual(['fake-model']);
    expect(quiet[model + 1]?.[0]).toBe('file changes');
    expect(quiet[model + 1]?.[1]).toMatch(/^create model\.txt /);
  });
});
