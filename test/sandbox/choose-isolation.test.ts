// chooseIsolation('none') (`replay --isolation none`) starts no probe: bubblewrap, unshare and
// strace are run only to find out what a sandboxed run can have. The one-line summary a replay
// prints tells a level that was chosen from one the machine lacks.
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { inDetectProcess } from './helpers.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-choose-isolation-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs chooseIsolation(choice) in a fresh process whose bwrap, unshare and strace leave a mark when run. */
function choose(choice: string): { level: string; probed: boolean; summary: string } {
  const mark = path.join(tmp, `${choice}.probed`);
  const tool = path.join(tmp, `${choice}-tool.sh`);
  writeFileSync(tool, `#!/bin/sh\ntouch ${JSON.stringify(mark)}\nexit 1\n`);
  chmodSync(tool, 0o755);
  const run = inDetectProcess(
    `const i = detect.chooseIsolation(${JSON.stringify(choice)}); process.stdout.write(JSON.stringify({ level: i.level, summary: detect.describeIsolation(i) }));`,
    {
      TAPEDECK_BWRAP: tool,
      TAPEDECK_UNSHARE: tool,
      TAPEDECK_STRACE: tool,
    },
  );
  expect(run.stderr).toBe('');
  const { level, summary } = JSON.parse(run.stdout) as { level: string; summary: string };
  return { level, probed: existsSync(mark), summary };
}

it('isolation none probes nothing, and says it was chosen, not missing', () => {
  const none = choose('none');
  expect(none).toMatchObject({ level: 'none', probed: false });
  expect(none.summary).toMatch(/^isolation: NONE, as chosen/);
  expect(none.summary).not.toMatch(/no namespaces on this machine|Install bubblewrap/);
}, 30_000);

it('isolation auto probes the machine (here: tools that fail, so none, and says what to install)', () => {
  const auto = choose('auto');
  expect(auto).toMatchObject({ level: 'none', probed: true });
  expect(auto.summary).toMatch(/no namespaces on this machine.*Install bubblewrap/);
}, 30_000);
