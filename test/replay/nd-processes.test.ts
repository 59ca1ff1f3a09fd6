// Values drawn by several processes (clock, random, uuid): each process of a replay gets the
// values its own recorded process drew, whatever order the processes drew them in. Every process
// is named by where it was started (the n-th child of its parent, started by the replay preload's
// and the recorder's spawn alike; processes that share a name, such as two a shell ran, by the
// order they started), and the recording keeps one sequence of values per process.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordAgent, replayExact, tempDir } from '../record/helpers.js';

const AGENT = fileURLToPath(new URL('fixtures/nd-processes-agent.mjs', import.meta.url));
const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);

describe("each process's values in a replay", () => {
  const tmp = tempDir('tapedeck-nd-processes-');
  afterAll(() => tmp.remove());

  it.each(LEVELS)(
    "hands every process the values it drew when recorded, not another process's (isolation %s)",
    {
      timeout: 180_000,
    },
    async (isolation) => {
      // A shell runs only in the OS sandbox (without it, programs that are not Node are refused).
      const shell = isolation === 'bwrap';
      const out = path.join(tmp.dir, `rec-${isolation}`);
      const recorded = await recordAgent(AGENT, out, { ND_SHELL: shell ? '1' : '0' });
      expect(recorded.exitCode).toBe(0);
      const seen = JSON.parse(recorded.stdout.trim()) as Record<string, unknown[]>;
      expect(Object.keys(seen)).toEqual([
        'before',
        'a',
        'b',
        'between',
        'killed',
        ...(shell ? ['shell'] : []),
        'after',
      ]);
      // One sequence per process: the agent's own unnamed, the rest by where they were started.
      const names = (dir: string) =>
        [
          ...new Set(
            readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as { type: string; payload: { process?: string } })
              .filter((e) => e.type === 'nondeterminism')
              .map((e) => e.payload.process ?? 'agent'),
          ),
        ].sort();
      const expected = ['1', '2', '3', ...(shell ? ['4', '4#2'] : []), 'agent'];
      expect(names(out)).toEqual(expected);
      const replayed = path.join(tmp.dir, `replay-${isolation}`);
      const result = await replayExact(out, replayed, isolation);
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(JSON.parse(result.output?.stdout.trim() ?? '{}')).toEqual(seen);
      // The replay's own recording keeps them apart too (a replay of it hands them out alike).
      expect(names(replayed)).toEqual(expected);
    },
  );
});
