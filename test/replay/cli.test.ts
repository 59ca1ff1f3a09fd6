// `tapedeck replay` on the command line: JSON output, exit codes, help and bad options.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const EXAMPLE = path.join(ROOT, 'recordings/examples/openai-baseline');
let tmp: string;

const tapedeck = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/cli/main.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-replay-cli-'));
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('tapedeck replay', () => {
  it('replays a committed example exactly and prints the result as JSON', async () => {
    const manifest = JSON.parse(await readFile(path.join(EXAMPLE, 'manifest.json'), 'utf8'));
    const out = path.join(tmp, 'cli-replay');
    const run = tapedeck(
      'replay',
      EXAMPLE,
      '--trust-recording', // committed: made elsewhere
      '--json',
      '--out',
      out,
      '--env',
      `WORKSPACE=${manifest.world.fsRoot}`,
      'OPENAI_API_KEY=sk-replay',
    );
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ dir: out, status: 'complete', divergences: [], heldBack: [], worldMatches: true });
    expect(JSON.parse(await readFile(path.join(out, 'manifest.json'), 'utf8')).replayOf).toBe(manifest.id);
  });

  it('teaches the modes in --help and refuses bad options with exit code 2', () => {
    const help = tapedeck('replay', '--help');
    expect(help.stdout).toContain('counterfactual');
    expect(help.stdout).toContain('--fork-at');
    const bad = tapedeck('replay', EXAMPLE, '--mode', 'sideways');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--mode "sideways" is not exact or counterfactual');
    const missing = tapedeck('replay', path.join(tmp, 'nothing-here'));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('No recording at');
  });
});
