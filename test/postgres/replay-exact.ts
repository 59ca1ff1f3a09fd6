// The check every observed-world test ends with: the recording replayed in exact mode, in the PGlite
// sandbox or a server's template sandbox, runs clean, diverges nowhere, ends at the recorded end
// state and prints what the recorded run returned.
import { expect } from 'vitest';
import { replay } from '../../src/replay/index.js';

export type ReplaySandbox = 'pglite' | 'template';

/** Replays `recording` into `out` in `sandbox` (a template database on `admin`) and holds it to the recorded run. */
export async function expectExactReplay(options: {
  recording: string;
  out: string;
  sandbox: ReplaySandbox;
  admin: string | undefined;
  /** What the recorded run returned (the agent prints it as JSON). */
  result: unknown;
}): Promise<void> {
  const replayed = await replay({
    recording: options.recording,
    mode: 'exact',
    out: options.out,
    stdio: 'pipe',
    ...(options.sandbox === 'template' ? { db: options.admin } : {}),
  });
  expect(replayed.output?.stderr ?? '').not.toMatch(/error/i);
  expect(replayed.divergences).toEqual([]);
  expect(replayed.worldDiff).toEqual([]);
  expect(JSON.parse(replayed.output?.stdout ?? '[]')).toEqual(JSON.parse(JSON.stringify(options.result)));
}
