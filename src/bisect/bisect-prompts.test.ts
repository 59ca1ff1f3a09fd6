import { describe, expect, it } from 'vitest';
import { bisectPrompts } from './bisect-prompts.js';
import { memoryStore } from './probe-cache.js';

const versions = Array.from({ length: 8 }, (_, i) => ({
  label: `prompt-v${i + 1}.md`,
  text: `You are a travel desk agent.\n${i + 1 >= 5 ? 'Never re-check availability after a failed booking.\n' : 'After a failed booking, search again.\n'}(v${i + 1})\n`,
}));

/** A deterministic probe: the replay fails when the prompt drops the re-check rule (versions 5..8). */
const probe = async (text: string) => ({ ok: !text.includes('Never re-check'), cost: 0.02 });

describe('bisectPrompts', () => {
  it('finds version 5 of 8 with at most 4 replays and reports their cost', async () => {
    const seen: string[] = [];
    const result = await bisectPrompts({
      versions,
      recordingId: 'baseline',
      probe: async (text) => {
        seen.push(text);
        return probe(text);
      },
    });
    expect(result.firstBad?.label).toBe('prompt-v5.md');
    expect(result.lastGood?.label).toBe('prompt-v4.md');
    expect(result.evaluations).toBeLessThanOrEqual(4);
    expect(result.maxEvaluations).toBe(4);
    expect(seen.length).toBe(result.stats.replays);
    expect(result.stats.cost).toBeCloseTo(0.02 * result.stats.replays);
  });

  it('answers a repeated bisection from the cache without replaying', async () => {
    const store = memoryStore();
    let replays = 0;
    const counted = async (text: string) => {
      replays++;
      return probe(text);
    };
    await bisectPrompts({ versions, recordingId: 'baseline', probe: counted, store });
    const first = replays;
    const again = await bisectPrompts({ versions, recordingId: 'baseline', probe: counted, store });
    expect(replays).toBe(first);
    expect(again.stats.cacheHits).toBe(again.evaluations);
    expect(again.firstBad?.version).toBe(4);
  });

  it('keys the cache by recording too: another recording replays again', async () => {
    const store = memoryStore();
    let replays = 0;
    const counted = async (text: string) => {
      replays++;
      return probe(text);
    };
    await bisectPrompts({ versions, recordingId: 'a', probe: counted, store });
    const first = replays;
    await bisectPrompts({ versions, recordingId: 'b', probe: counted, store });
    expect(replays).toBe(2 * first);
  });

  it('reports no regression when the last version passes', async () => {
    const result = await bisectPrompts({ versions: versions.slice(0, 4), recordingId: 'r', probe });
    expect(result.firstBad).toBeUndefined();
    expect(result.evaluations).toBe(1);
  });

  it('turns a probe that crashes into a clear error naming the version', async () => {
    await expect(
      bisectPrompts({
        versions,
        recordingId: 'r',
        probe: async () => Promise.reject(new Error('model endpoint down')),
      }),
    ).rejects.toThrow(/prompt version 8 \(prompt-v8.md\).*model endpoint down/);
  });
});

describe('the probe cache key', () => {
  it('includes what judges the replay, so a new contract or predicate replays again', async () => {
    const store = memoryStore();
    let replays = 0;
    const counted = async (text: string) => {
      replays++;
      return probe(text);
    };
    await bisectPrompts({ versions, recordingId: 'r', probe: counted, store, judge: 'predicate:all' });
    const first = replays;
    await bisectPrompts({ versions, recordingId: 'r', probe: counted, store, judge: 'predicate:all' });
    expect(replays).toBe(first);
    await bisectPrompts({ versions, recordingId: 'r', probe: counted, store, judge: 'contract:abc' });
    expect(replays).toBe(2 * first);
  });
});
