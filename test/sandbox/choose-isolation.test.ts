// chooseIsolation('none') (`replay --isolation none`) starts no probe: bubblewrap, unshare and
// strace are run only to find out what a sandboxed run can have.
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { inDetectProcess } from './helpers.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-choose-isolation-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs chooseIsolation(choice) in a fresh process whose bwrap, unshare and strace leave a mark when run. */
function choose(choice: string): { level: string; probed: boolean } {
  const mark = path.join(tmp, `${choice}.probed`);
  const tool = path.join(tmp, `${choice}-tool.sh`);
  writeFileSync(tool, `#!/bin/sh\ntouch ${JSON.stringify(mark)}\nexit 1\n`);
  chmodSync(tool, 0o755);
  const run = inDetectProcess(`process.stdout.write(detect.chooseIsolation(${JSON.stringify(choice)}).level);`, {
    TAPEDECK_BWRAP: tool,
    TAPEDECK_UNSHARE: tool,
    TAPEDECK_STRACE: tool,
  });
  expect(run.stderr).toBe('');
  return { level: run.stdout, probed: existsSync(mark) };
}

it('isolation none probes nothing', () => {
  expect(choose('none')).toEqual({ level: 'none', probed: false });
}, 30_000);

it('isolation auto probes the machine (here: tools that fail, so none)', () => {
  expect(choose('auto')).toEqual({ level: 'none', probed: true });
}, 30_000);
