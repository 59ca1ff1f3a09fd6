// What the capture preload loads at the start of every node process of a recorded agent: the
// interceptors (@mswjs/interceptors, ~100 ms of CPU to load) only when the run needs their step
// barriers (world capture), not for plain traffic capture, whose observers are all it uses.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { readRecording } from '../../src/recording/index.js';
import { moduleLog, startServer, type TestServer, tempDir } from './helpers.js';

let server: TestServer;
const tmp = tempDir();

beforeAll(async () => {
  server = await startServer((_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
});
afterAll(async () => {
  await server.close();
  tmp.remove();
});

/** Records a one-call agent under a module hook that lists every module its process loads. */
async function loadedBy(name: string, options: { fs?: boolean } = {}): Promise<string[]> {
  const modules = moduleLog(tmp.dir, name);
  const agent = path.join(tmp.dir, `${name}-agent.mjs`);
  writeFileSync(agent, `await (await fetch(${JSON.stringify(`${server.url}/x`)})).text();\n`);
  const work = path.join(tmp.dir, `${name}-work`);
  mkdirSync(work, { recursive: true });
  const out = path.join(tmp.dir, name);
  const result = await recordCommand({
    command: [process.execPath, agent],
    env: { NODE_OPTIONS: modules.nodeOptions },
    out,
    stdio: 'pipe',
    ...(options.fs ? { fsRoot: work } : {}),
  });
  expect(result.exitCode).toBe(0);
  const recording = await readRecording(out);
  expect(recording.events.filter((e) => e.type === 'http.exchange')).toHaveLength(1);
  return modules.loaded();
}

it('an agent recorded without world capture does not load the interceptors', async () => {
  const loaded = await loadedBy('plain');
  expect(loaded.some((url) => url.endsWith('/record.mjs'))).toBe(true);
  expect(loaded.filter((url) => url.includes('@mswjs/interceptors'))).toEqual([]);
  expect(loaded.some((url) => url.endsWith('/record-interceptors.mjs'))).toBe(false);
}, 30_000);

it('an agent recorded with --fs loads them, for its step barriers', async () => {
  const loaded = await loadedBy('world', { fs: true });
  expect(loaded.some((url) => url.endsWith('/record-interceptors.mjs'))).toBe(true);
  expect(loaded.some((url) => url.includes('@mswjs/interceptors'))).toBe(true);
}, 30_000);
