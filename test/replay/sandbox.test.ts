// The sandbox an agent replays in: its files live in memory (node:fs, fs/promises and ESM named
// imports alike), nothing it writes reaches the disk, clock/random/uuid come from the recording,
// and connections other than the sandbox database are blocked and reported.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobRelativePath, readRecording } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { writeRecording } from './build.js';

/** An exact replay of a recording the test wrote by hand (no seal: its command runs because the test trusts it). */
const replayHandMade = (dir: string, out: string) =>
  replay({ recording: dir, mode: 'exact', out: path.join(tmp, out), stdio: 'pipe', trustRecording: true });

let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-sandbox-'));
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('the replay sandbox', () => {
  it('keeps files in memory, blocks connections and hands out the recorded clock, random and uuid values', async () => {
    const root = path.join(tmp, 'workspace');
    const outside = path.join(tmp, 'outside.txt');
    const helper = path.join(tmp, 'helper.mjs');
    await writeFile(helper, 'export const loaded = "module loading works";\n');
    let connections = 0;
    const guarded = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => guarded.listen(0, '127.0.0.1', resolve));
    const port = (guarded.address() as { port: number }).port;
    const agent = path.join(tmp, 'agent.mjs');
    await writeFile(
      agent,
      `
import { writeFileSync, readFileSync, existsSync } from 'node:fs';
import { readFile, appendFile, mkdir } from 'node:fs/promises';
import net from 'node:net';
import crypto from 'node:crypto';
const root = ${JSON.stringify(root)};
const out = {};
out.seeded = readFileSync(root + '/notes.txt', 'utf8');
writeFileSync(root + '/report.md', 'written by the agent');
await mkdir(root + '/sub', { recursive: true });
await appendFile(root + '/sub/log.txt', 'one');
out.report = await readFile(root + '/report.md', 'utf8');
writeFileSync(${JSON.stringify(outside)}, 'must not reach the disk');
out.outsideSeen = readFileSync(${JSON.stringify(outside)}, 'utf8');
out.module = (await import(${JSON.stringify(helper)})).loaded;
out.values = [Date.now(), Math.random(), crypto.randomUUID(), Date.now(), Math.random()];
out.blocked = await new Promise((resolve) => {
  const s = net.connect(${port}, '127.0.0.1');
  s.on('connect', () => resolve('connected'));
  s.on('error', (e) => resolve(e.code));
});
console.log(JSON.stringify(out));
`,
    );
    const dir = await writeRecording(path.join(tmp, 'rec'), {
      command: [process.execPath, agent],
      fsRoot: root,
      files: { 'notes.txt': 'seeded from the pre-snapshot' },
      calls: [],
      nondeterminism: {
        clock: [1764000000000, 1764000000500],
        random: [0.25],
        uuid: ['11111111-2222-4333-8444-555555555555'],
      },
    });
    // The real workspace exists with other content: the agent must see the recorded one.
    await mkdir(root, { recursive: true });
    await writeFile(path.join(root, 'notes.txt'), 'the real file');

    const result = await replayHandMade(dir, 'replay');
    await new Promise<void>((resolve) => guarded.close(() => resolve()));
    const seen = JSON.parse(result.output?.stdout ?? '{}');

    expect(seen.seeded).toBe('seeded from the pre-snapshot');
    expect(seen.report).toBe('written by the agent');
    expect(seen.outsideSeen).toBe('must not reach the disk');
    expect(seen.module).toBe('module loading works');
    // Recorded values in order; past the end, time keeps going and random values stay in range.
    expect(seen.values.slice(0, 4)).toEqual([
      1764000000000,
      0.25,
      '11111111-2222-4333-8444-555555555555',
      1764000000500,
    ]);
    expect(seen.values[4]).toBeGreaterThanOrEqual(0);
    expect(seen.values[4]).toBeLessThan(1);
    expect(seen.blocked).toBe('ECONNREFUSED');
    expect(connections).toBe(0);
    expect(result.blockedConnections).toEqual([`127.0.0.1:${port}`]);
    expect(result.divergences.map((d) => d.kind)).toEqual(['blocked-connection']);

    // Nothing reached the disk.
    expect(readFileSync(path.join(root, 'notes.txt'), 'utf8')).toBe('the real file');
    expect(existsSync(path.join(root, 'report.md'))).toBe(false);
    expect(existsSync(path.join(root, 'sub'))).toBe(false);
    expect(existsSync(outside)).toBe(false);

    // The replay recorded what the agent wrote under the root, and only that.
    const replayed = await readRecording(result.dir);
    expect(Object.keys(replayed.post.fs?.files ?? {}).sort()).toEqual(['notes.txt', 'report.md', 'sub/log.txt']);
    // The values handed out are logged as the recorder logs them.
    const handed = replayed.events
      .filter((e) => e.type === 'nondeterminism')
      .map((e) => e.type === 'nondeterminism' && [e.payload.kind, e.payload.values.length]);
    expect(handed).toContainEqual(['uuid', 1]);
    expect(handed).toContainEqual(['random', 2]);
    const report = replayed.post.fs?.files['report.md'];
    expect(report && replayed.readBlob(report.sha256).toString()).toBe('written by the agent');
    // The pre-world's files are the recording's own blobs, linked into the replay (not written again).
    const notes = replayed.pre.fs?.files['notes.txt'];
    expect(notes && replayed.readBlob(notes.sha256).toString()).toBe('seeded from the pre-snapshot');
    const blob = blobRelativePath(notes?.sha256 ?? '');
    expect(statSync(path.join(result.dir, blob)).ino).toBe(statSync(path.join(dir, blob)).ino);
  });

  it('keeps writes off the disk even when the recording names no fs root', async () => {
    const target = path.join(tmp, 'no-root', 'out.txt');
    const agent = path.join(tmp, 'agent-no-root.mjs');
    await writeFile(
      agent,
      `import { writeFileSync, readFileSync, mkdirSync } from 'node:fs';
mkdirSync(${JSON.stringify(path.dirname(target))}, { recursive: true });
writeFileSync(${JSON.stringify(target)}, 'kept in memory');
console.log(readFileSync(${JSON.stringify(target)}, 'utf8'));`,
    );
    const dir = await writeRecording(path.join(tmp, 'rec-no-root'), { command: [process.execPath, agent], calls: [] });
    const result = await replayHandMade(dir, 'replay-no-root');
    expect(result.output?.stdout.trim()).toBe('kept in memory');
    expect(existsSync(target)).toBe(false);
  });

  it('accounts for every call answered in the agent process, even when the agent exits at once', async () => {
    const url = 'http://127.0.0.1:9/v1/chat/completions';
    const body = (i: number) => ({ model: 'gpt-test', messages: [{ role: 'user', content: `step ${i}` }] });
    const agent = path.join(tmp, 'agent-exit.mjs');
    await writeFile(
      agent,
      `for (let i = 1; i <= 3; i++) {
  const r = await fetch(${JSON.stringify(url)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'step ' + i }] }) });
  console.log((await r.json()).answer);
}
process.exit(0);`,
    );
    const dir = await writeRecording(path.join(tmp, 'rec-exit'), {
      command: [process.execPath, agent],
      calls: [1, 2, 3].map((i) => ({ kind: 'model' as const, url, body: body(i), response: { answer: `a${i}` } })),
    });
    const result = await replayHandMade(dir, 'replay-exit');
    expect(result.output?.stdout.trim().split('\n')).toEqual(['a1', 'a2', 'a3']);
    expect(result.divergences).toEqual([]);
    expect(result.served.recording).toBe(3);
    const replayed = await readRecording(result.dir);
    expect(replayed.events.filter((e) => e.type === 'model.called').map((e) => e.stepId)).toEqual([1, 2, 3]);
  });

  it("hands over the agent's last output whole, however much it wrote just before it exited", async () => {
    // 3 x 60 KiB on stdout, 60 KiB on stderr, then an exit at once: more than a pipe holds.
    const agent = path.join(tmp, 'agent-output.mjs');
    await writeFile(
      agent,
      `const line = (c) => c.repeat(1023) + '\\n';
for (const c of 'abc') process.stdout.write(line(c).repeat(60));
process.stderr.write(line('e').repeat(60));
process.stdout.write('last line\\n');
process.exit(0);`,
    );
    const dir = await writeRecording(path.join(tmp, 'rec-output'), { command: [process.execPath, agent], calls: [] });
    for (let round = 0; round < 5; round++) {
      const result = await replayHandMade(dir, `replay-output-${round}`);
      expect(result.output?.stdout.length).toBe(3 * 60 * 1024 + 'last line\n'.length);
      expect(result.output?.stdout.endsWith('c\nlast line\n')).toBe(true);
      expect(result.output?.stderr).toContain('e'.repeat(1023));
      expect((result.output?.stderr ?? '').split('e'.repeat(1023)).length - 1).toBe(60);
    }
  });
});
