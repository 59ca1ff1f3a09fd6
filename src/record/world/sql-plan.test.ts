import { describe, expect, it } from 'vitest';
import { planStatement, withReturning } from './sql-plan.js';

const returning = (sql: string) => withReturning(sql, planStatement(sql), 'to_jsonb(t) AS row');

describe('planStatement', () => {
  it('adds RETURNING after the last token, a trailing ; or comment left after it', () => {
    expect(returning('UPDATE t SET x = 1 WHERE id = $1; -- done')).toBe(
      'UPDATE t SET x = 1 WHERE id = $1 RETURNING to_jsonb(t) AS row; -- done',
    );
    expect(returning("INSERT INTO t (x) VALUES (E'a;') RETURNING id")).toBe(
      "INSERT INTO t (x) VALUES (E'a;') RETURNING id, to_jsonb(t) AS row",
    );
  });

  it('takes a quoted identifier as a name even when it spells punctuation', () => {
    // ";" ends the statement's text, "." and "*" are aliases: none is the punctuation it spells.
    expect(returning('UPDATE t SET x = 1 FROM s AS ";"')).toBe(
      'UPDATE t SET x = 1 FROM s AS ";" RETURNING to_jsonb(t) AS row',
    );
    expect(planStatement('DELETE FROM t "*" WHERE "*".x = 1')).toMatchObject({ kind: 'delete', ref: '*' });
    expect(planStatement('UPDATE a "." SET x = 1')).toMatchObject({ kind: 'update', table: { name: 'a' }, ref: '.' });
    expect(planStatement('SELECT 1; SELECT ";"')).toMatchObject({ kind: 'other' });
    expect(planStatement('SELECT ";"')).toMatchObject({ kind: 'read' });
  });

  it('reads statements it could not lex before: U& names, dollar tags of any letter, nested comments', () => {
    expect(planStatement('INSERT INTO U&"d\\0061ta" (x) VALUES ($é$;$é$) /* a /* b */ ; */')).toMatchObject({
      kind: 'insert',
      table: { name: 'data' },
    });
  });
});
