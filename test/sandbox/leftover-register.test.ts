// Where the leftover register lives: `live/` in tapedeck's one state folder ($TAPEDECK_HOME, beside
// the seal key and the isolation probe), unless TAPEDECK_STATE_DIR moves the register alone; a
// noted temp folder is written down there before it exists and crossed out when removed.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { leftoverDir, makeNotedTempDir } from '../../sandbox/leftovers.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-register-'));
const saved = { home: process.env.TAPEDECK_HOME, state: process.env.TAPEDECK_STATE_DIR };
afterEach(() => {
  for (const [name, value] of [
    ['TAPEDECK_HOME', saved.home],
    ['TAPEDECK_STATE_DIR', saved.state],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

it('keeps the register in the state folder, or where TAPEDECK_STATE_DIR says', async () => {
  const home = path.join(tmp, 'home');
  process.env.TAPEDECK_HOME = home;
  delete process.env.TAPEDECK_STATE_DIR;
  expect(leftoverDir()).toBe(path.join(home, 'live'));
  const noted = await makeNotedTempDir('tapedeck-register-test-');
  expect(existsSync(noted.path)).toBe(true);
  const entries = readdirSync(path.join(home, 'live'));
  expect(entries.length).toBe(1);
  await noted.remove();
  expect(existsSync(noted.path)).toBe(false);
  expect(readdirSync(path.join(home, 'live'))).toEqual([]);

  const state = path.join(tmp, 'state');
  process.env.TAPEDECK_STATE_DIR = state;
  expect(leftoverDir()).toBe(path.join(state, 'live'));
  rmSync(tmp, { recursive: true, force: true });
});
