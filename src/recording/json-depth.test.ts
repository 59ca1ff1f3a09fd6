import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capDepth } from './json.js';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from './read-files.js';

const nest = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('jsonDepthExceeds', () => {
  it('tells nesting past the limit from nesting up to it, however many brackets a line holds', () => {
    const pad = (json: string) => `{"pad":"${'x'.repeat(500)}","v":${json}}`; // long enough to be looked at
    expect(jsonDepthExceeds(pad(nest(MAX_JSON_DEPTH - 1)))).toBe(false);
    expect(jsonDepthExceeds(pad(nest(MAX_JSON_DEPTH)))).toBe(true);
    // Thousands of brackets, all shallow: siblings, not nesting.
    expect(jsonDepthExceeds(pad(`[${Array.from({ length: 5000 }, () => '{"a":[1]}').join(',')}]`))).toBe(false);
    // Brackets inside strings do not nest; escaped quotes do not end the string.
    expect(jsonDepthExceeds(pad(JSON.stringify('{['.repeat(5000))))).toBe(false);
    expect(jsonDepthExceeds(pad(`["\\"${'['.repeat(300)}"]`))).toBe(false);
    expect(jsonDepthExceeds(pad(`["\\"",${nest(MAX_JSON_DEPTH)}]`))).toBe(true);
    // Just over the limit, with few other brackets anywhere.
    expect(jsonDepthExceeds(`${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`)).toBe(true);
  });
});

describe('capDepth', () => {
  it('keeps a value within the depth as it is, and what is deeper as exactly the JSON text JSON.stringify gives', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.integer({ min: 1, max: 4 }), (value, levels) => {
        const capped = capDepth(value, levels);
        const texts: string[] = [];
        const walk = (v: unknown, left: number, original: unknown): void => {
          if (left <= 0 && original !== null && typeof original === 'object') {
            expect(v).toBe(JSON.stringify(original));
            texts.push(v as string);
            return;
          }
          if (Array.isArray(original)) for (const [i, x] of original.entries()) walk((v as unknown[])[i], left - 1, x);
          else if (original !== null && typeof original === 'object')
            for (const [k, x] of Object.entries(original)) walk((v as Record<string, unknown>)[k], left - 1, x);
          else expect(v).toBe(original);
        };
        walk(capped, levels, value);
        if (texts.length === 0) expect(capped).toBe(value);
      }),
      { seed: 7, numRuns: 300 },
    );
  });

  it('writes out a value thousands of levels deep without recursion', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? [deep] : { a: deep };
    const capped = capDepth({ top: deep }, 1) as { top: string };
    expect(capped.top.length).toBeGreaterThan(300_000);
    expect(capped.top.startsWith('[{"a":[{"a":')).toBe(true);
  });
});
