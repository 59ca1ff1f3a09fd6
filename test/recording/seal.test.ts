// The machine's seal key: made once whoever comes first (concurrent first recorders agree on one
// key), private (0600 in a 0700 folder), and never a reason for a recording to fail.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createRecordingWriter, hasLocalSeal, type Manifest, sealKeyFile } from '../../src/recording/index.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-seal-'));
const saved = process.env.TAPEDECK_HOME;
afterEach(() => {
  process.env.TAPEDECK_HOME = saved;
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const root = join(import.meta.dirname, '../..');
// A child process that writes one sealed recording (the recorder's way) and exits.
const CHILD = `
import { createRecordingWriter } from ${JSON.stringify(join(root, 'src/recording/index.ts'))};
const w = await createRecordingWriter(process.argv[1], { name: 'r', agent: { command: ['node', 'a.mjs'], cwd: '/tmp' }, seal: true });
await w.close('complete');
`;

function recordIn(dir: string, home: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', CHILD, dir],
      { cwd: root, env: { ...process.env, TAPEDECK_HOME: home } },
      (error, _stdout, stderr) => (error ? reject(new Error(stderr || String(error))) : resolve()),
    );
  });
}

const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;

describe('the seal key', () => {
  it('is made once when first recorders race: one key file, every recording verifies', async () => {
    const home = join(tmp, 'race', 'home');
    const dirs = Array.from({ length: 6 }, (_, i) => join(tmp, 'race', `r${i}`));
    await Promise.all(dirs.map((dir) => recordIn(dir, home)));
    expect(readdirSync(home)).toEqual(['seal.key']);
    expect(statSync(home).mode & 0o777).toBe(0o700);
    expect(statSync(join(home, 'seal.key')).mode & 0o777).toBe(0o600);
    process.env.TAPEDECK_HOME = home;
    for (const dir of dirs) expect(hasLocalSeal(manifestOf(dir))).toBe(true);
    process.env.TAPEDECK_HOME = join(tmp, 'race', 'another-machine');
    for (const dir of dirs) expect(hasLocalSeal(manifestOf(dir))).toBe(false);
  });

  it('lives under $XDG_STATE_HOME/tapedeck without TAPEDECK_HOME', () => {
    const xdg = process.env.XDG_STATE_HOME;
    delete process.env.TAPEDECK_HOME;
    process.env.XDG_STATE_HOME = '/somewhere/state';
    try {
      expect(sealKeyFile()).toBe('/somewhere/state/tapedeck/seal.key');
    } finally {
      if (xdg === undefined) delete process.env.XDG_STATE_HOME;
      else process.env.XDG_STATE_HOME = xdg;
    }
  });

  it('a key that cannot be made leaves the recording unsealed, never failed', async () => {
    const notADir = join(tmp, 'a-file');
    writeFileSync(notADir, 'x');
    process.env.TAPEDECK_HOME = join(notADir, 'home');
    const dir = join(tmp, 'unsealed');
    const w = await createRecordingWriter(dir, { name: 'r', agent: { command: ['true'], cwd: tmp }, seal: true });
    await w.close('complete');
    expect(manifestOf(dir).status).toBe('complete');
    expect(manifestOf(dir).seal).toBeUndefined();
    expect(hasLocalSeal(manifestOf(dir))).toBe(false);
  });
});
