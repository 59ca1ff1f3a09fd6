// A committed example (made elsewhere) replays with its path and --trust-recording: the agent's
// recorded command runs and its recorded env (workspace, prompt file) is restored, so the end state
// equals the recorded one and the exit code is 0.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { example, tapedeck } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-replay-env-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('tapedeck replay <example>', () => {
  it('reproduces the recorded end state with --trust-recording and no --env', async () => {
    const run = await tapedeck([
      'replay',
      example('openai-baseline'),
      '--trust-recording',
      '--json',
      '--out',
      join(tmp, 'r'),
    ]);
    const result = JSON.parse(run.stdout) as { divergences: unknown[]; worldMatches?: boolean };
    expect(result.divergences).toEqual([]);
    expect(result.worldMatches).toBe(true);
    expect(run.code, run.stderr).toBe(0);
  });
});
