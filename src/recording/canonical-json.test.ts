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

// The definition, written plainly: keys sorted by code unit, what JSON.stringify drops dropped.
function reference(v: unknown, indent?: string): string | undefined {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? (v === 0 ? '0' : String(v)) : 'null';
    case 'boolean':
      return String(v);
    case 'object':
      break;
    default:
      return undefined;
  }
  const inner = indent === undefined ? undefined : `${indent}  `;
  const join = (items: string[], open: string, close: string) =>
    inner === undefined
      ? `${open}${items.join(',')}${close}`
      : items.length === 0
        ? `${open}${close}`
        : `${open}\n${items.map((i) => inner + i).join(',\n')}\n${indent}${close}`;
  if (Array.isArray(v))
    return join(
      v.map((x) => reference(x, inner) ?? 'null'),
      '[',
      ']',
    );
  const toJSON = (v as { toJSON?: () => unknown }).toJSON;
  if (typeof toJSON === 'function') return reference(toJSON.call(v), indent);
  const items: string[] = [];
  for (const key of Object.keys(v as object).sort()) {
    const x = reference((v as Record<string, unknown>)[key], inner);
    if (x !== undefined) items.push(`${JSON.stringify(key)}:${inner === undefined ? '' : ' '}${x}`);
  }
  return join(items, '{', '}');
}

describe('canonicalJson on any value', () => {
  const key = fc.oneof(fc.string(), fc.constantFrom('0', '1', '9', '10', '01', '-1', 'a', 'B', 'é', '\u{1F600}'));
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.constant(undefined),
      fc.boolean(),
      fc.double(),
      fc.integer(),
      fc.string(),
      fc.date(),
      fc.array(tie('v')),
      fc.dictionary(key, tie('v')),
      // Not plain data: the fast way hands these to the replacer's way.
      // Each key an own data property: Object.assign would take a generated `__proto__` key for
      // the prototype (a Date's, whose inherited toJSON then throws in JSON.stringify too).
      fc
        .dictionary(key, tie('v'))
        .map((d) =>
          Object.entries(d).reduce(
            (point, [k, v]) =>
              Object.defineProperty(point, k, { value: v, enumerable: true, writable: true, configurable: true }),
            new (class Point {})(),
          ),
        ),
      fc.dictionary(key, tie('v')).map((d) => ({ ...d, toJSON: 'a field, not a method' })),
      // (toJSON is called once: a Date it gives is not turned into its string.)
      fc.tuple(fc.dictionary(key, tie('v')), fc.jsonValue()).map(([d, v]) => ({ ...d, toJSON: () => v })),
    ),
  })).v;
  it('is the definition, compact and pretty, index-like keys included', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(canonicalJson(v)).toBe(reference(v) ?? 'null');
        expect(canonicalJsonPretty(v)).toBe(reference(v, '') ?? 'null');
      }),
      { numRuns: 3000 },
    );
  });
});

describe('canonicalJson and a key named __proto__', () => {
  it('keeps it as a key (a property test once found it dropped when the keys needed sorting)', () => {
    const value = JSON.parse('{"__proto__":0,"B":[]}');
    expect(canonicalJson(value)).toBe('{"B":[],"__proto__":0}');
    expect(JSON.parse(canonicalJson(value))).toEqual(value);
  });
});
