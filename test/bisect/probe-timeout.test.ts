// A prompt version whose replay hangs is a result of its own: the probe times out (the agent's
// tree stopped), the search skips it as `git bisect skip` does and goes on, and the result names
// it; a timed-out probe is never cached.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bisectPrompts, builtinPredicate, formatPromptBisect, replayProbe } from '../../src/bisect/index.js';
import { tempDir } from '../record/helpers.js';
import { writeRecording } from '../replay/build.js';

// The agent passes, fails or hangs (on a child that never exits) as its system prompt says; a
// shell, which starts in milliseconds however loaded the machine is.
const AGENT = 'case "$SYSTEM_PROMPT" in *hang*) sleep 1000 ;; *bad*) exit 1 ;; *) exit 0 ;; esac';

let tmp: ReturnType<typeof tempDir>;
let recording: string;
beforeAll(async () => {
  tmp = tempDir('tapedeck-probe-timeout-');
  recording = await writeRecording(path.join(tmp.dir, 'rec'), { calls: [] });
});
afterAll(() => tmp?.remove());

describe('bisect-prompt with a probe that hangs', () => {
  it('skips the timed-out version and still bounds the first failing one', async () => {
    let replays = 0;
    const probe = replayProbe({
      recording,
      predicate: () => builtinPredicate('all'),
      outRoot: path.join(tmp.dir, 'probes'),
      command: ['sh', '-c', AGENT],
      idleTimeoutMs: 1500,
    });
    const counted = async (text: string) => {
      replays++;
      return probe(text);
    };
    const versions = ['good 1', 'good 2', 'hang 3', 'bad 4', 'bad 5'].map((text) => ({ label: text, text }));
    const result = await bisectPrompts({ versions, probe: counted, recordingId: 'rec' });
    expect(result.timedOut.map((t) => t.version)).toEqual([2]);
    expect(result.timedOut[0]?.reason).toMatch(
      /^timed out: no progress for 1500ms \(the idle limit\) before any step was served; the agent was waiting/,
    );
    // The boundary is between version 2 (passes) and 4 (fails), with 3 unknown.
    expect(result.firstBad).toBeUndefined();
    expect(result.candidates).toEqual([2, 3]);
    expect(result.lastGood).toBeUndefined();
    expect(formatPromptBisect(result)).toMatch(
      /first failing version: one of 3, 4 \(timed-out versions hide the boundary\)/,
    );
    expect(formatPromptBisect(result)).toMatch(/version 3 \(hang 3\) timed out: timed out: no progress/);
    // Probed again, the timed-out version runs again (never cached); the others come from the cache.
    const before = replays;
    const again = await bisectPrompts({ versions, probe: counted, recordingId: 'rec' });
    expect(again.candidates).toEqual([2, 3]);
    expect(replays - before).toBe(again.path.length);
  });
});
