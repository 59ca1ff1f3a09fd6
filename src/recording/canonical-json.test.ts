import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, canonicalJsonPretty } from './canonical-json.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and drops undefined like JSON.stringify', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, undefined], c: undefined } })).toBe('{"a":{"d":[3,null]},"b":1}');
    expect(canonicalJson({ t: new Date(0), n: Number.NaN, z: -0 })).toBe(
      '{"n":null,"t":"1970-01-01T00:00:00.000Z","z":0}',
    );
  });

  it('parses back to the same value and ignores key order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
        expect(JSON.parse(canonicalJsonPretty(value))).toEqual(JSON.parse(text));
      }),
    );
    expect(canonicalJson({ x: 1, y: 2 })).toBe(canonicalJson({ y: 2, x: 1 }));
  });
});
