import { describe, expect, it } from 'vitest';
import { describeVersionChanges, versionChanges } from './version-changes.js';

describe('the packages that changed version since the recording', () => {
  it('are the recorded ones at another version or gone, said in one line', () => {
    const changes = versionChanges(
      { openai: '6.1.0', 'drizzle-orm': '0.44.2', pg: '8.11.0', axios: '1.7.0' },
      { 'drizzle-orm': '0.45.4', pg: '8.16.0', axios: '1.7.0', undici: '7.0.0' },
    );
    expect(changes).toEqual([
      { name: 'drizzle-orm', recorded: '0.44.2', now: '0.45.4' },
      { name: 'openai', recorded: '6.1.0', now: null },
      { name: 'pg', recorded: '8.11.0', now: '8.16.0' },
    ]);
    expect(describeVersionChanges(changes)).toMatch(
      /^the agent loads other package versions than recorded \(drizzle-orm 0\.44\.2 → 0\.45\.4, pg 8\.11\.0 → 8\.16\.0; openai no longer found\): /,
    );
  });

  it('are none when the versions are the recorded ones, or the recording names none', () => {
    expect(versionChanges({ pg: '8.11.0' }, { pg: '8.11.0', openai: '6.1.0' })).toEqual([]);
    expect(versionChanges({}, { pg: '8.11.0' })).toEqual([]);
  });

  it('keep a hostile recording’s line short: long names clipped, a long list counted', () => {
    const names = Array.from({ length: 50 }, (_, i) => `pkg-${i}`.padEnd(500, 'x'));
    // As a manifest is parsed: `__proto__` an own key like any other.
    const recorded = JSON.parse(`{${[...names, '__proto__'].map((n) => `"${n}":"1.0.0"`).join(',')}}`);
    const line = describeVersionChanges(versionChanges(recorded, {}));
    expect(line.length).toBeLessThan(1200);
    expect(line).toContain('and 43 more no longer found');
  });
});
