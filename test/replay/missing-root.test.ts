// A recording's fs root that does not exist on the replaying machine (a project's ./storage not
// made yet, or removed): the replay in the OS sandbox still runs from the recorded files, and the
// real folder is never made. The read-only root cannot take a mount point there, so the preload
// keeps the root's files in memory, as without the OS sandbox.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordCommand } from '../../src/record/index.js';
import { replay } from '../../src/replay/index.js';
import { startServer, type TestServer, tempDir } from '../record/helpers.js';

const tmp = tempDir('tapedeck-missing-root-');
const storage = path.join(tmp.dir, 'project', 'storage');
let api: TestServer;
let recorded: string;

const AGENT = `
import fs from 'node:fs';
const dir = process.env.STORAGE;
const seen = fs.readFileSync(dir + '/seed.json', 'utf8');
const answer = await (await fetch(process.env.TOOL_URL + '/embed', { method: 'POST', body: seen })).text();
fs.writeFileSync(dir + '/index.json', answer);
`;

beforeAll(async () => {
  api = await startServer((_req, body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ embedded: body }));
  });
  mkdirSync(storage, { recursive: true });
  writeFileSync(path.join(storage, 'seed.json'), '{"doc":"weather"}');
  const agent = path.join(tmp.dir, 'agent.mjs');
  writeFileSync(agent, AGENT);
  const result = await recordCommand({
    command: [process.execPath, agent],
    env: { TOOL_URL: api.url, STORAGE: storage },
    fsRoot: storage,
    out: path.join(tmp.dir, 'rec'),
    stdio: 'ignore',
  });
  expect(result.exitCode).toBe(0);
  recorded = result.dir;
  rmSync(storage, { recursive: true });
}, 60_000);

afterAll(async () => {
  await api?.close();
  if (!process.env.KEEP) tmp.remove();
});

it('replays in the OS sandbox when the recorded fs root does not exist here, and never makes it', async () => {
  const out = path.join(tmp.dir, 'until-1');
  const result = await replay({
    recording: recorded,
    mode: 'exact',
    isolation: 'bwrap',
    until: 2,
    env: { TOOL_URL: api.url, STORAGE: storage },
    out,
    stdio: 'ignore',
  });
  expect(result.isolation?.level).toBe('bwrap');
  expect(result.divergences).toEqual([]);
  expect(result.warnings?.join('\n')).toContain(`the recorded fs root ${storage} does not exist on this machine`);
  // The world of step 2 (the read, then the call): the recorded seed, no index yet.
  expect(readFileSync(path.join(out, 'world', 'fs', 'seed.json'), 'utf8')).toBe('{"doc":"weather"}');
  expect(existsSync(path.join(out, 'world', 'fs', 'index.json'))).toBe(false);
  const whole = await replay({
    recording: recorded,
    mode: 'exact',
    isolation: 'bwrap',
    env: { TOOL_URL: api.url, STORAGE: storage },
    out: path.join(tmp.dir, 'whole'),
    stdio: 'ignore',
  });
  expect(whole.divergences).toEqual([]);
  expect(whole.worldMatches).toBe(true);
  expect(existsSync(storage)).toBe(false);
}, 60_000);
