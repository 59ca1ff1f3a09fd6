// What `tapedeck replay` says about its isolation: the level on its first line, the fallback
// saying what it cannot guarantee, and --require-isolation refusing to run without the OS
// sandbox (a machine without bubblewrap is simulated by naming no tool: TAPEDECK_BWRAP="").
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { example, expectOneLineError, tapedeck } from '../cli/run-cli.js';

const noTools = { TAPEDECK_BWRAP: '', TAPEDECK_UNSHARE: '' };
// Each run writes its replay into a folder of its own: a fixed path fails once any earlier run left it.
const outDir = mkdtempSync(join(tmpdir(), 'tapedeck-cli-iso-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe('replay isolation on the command line', () => {
  it('refuses --require-isolation without the OS sandbox, naming what is missing', async () => {
    const run = await tapedeck(['replay', example('openai-baseline'), '--require-isolation'], { env: noTools });
    expectOneLineError(run, /require-isolation.*bubblewrap/);
  });

  it('says on its first line that the fallback guards Node processes only, and what to install', async () => {
    const run = await tapedeck(
      ['replay', example('openai-baseline'), '--trust-recording', '--out', join(outDir, 'auto')],
      { env: noTools },
    );
    expect(run.stderr.split('\n')[0]).toMatch(
      /^tapedeck isolation: NONE — no namespaces on this machine; only Node processes are guarded.*Install bubblewrap/,
    );
    expect(run.stdout).toMatch(/^isolation: NONE/m);
  });

  it('says --isolation none was chosen, not that the machine lacks a sandbox', async () => {
    const run = await tapedeck(
      ['replay', example('openai-baseline'), '--trust-recording', '--isolation', 'none', '--out', join(outDir, 'none')],
      { env: noTools },
    );
    const first = run.stderr.split('\n')[0];
    expect(first).toMatch(/^tapedeck isolation: NONE, as chosen — only Node processes are guarded/);
    expect(first).not.toMatch(/no namespaces|Install bubblewrap/);
    expect(run.stdout).toMatch(/^isolation: NONE, as chosen/m);
  });

  it.runIf(detectIsolation().level === 'bwrap')('names the OS sandbox when it is used', async () => {
    const run = await tapedeck([
      'replay',
      example('openai-baseline'),
      '--trust-recording',
      '--out',
      join(outDir, 'bwrap'),
    ]);
    expect(run.stderr.split('\n')[0]).toMatch(/^tapedeck isolation: OS sandbox \(bubblewrap/);
    expect(run.stdout).toMatch(/^isolation: OS sandbox/m);
    expect(run.code).toBe(0);
  });

  it('refuses an unknown isolation level', async () => {
    const run = await tapedeck(['replay', example('openai-baseline'), '--isolation', 'chroot']);
    expectOneLineError(run, /--isolation "chroot" is not auto, bwrap, unshare, none/);
  });
});
