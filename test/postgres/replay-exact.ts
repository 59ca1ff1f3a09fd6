// The check every observed-world test ends with: the recording replayed in exact mode, in the PGlite
// sandbox or a server's template sandbox, runs clean, diverges nowhere, ends at the recorded end
// state and prints what the recorded run returned.
import path from 'node:path';
import { expect, it } from 'vitest';
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

/**
 * The two tests an observed-world suite ends with: its recording replayed in the PGlite sandbox and
 * in a template database on `admin`, each held to the recorded run (`run()` is read when each runs).
 */
export function itReplaysExactly(
  run: () => { recording: string; result: unknown; outDir: string },
  admin: string | undefined,
): void {
  for (const sandbox of ['pglite', 'template'] as const)
    it(`replays in the ${sandbox} sandbox to the recorded end state`, async () => {
      const { recording, result, outDir } = run();
      await expectExactReplay({ recording, out: path.join(outDir, `replay-${sandbox}`), sandbox, admin, result });
    }, 240_000);
}
