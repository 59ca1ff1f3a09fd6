// Column defaults read as data from the catalog's text: a clock plus or minus an interval constant
// (an expiry) is described; anything else around a clock stays outside the grammar.
import { describe, expect, it } from 'vitest';
import { parseColumnDefault } from './catalog-expr.js';
import { ColumnDefaultSchema } from './schema.js';

describe('parseColumnDefault: clocks and intervals', () => {
  it.each([
    ["(now() + '14 days'::interval)", { kind: 'function', name: 'now', plus: '14 days' }],
    ["(CURRENT_TIMESTAMP - '01:30:00'::interval)", { kind: 'function', name: 'current_timestamp', minus: '01:30:00' }],
    [
      "(statement_timestamp() + '1 mon 2 days -00:00:01'::interval)",
      { kind: 'function', name: 'statement_timestamp', plus: '1 mon 2 days -00:00:01' },
    ],
    ["'00:15:00'::interval", { kind: 'value', value: '00:15:00' }],
    ['now()', { kind: 'function', name: 'now' }],
  ])('%s is described', (text, expected) => {
    expect(parseColumnDefault(text)).toEqual(expected);
    expect(ColumnDefaultSchema.safeParse(expected).success).toBe(true);
  });

  it.each([
    "(gen_random_uuid() + '1 day'::interval)",
    "(now() + '1 day'::text)",
    "(now() + ('1 day'::interval * 2))",
    "(now() + '1 day''; DROP TABLE x; --'::interval)",
    "(now() * '2'::interval)",
    "(now() + '14 days'::interval + '1 day'::interval)",
  ])('%s is not', (text) => {
    expect(parseColumnDefault(text)).toBeUndefined();
  });

  it('a recording cannot add an interval to a function that is not a clock, nor put SQL in one', () => {
    expect(ColumnDefaultSchema.safeParse({ kind: 'function', name: 'gen_random_uuid', plus: '1 day' }).success).toBe(
      false,
    );
    expect(ColumnDefaultSchema.safeParse({ kind: 'function', name: 'now', plus: "1 day'; DROP" }).success).toBe(false);
  });
});
