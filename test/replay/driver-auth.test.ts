// Random bytes a database driver draws to authenticate (pg's SCRAM client nonce) are not the
// agent's values: whether they are drawn depends on the server (a production database asks for a
// password, the replay's sandbox does not) and on how many connections a pool opens. Recorded,
// they would shift every later value the agent draws of that kind when replayed.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { recordAgent, replayExact, tempDir } from '../record/helpers.js';

const AGENT = fileURLToPath(new URL('fixtures/driver-auth-agent.mjs', import.meta.url));

describe("a database driver's authentication draws", () => {
  const tmp = tempDir('tapedeck-driver-auth-');
  afterAll(() => tmp.remove());

  it('are left out, so a replay against a server that asks no password hands the agent its values', {
    timeout: 120_000,
  }, async () => {
    const out = path.join(tmp.dir, 'rec');
    const recorded = await recordAgent(AGENT, out, { AUTH: '1' });
    expect(recorded.exitCode).toBe(0);
    const result = await replayExact(out, path.join(tmp.dir, 'replay'), 'none', { AUTH: '0' });
    expect(result.divergences, result.output?.stderr).toEqual([]);
    expect(result.output?.stdout.trim()).toBe(recorded.stdout.trim());
  });
});
