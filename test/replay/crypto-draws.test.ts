// Ids an agent makes from node:crypto's random bytes (randomBytes, also as a named import and with
// a callback; randomFillSync and randomFill over part of a buffer; randomInt) are recorded and
// handed back: a replay makes the same ids, so requests that carry them match the recorded ones.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { detectIsolation } from '../../sandbox/os/detect.js';
import { recordAgent, replayExact, tempDir } from '../record/helpers.js';

const AGENT = fileURLToPath(new URL('fixtures/crypto-draws-agent.mjs', import.meta.url));
const LEVELS = detectIsolation().level === 'bwrap' ? (['bwrap', 'none'] as const) : (['none'] as const);

describe("node:crypto's random bytes", () => {
  const tmp = tempDir('tapedeck-crypto-draws-');
  afterAll(() => tmp.remove());

  it('are recorded and handed back in a replay, whichever way the agent drew them', { timeout: 120_000 }, async () => {
    const out = path.join(tmp.dir, 'rec');
    const recorded = await recordAgent(AGENT, out);
    expect(recorded.exitCode).toBe(0);
    const seen = JSON.parse(recorded.stdout.trim()) as string[];
    // The parts of the buffers not filled stay zero.
    expect(seen[3]?.slice(0, 4)).toBe('0000');
    expect(seen[3]?.slice(16)).toBe('00000000');
    expect(seen[4]?.slice(0, 10)).toBe('0000000000');
    // randomInt: in range, and Node's own errors for what it refuses.
    const [below10, around0, wide, die, promised, halfKept, ...errors] = seen.slice(7) as unknown as [
      number,
      number,
      number,
      number,
      number,
      string,
      ...string[],
    ];
    expect(below10).toBeGreaterThanOrEqual(0);
    expect(below10).toBeLessThan(10);
    expect(around0).toBeGreaterThanOrEqual(-5);
    expect(around0).toBeLessThan(5);
    expect(wide).toBeGreaterThanOrEqual(1_000_000);
    expect(die).toBeGreaterThanOrEqual(1);
    expect(die).toBeLessThan(7);
    expect(promised).toBeLessThan(100);
    expect(halfKept.split(' ').every((n) => Number(n) <= 2 ** 47)).toBe(true);
    expect(errors).toEqual(['ERR_OUT_OF_RANGE', 'ERR_INVALID_ARG_TYPE', 'ERR_INVALID_ARG_TYPE', 'ERR_OUT_OF_RANGE']);
    for (const isolation of LEVELS) {
      const result = await replayExact(out, path.join(tmp.dir, `replay-${isolation}`), isolation);
      expect(result.divergences, result.output?.stderr).toEqual([]);
      expect(JSON.parse(result.output?.stdout.trim() ?? '[]'), isolation).toEqual(seen);
    }
  });
});
