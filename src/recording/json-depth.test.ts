import { describe, expect, it } from 'vitest';
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
