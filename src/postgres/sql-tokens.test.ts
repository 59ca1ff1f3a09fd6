import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type SqlToken, tokenize } from './sql-tokens.js';

const kinds = (sql: string) => tokenize(sql)?.map((t) => [t.kind, t.v]);
const strings = (sql: string) => tokenize(sql)?.flatMap((t) => (t.kind === 'string' ? [t.text] : []));

describe('tokenize: SQL as Postgres lexes it', () => {
  it('reads every form of string to its value', () => {
    expect(strings("'it''s'")).toEqual(["it's"]);
    // Standard strings keep backslashes; E'' strings read them as escapes, bytes as UTF-8.
    expect(strings("'a\\n' E'a\\n\\t\\'\\\\' e'\\x41\\101\\u00e9\\U0001F600\\q'")).toEqual([
      'a\\n',
      "a\n\t'\\",
      'AAé😀q',
    ]);
    expect(strings("E'\\xc3\\xa9'")).toEqual(['é']);
    expect(strings("U&'d\\0061t\\+000061 \\\\' u&'x!0041' UESCAPE '!'")).toEqual(['data \\', 'xA']);
    expect(strings("U&'\\D83D\\DE00' U&'a*0062' /* c */ uescape\n'*'")).toEqual(['😀', 'ab']);
    expect(strings("$$it's$$ $fn$ $$ inside $fn$ $é$x$é$")).toEqual(["it's", ' $$ inside ', 'x']);
  });

  it('refuses what Postgres refuses: unterminated text, escapes that are no character', () => {
    for (const sql of [
      "'open",
      "E'open\\'",
      '"open',
      '$tag$ open $tag',
      '/* open /* nested */',
      "E'\\000'",
      "E'\\xff'",
      "E'\\u12'",
      "E'\\ud800'",
      "U&'\\D800'",
      "U&'\\00'",
      "U&'\\+110000'",
      "U&'x' UESCAPE 'ab'",
      "U&'x' UESCAPE '+'",
      "U&'x' UESCAPE x",
    ])
      expect(tokenize(sql), sql).toBeUndefined();
  });

  it('reads quoted identifiers, unicode ones too, and folds only A-Z of a word', () => {
    expect(kinds('"My ""T""" U&"d\\0061ta" Été')).toEqual([
      ['ident', 'My "T"'],
      ['ident', 'data'],
      ['word', 'Été'],
    ]);
    // u& with a space is a word, an operator and a string.
    expect(kinds("u & 'x'")).toEqual([
      ['word', 'u'],
      ['punct', '&'],
      ['string', "'x'"],
    ]);
  });

  it('skips comments, nested ones too, wherever they are', () => {
    expect(kinds('a /* x /* y */ still */ b -- c\n c--')).toEqual([
      ['word', 'a'],
      ['word', 'b'],
      ['word', 'c'],
    ]);
    expect(kinds('<--x')).toEqual([['punct', '<']]);
  });

  it('reads numbers with underscores and in other bases', () => {
    expect(kinds('1_000 1_000.5_5e1_0 0x_1F 0o17 0b1_01 .5 1. 1..2')).toEqual([
      ['number', '1_000'],
      ['number', '1_000.5_5e1_0'],
      ['number', '0x_1F'],
      ['number', '0o17'],
      ['number', '0b1_01'],
      ['number', '.5'],
      ['number', '1.'],
      ['number', '1'],
      ['punct', '.'],
      ['punct', '.'],
      ['number', '2'],
    ]);
    expect(kinds('$1 $2x')).toEqual([
      ['param', '$1'],
      ['param', '$2'],
      ['word', 'x'],
    ]);
  });

  it('never throws, and its tokens are in order inside the text', () => {
    const piece = fc.oneof(
      fc.constantFrom(
        "'",
        '"',
        '$',
        '$$',
        '$a$',
        'E',
        'U&',
        '&',
        '\\',
        '/*',
        '*/',
        '--',
        '\n',
        ' ',
        'uescape',
        '.',
        '_',
      ),
      fc.string({ maxLength: 4 }),
      fc.string({ maxLength: 4, unit: 'binary' }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
        const sql = parts.join('');
        const tokens = tokenize(sql);
        if (tokens === undefined) return;
        let at = 0;
        for (const t of tokens as SqlToken[]) {
          expect(t.start).toBeGreaterThanOrEqual(at);
          expect(t.end).toBeGreaterThan(t.start);
          expect(t.end).toBeLessThanOrEqual(sql.length);
          at = t.end;
        }
      }),
      { numRuns: 2000 },
    );
  });
});
