// Small files kept inline in their snapshot and change entries (text or base64) instead of blob
// files: a run recorded that way and the same run recorded with every file a blob (as recordings
// made before inline content) rebuild, diff, materialise and replay to the same worlds.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { materializeFs } from '../../sandbox/index.js';
import { stateDiff } from '../../src/diff/index.js';
import { recordCommand } from '../../src/record/index.js';
import {
  canonicalJson,
  type FsSnapshot,
  fsIdentity,
  INLINE_FILE_MAX,
  isInline,
  type Recording,
  readRecording,
  worldAt,
} from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, type TestServer, tempDir } from '../record/helpers.js';

const tmp = tempDir('tapedeck-inline-files-');
const workspace = path.join(tmp.dir, 'ws');
let api: TestServer;

const AGENT = `
import { rmSync, writeFileSync } from 'node:fs';
const [url, ws] = [process.env.TOOL_URL, process.env.WORKSPACE];
await (await fetch(url + '/write', { method: 'POST', body: '{}' })).text();
writeFileSync(ws + '/notes.txt', 'small text\\n');
writeFileSync(ws + '/bytes.bin', Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
writeFileSync(ws + '/big.txt', 'x'.repeat(${INLINE_FILE_MAX} + 1));
writeFileSync(ws + '/keep.txt', 'changed\\n');
rmSync(ws + '/gone.txt');
await (await fetch(url + '/read')).text();
`;

beforeAll(async () => {
  // The tool API writes into the workspace: another process's change, applied again on replay.
  api = await startServer((req, _body, res) => {
    if (req.url === '/write') writeFileSync(path.join(workspace, 'from-api.txt'), 'written by the API\n');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  });
});

afterAll(async () => {
  await api?.close();
  if (!process.env.KEEP) tmp.remove();
});

async function record(name: string, inlineFileMax?: number): Promise<Recording> {
  rmSync(workspace, { recursive: true, force: true });
  mkdirSync(path.join(workspace, 'sub'), { recursive: true });
  writeFileSync(path.join(workspace, 'keep.txt'), 'as it was\n');
  writeFileSync(path.join(workspace, 'gone.txt'), 'removed by the agent\n');
  writeFileSync(path.join(workspace, 'sub', 'large.json'), JSON.stringify({ data: 'y'.repeat(2 * INLINE_FILE_MAX) }));
  writeFileSync(path.join(workspace, 'sub', 'empty'), '');
  const agent = path.join(tmp.dir, 'agent.mjs');
  writeFileSync(agent, AGENT);
  const out = path.join(tmp.dir, name);
  const result = await recordCommand({
    command: [process.execPath, agent],
    env: { TOOL_URL: api.url, WORKSPACE: workspace },
    fsRoot: workspace,
    out,
    stdio: 'ignore',
    ...(inlineFileMax === undefined ? {} : { inlineFileMax }),
  });
  expect(result.exitCode).toBe(0);
  const recording = await readRecording(out);
  expect(recording.warnings).toEqual([]);
  return recording;
}

/** The files by what they are (mode, size, sha256), wherever their bytes are kept. */
const identities = (fs: FsSnapshot | undefined) => canonicalJson(fsIdentity(fs));

function blobFiles(dir: string): string[] {
  const root = path.join(dir, 'blobs', 'sha256');
  return readdirSync(root).flatMap((prefix) => readdirSync(path.join(root, prefix)).map((rest) => prefix + rest));
}

function treeOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      const abs = path.join(dir, r);
      if (statSync(abs).isDirectory()) walk(r);
      else out[r] = `${(statSync(abs).mode & 0o777).toString(8)} ${readFileSync(abs).toString('base64')}`;
    }
  };
  walk('');
  return out;
}

describe('file contents inline in their entries', () => {
  let inline: Recording;
  let blobs: Recording;

  beforeAll(async () => {
    inline = await record('inline');
    blobs = await record('blobs', 0);
  }, 60_000);

  it('keeps small files inline and larger ones as blobs; 0 keeps every file a blob', () => {
    const pre = inline.pre.fs?.files ?? {};
    expect(Object.keys(pre).sort()).toEqual(['gone.txt', 'keep.txt', 'sub/empty', 'sub/large.json']);
    expect(pre['keep.txt']).toMatchObject({ text: 'as it was\n' });
    expect(pre['sub/empty']).toMatchObject({ size: 0, text: '' });
    expect(isInline(pre['sub/large.json']!)).toBe(false);
    const changeOf = (p: string) =>
      inline.events.find((e) => e.type === 'fs.changed' && e.payload.path === p && e.payload.after)?.payload;
    expect(changeOf('bytes.bin')).toMatchObject({ op: 'create', after: { size: 256, base64: expect.any(String) } });
    expect(changeOf('notes.txt')).toMatchObject({ op: 'create', after: { text: 'small text\n' } });
    expect(changeOf('from-api.txt')).toMatchObject({ op: 'create', after: { text: 'written by the API\n' } });
    expect(isInline((changeOf('big.txt') as { after: never }).after)).toBe(false);
    // Only the two files over the limit have blob files.
    const big = [pre['sub/large.json']!.sha256, inline.post.fs!.files['big.txt']!.sha256].sort();
    expect(blobFiles(inline.dir).sort()).toEqual(big);

    const all = [...Object.values(blobs.pre.fs?.files ?? {}), ...Object.values(blobs.post.fs?.files ?? {})];
    expect(all.some(isInline)).toBe(false);
    expect(blobFiles(blobs.dir).length).toBeGreaterThan(big.length);
  });

  it('rebuilds, diffs and materialises the same world at every step as the all-blob recording', async () => {
    expect(identities(inline.pre.fs)).toBe(identities(blobs.pre.fs));
    expect(identities(inline.post.fs)).toBe(identities(blobs.post.fs));
    const last = Math.max(...inline.events.map((e) => e.stepId));
    expect(Math.max(...blobs.events.map((e) => e.stepId))).toBe(last);
    for (let step = 0; step <= last; step++) {
      expect(identities(worldAt(inline, step).fs), `step ${step}`).toBe(identities(worldAt(blobs, step).fs));
    }
    // The state diff, text diffs included, is the same whichever way the bytes were kept.
    const a = stateDiff(inline).changes.files;
    const b = stateDiff(blobs).changes.files;
    expect(a.map((c) => c.path)).toEqual(['big.txt', 'bytes.bin', 'from-api.txt', 'gone.txt', 'keep.txt', 'notes.txt']);
    expect(a.find((c) => c.path === 'keep.txt')?.patch).toContain('+changed');
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    const [wa, wb] = [path.join(tmp.dir, 'world-inline'), path.join(tmp.dir, 'world-blobs')];
    await materializeFs(worldAt(inline, last).fs, inline.readBlob, wa);
    await materializeFs(worldAt(blobs, last).fs, blobs.readBlob, wb);
    expect(treeOf(wa)).toEqual(treeOf(wb));
    expect(readFileSync(path.join(wa, 'bytes.bin'))).toEqual(Buffer.from(Array.from({ length: 256 }, (_, i) => i)));
  });

  it('replays both exactly to the recorded world, and time travel writes the same files', async () => {
    const worlds: string[] = [];
    const diffs: string[] = [];
    for (const recording of [inline, blobs]) {
      const name = path.basename(recording.dir);
      const result = await replay({
        recording: recording.dir,
        mode: 'exact',
        out: path.join(tmp.dir, `replay-${name}`),
        stdio: 'ignore',
      });
      expect(result.divergences).toEqual([]);
      expect(result.worldMatches).toBe(true);
      const replayed = await readRecording(result.dir);
      expect(replayed.warnings).toEqual([]);
      expect(identities(replayed.post.fs)).toBe(identities(recording.post.fs));
      // The same changes as recorded (a replay numbers the agent's own writes as steps of their own).
      const unattributed = (r: Recording) => stateDiff(r).changes.files.map(({ stepId, steps, ...c }) => c);
      expect(canonicalJson(unattributed(replayed))).toBe(canonicalJson(unattributed(recording)));
      diffs.push(canonicalJson(stateDiff(replayed).changes.files));
      // The replay keeps small files inline whichever way its recording kept them.
      expect(isInline(replayed.post.fs!.files['from-api.txt']!)).toBe(true);
      const until = await replay({
        recording: recording.dir,
        mode: 'exact',
        until: Math.max(...recording.events.map((e) => e.stepId)),
        out: path.join(tmp.dir, `until-${name}`),
        stdio: 'ignore',
      });
      worlds.push(path.join(until.worldDir!, 'fs'));
    }
    expect(diffs[0]).toBe(diffs[1]);
    expect(treeOf(worlds[0]!)).toEqual(treeOf(worlds[1]!));
    expect(readFileSync(path.join(worlds[0]!, 'big.txt'), 'utf8')).toBe('x'.repeat(INLINE_FILE_MAX + 1));
  }, 60_000);
});
