// vitest globalSetup: every test run gets its own TAPEDECK_HOME (the seal key's folder), inherited
// by the workers and every process they start, so a test never reads or makes the real home's key,
// and a recording made in one process verifies in another of the same run.
// The leftover register lives there too (sandbox/leftovers.ts): tests that SIGKILL a tapedeck
// process leave its socket, temp folders or sandbox databases for the next command to remove. At
// the end of the run the register is read once more, so the run leaves none of them behind (a
// socket left in the temp folder outlives the home that named it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reapLeftovers } from '../../sandbox/leftovers.js';

export default function setup(): () => Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'tapedeck-test-home-'));
  process.env.TAPEDECK_HOME = home;
  return async () => {
    try {
      // Bounded: a database that does not answer must not hold the run's end.
      await Promise.race([
        reapLeftovers({ retryAfterMs: 0 }),
        new Promise((resolve) => setTimeout(resolve, 30_000).unref()),
      ]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  };
}
