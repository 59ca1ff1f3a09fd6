// vitest globalSetup: every test run gets its own TAPEDECK_HOME (the seal key's folder), inherited
// by the workers and every process they start, so a test never reads or makes the real home's key,
// and a recording made in one process verifies in another of the same run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const home = mkdtempSync(join(tmpdir(), 'tapedeck-test-home-'));
  process.env.TAPEDECK_HOME = home;
  return () => rmSync(home, { recursive: true, force: true });
}
