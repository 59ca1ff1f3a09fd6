// The isolation probe's best answer is kept in the state folder: a second process does not run
// bubblewrap and strace again, a change to a tool probes again, a corrupt file is ignored, and a
// kept answer the machine no longer gives (the sandbox does not start) is forgotten and the replay
// (and record --isolate, before its agent runs) probes afresh instead of failing or running weaker
// than the machine allows.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, expect, it } from 'vitest';
import { example, tapedeck } from '../cli/run-cli.js';
import { inDetectProcess } from './helpers.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-isolation-cache-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const home = path.join(tmp, 'home');
const cacheFile = path.join(home, 'isolation.json');
const mark = path.join(tmp, 'probed');
const broken = path.join(tmp, 'broken');

/** A tool that leaves a mark and succeeds when run as a probe (its last argument `true`), unless the machine is "broken". */
function fakeTool(name: string): string {
  const file = path.join(tmp, name);
  writeFileSync(
    file,
    `#!/bin/sh\ntouch ${JSON.stringify(mark)}\n[ -e ${JSON.stringify(broken)} ] && { echo "no namespaces here" >&2; exit 1; }\nfor last; do :; done\n[ "$last" = true ] && exit 0\necho "not a probe" >&2\nexit 1\n`,
  );
  chmodSync(file, 0o755);
  return file;
}
const bwrap = fakeTool('bwrap');
const strace = fakeTool('strace');
const env = { TAPEDECK_HOME: home, TAPEDECK_BWRAP: bwrap, TAPEDECK_UNSHARE: '', TAPEDECK_STRACE: strace };

/** detectIsolation() in a fresh process: its level, whether it came from the kept probe, whether a tool ran. */
function detect(): { level: string; fromCache: boolean; probed: boolean } {
  rmSync(mark, { force: true });
  const run = inDetectProcess(
    'const i = detect.detectIsolation(); process.stdout.write(JSON.stringify({ level: i.level, fromCache: i.fromCache === true }));',
    env,
  );
  expect(run.stderr).toBe('');
  return { ...JSON.parse(run.stdout), probed: existsSync(mark) };
}

beforeEach(() => {
  rmSync(broken, { force: true });
  rmSync(cacheFile, { force: true });
  mkdirSync(home, { recursive: true });
});

it('keeps the probe for the next process, private, and probes again when a tool changes', () => {
  expect(detect()).toEqual({ level: 'bwrap', fromCache: false, probed: true });
  expect(statSync(cacheFile).mode & 0o777).toBe(0o600);
  expect(detect()).toEqual({ level: 'bwrap', fromCache: true, probed: false });
  // strace replaced (another time stamp): the key changes, the tools run again.
  const later = new Date(Date.now() + 5_000);
  utimesSync(strace, later, later);
  expect(detect()).toEqual({ level: 'bwrap', fromCache: false, probed: true });
  expect(detect()).toEqual({ level: 'bwrap', fromCache: true, probed: false });
}, 60_000);

it('ignores a corrupt or foreign kept probe', () => {
  // The first version's file (no word on strace's names) is one this version does not read.
  for (const text of ['{not json', JSON.stringify({ version: 1, key: 'f'.repeat(64), strace: true }), '[]']) {
    writeFileSync(cacheFile, text);
    expect(detect()).toEqual({ level: 'bwrap', fromCache: false, probed: true });
    expect(JSON.parse(readFileSync(cacheFile, 'utf8')).version).toBe(2);
  }
}, 60_000);

it('forgets a kept probe the machine no longer gives, and the replay starts over with a fresh one', async () => {
  expect(detect()).toMatchObject({ level: 'bwrap', probed: true });
  // The machine changes in a way the key cannot see: bubblewrap no longer makes namespaces.
  writeFileSync(broken, '');
  const run = await tapedeck(
    ['replay', example('openai-baseline'), '--trust-recording', '--out', path.join(tmp, 'replay')],
    { env },
  );
  expect(run.stderr).toMatch(/isolation: NONE/);
  expect(run.stdout).toMatch(/^isolation: NONE/m);
  expect(run.code).toBe(0);
  expect(existsSync(cacheFile)).toBe(false);
}, 120_000);

/** A bubblewrap that runs the real one, but refuses its next sandbox (not a probe) once, as a machine that just changed. */
const realBwrap = ['/usr/bin/bwrap', '/bin/bwrap'].find((p) => existsSync(p));
const failOnce = path.join(tmp, 'fail-once');
function onceBrokenBwrap(): string {
  const file = path.join(tmp, 'bwrap-once');
  writeFileSync(
    file,
    `#!/bin/sh\nfor last; do :; done\nif [ "$last" != true ] && [ -e ${JSON.stringify(failOnce)} ]; then rm -f ${JSON.stringify(failOnce)}; echo "bwrap: setting up uid map: Permission denied" >&2; exit 1; fi\nexec ${realBwrap} "$@"\n`,
  );
  chmodSync(file, 0o755);
  return file;
}

it.runIf(realBwrap !== undefined)(
  'record --isolate with a kept probe the machine no longer gives probes again and records, before the agent runs',
  async () => {
    const onceEnv = { TAPEDECK_HOME: home, TAPEDECK_BWRAP: onceBrokenBwrap(), TAPEDECK_UNSHARE: '' };
    const kept = inDetectProcess(
      'const i = detect.detectIsolation(); process.stdout.write(JSON.stringify({ level: i.level }));',
      onceEnv,
    );
    expect(JSON.parse(kept.stdout)).toEqual({ level: 'bwrap' });
    expect(existsSync(cacheFile)).toBe(true);
    writeFileSync(failOnce, '');
    const ran = path.join(tmp, 'agent-ran');
    const out = path.join(tmp, 'recorded-once');
    const run = await tapedeck(
      [
        'record',
        '--isolate',
        '--out',
        out,
        '--',
        process.execPath,
        '-e',
        `require('node:fs').appendFileSync(${JSON.stringify(ran)}, 'x'); console.log('agent ran')`,
      ],
      { env: onceEnv },
    );
    expect(run.stderr).toMatch(/warning: .*kept from an earlier probe.*probing the machine again/);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('agent ran');
    // The agent ran once: the sandbox that failed never started it.
    expect(readFileSync(ran, 'utf8')).toBe('x');
    expect(existsSync(path.join(out, 'manifest.json'))).toBe(true);
    expect(existsSync(failOnce)).toBe(false);
  },
  120_000,
);
