import { describe, expect, it } from 'vitest';
import { tokenize } from './sql-cursor.js';

describe('sql-cursor tokenize: values and operators over the one SQL lexer', () => {
  it('reads the catalog forms as before', () => {
    expect(tokenize("nextval('\"S\"''q'::regclass) <= -1.5e3 || x; ;")).toEqual([
      { t: 'id', v: 'nextval', quoted: false },
      { t: 'p', v: '(' },
      { t: 'str', v: `"S"'q` },
      { t: 'p', v: '::' },
      { t: 'id', v: 'regclass', quoted: false },
      { t: 'p', v: ')' },
      { t: 'p', v: '<=' },
      { t: 'p', v: '-' },
      { t: 'num', v: '1.5e3' },
      { t: 'p', v: '||' },
      { t: 'id', v: 'x', quoted: false },
    ]);
    // An operator does not end in + or - unless it holds one of ~!@#%^&|`?.
    expect(tokenize('a=-1 b~~*c d@-e')?.filter((t) => t.t === 'p')).toEqual([
      { t: 'p', v: '=' },
      { t: 'p', v: '-' },
      { t: 'p', v: '~~*' },
      { t: 'p', v: '@-' },
    ]);
  });

  it('reads the forms it got wrong before: escapes, dollar quotes, comments, unicode, numbers', () => {
    expect(tokenize("E'it\\'s\\n' U&'\\00e9' $q$a'b$q$")).toEqual([
      { t: 'str', v: "it's\n" },
      { t: 'str', v: 'é' },
      { t: 'str', v: "a'b" },
    ]);
    // A comment is not an operator, and does not end one.
    expect(tokenize('1 -- note\n+ /* a /* b */ */ 2')).toEqual([
      { t: 'num', v: '1' },
      { t: 'p', v: '+' },
      { t: 'num', v: '2' },
    ]);
    expect(tokenize('a#+--c')).toEqual([
      { t: 'id', v: 'a', quoted: false },
      { t: 'p', v: '#+' },
    ]);
    expect(tokenize('Été U&"\\0041b"')).toEqual([
      { t: 'id', v: 'Été', quoted: false },
      { t: 'id', v: 'Ab', quoted: true },
    ]);
    expect(tokenize('1_000 0x1F 0b101 -0o17')).toEqual([
      { t: 'num', v: '1000' },
      { t: 'num', v: '31' },
      { t: 'num', v: '5' },
      { t: 'p', v: '-' },
      { t: 'num', v: '15' },
    ]);
  });

  it('refuses parameters, stray characters and what cannot be lexed', () => {
    for (const sql of ['$1', 'a \\ b', "'open", "E'\\xff'", '/* open', 'x'.repeat(100_001)])
      expect(tokenize(sql), sql.slice(0, 20)).toBeUndefined();
  });
});
