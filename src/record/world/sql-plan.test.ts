// The planner's readings (RETURNING added after the last token; names it once could not lex) and,
// for an UPDATE that assigns a key column, the join withOldRow adds: the agent's statement keeps its
// meaning (its WHERE whole, its FROM list, its RETURNING columns).
import { describe, expect, it } from 'vitest';
import { planStatement, withOldRow, withReturning } from './sql-plan.js';

const join = (sql: string) => withOldRow(sql, planStatement(sql), 'S AS o', 'M');
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

describe('an UPDATE joined to its rows before it', () => {
  it('reads the SET list’s targets, single and parenthesised', () => {
    expect(planStatement(`UPDATE t SET a = b + 1, (c, "D") = (1, 2), e[1] = 3 WHERE x`).setTargets).toEqual([
      'a',
      'c',
      'D',
      'e',
    ]);
    expect(planStatement(`UPDATE t SET a = (SELECT id FROM u WHERE u.k = t.k)`).setTargets).toEqual(['a']);
  });

  it('adds the row source and the match around the statement’s own clauses', () => {
    expect(join('UPDATE t SET id = id + 1')).toBe('UPDATE t SET id = id + 1 FROM S AS o  WHERE M ');
    expect(join('UPDATE t SET id = 2 WHERE a OR b RETURNING *')).toBe(
      'UPDATE t SET id = 2  FROM S AS o WHERE ( a OR b ) AND M RETURNING "t".*',
    );
    expect(join('UPDATE t AS x SET id = v.n FROM v WHERE x.id = v.o RETURNING x.id, v.n')).toBe(
      'UPDATE t AS x SET id = v.n FROM S AS o, v WHERE ( x.id = v.o ) AND M RETURNING x.id, v.n',
    );
  });

  it('declines what it cannot keep the meaning of', () => {
    expect(join('UPDATE t SET id = 2 WHERE CURRENT OF c')).toBeUndefined();
    expect(join('UPDATE t SET id = v.n FROM v WHERE t.id = v.o RETURNING *')).toBeUndefined();
  });
});
