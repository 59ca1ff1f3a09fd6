// The planner's reading of an UPDATE that assigns a key column, and the join withOldRow adds: the
// agent's statement keeps its meaning (its WHERE whole, its FROM list, its RETURNING columns).
import { describe, expect, it } from 'vitest';
import { planStatement, withOldRow } from './sql-plan.js';

const join = (sql: string) => withOldRow(sql, planStatement(sql), 'S AS o', 'M');

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
