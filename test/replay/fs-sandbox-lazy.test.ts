// The replay fs sandbox makes its memfs volume at first use: memfs (~0.1 s to load) is not loaded
// by an agent process that never touches the volume, and is loaded (from the real disk, even
// where the sandboxed root holds memfs itself) by the first call that needs it, which still never
// reaches the disk.
import { spawnSync } from 'node:child_process';
import fs, { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { replay } from '../../src/replay/index.js';
import { moduleLog, startServer, type TestServer, tempDir } from '../record/helpers.js';

const REPLAY_FS = fileURLToPath(new URL('../../sandbox/preload/replay-fs.mjs', import.meta.url));
const require = createRequire(import.meta.url);
const tmp = tempDir('tapedeck-fs-lazy-');
afterAll(() => tmp.remove());

it('memfs implements every call the sandbox takes from it, so its shape is known without loading it', async () => {
  const { SYNC_NAMES, PROMISE_NAMES } = (await import(pathToFileURL(REPLAY_FS).href)) as {
    SYNC_NAMES: string[];
    PROMISE_NAMES: string[];
  };
  const { createFsFromVolume, Volume } = require('memfs') as typeof import('memfs');
  type Api = Record<string, unknown> & { promises: Record<string, unknown> };
  const mfs = createFsFromVolume(new Volume()) as unknown as Api;
  const real = fs as unknown as Api;
  // Of the calls Node has (the sandbox patches no other).
  expect(SYNC_NAMES.filter((n) => typeof real[n] === 'function' && typeof mfs[n] !== 'function')).toEqual([]);
  expect(
    PROMISE_NAMES.filter((n) => typeof real.promises[n] === 'function' && typeof mfs.promises[n] !== 'function'),
  ).toEqual([]);
  expect(SYNC_NAMES).toContain('writeFileSync');
  expect(PROMISE_NAMES).toContain('writeFile');
});

it('loads memfs at the first write, from the real disk even when the root holds memfs, and the write stays off the disk', () => {
  // The root is the node_modules holding memfs: loading it through the sandbox would read the
  // (empty) volume, and make the volume, again.
  const root = path.dirname(path.dirname(require.resolve('memfs/package.json')));
  const out = path.join(tmp.dir, 'outside.txt');
  const script = `
import fs from 'node:fs';
import { createRequire } from 'node:module';
const { installFsSandbox } = await import(${JSON.stringify(pathToFileURL(REPLAY_FS).href)});
const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/memfs/'));
installFsSandbox({ root: ${JSON.stringify(root)}, files: {}, onOutsideWrite: () => {} });
const before = loaded();
fs.readFileSync(${JSON.stringify(REPLAY_FS)});
const afterRead = loaded();
fs.writeFileSync(${JSON.stringify(out)}, 'in the volume');
console.log(JSON.stringify({ before, afterRead, after: loaded(), read: fs.readFileSync(${JSON.stringify(out)}, 'utf8') }));
`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  expect(run.stderr).toBe('');
  expect(JSON.parse(run.stdout)).toEqual({ before: false, afterRead: false, after: true, read: 'in the volume' });
  expect(existsSync(out)).toBe(false);
});

describe('in a replay', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer((_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  afterAll(() => server.close());

  /** Records a one-call agent, then replays it under a module hook that lists what its process loads. */
  async function replayLoads(name: string, options: { fs?: boolean }): Promise<{ loaded: string[]; file: string }> {
    const work = path.join(tmp.dir, `${name}-work`);
    mkdirSync(work, { recursive: true });
    const file = path.join(work, 'answer.txt');
    const agent = path.join(tmp.dir, `${name}-agent.mjs`);
    writeFileSync(
      agent,
      `import { writeFileSync } from 'node:fs';
const text = await (await fetch(${JSON.stringify(`${server.url}/x`)})).text();
${options.fs ? `writeFileSync(${JSON.stringify(file)}, text);` : ''}\n`,
    );
    const recording = path.join(tmp.dir, `${name}-rec`);
    const recorded = await recordCommand({
      command: [process.execPath, agent],
      out: recording,
      stdio: 'pipe',
      ...(options.fs ? { fsRoot: work } : {}),
    });
    expect(recorded.exitCode).toBe(0);
    writeFileSync(file, 'before the replay');
    const modules = moduleLog(tmp.dir, name);
    const result = await replay({
      recording,
      mode: 'exact',
      isolation: 'none',
      out: path.join(tmp.dir, `${name}-replay`),
      stdio: 'pipe',
      env: { NODE_OPTIONS: modules.nodeOptions },
    });
    expect(result.status, JSON.stringify(result.warnings)).toBe('complete');
    expect(result.divergences).toEqual([]);
    return { loaded: modules.loaded(), file };
  }

  it('an agent that touches no file under the sandbox does not load memfs', async () => {
    const { loaded } = await replayLoads('plain', {});
    expect(loaded.some((url) => url.endsWith('/replay.mjs'))).toBe(true);
    expect(loaded.filter((url) => url.includes('/memfs/'))).toEqual([]);
  }, 60_000);

  it('an agent that writes in its recorded fs root loads it, and writes the volume, not the disk', async () => {
    const { loaded, file } = await replayLoads('world', { fs: true });
    expect(loaded.some((url) => url.includes('/memfs/'))).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('before the replay');
  }, 60_000);
});
