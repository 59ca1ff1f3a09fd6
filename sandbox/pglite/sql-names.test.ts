import { describe, expect, it } from 'vitest';
import { readSessionUse } from './sql-names.js';

const own = (name: string) => `_td1_${name}`;
const read = (sql: string) => readSessionUse(sql, own);

describe('readSessionUse', () => {
  it('renames exactly the statement and cursor names, as quoted identifiers', () => {
    expect(read('PREPARE Pick (int) AS SELECT $1').sql).toBe('PREPARE "_td1_pick" (int) AS SELECT $1');
    expect(read('execute "Pick"(1); EXPLAIN (ANALYZE, COSTS OFF) EXECUTE p').sql).toBe(
      'execute "_td1_Pick"(1); EXPLAIN (ANALYZE, COSTS OFF) EXECUTE "_td1_p"',
    );
    expect(read('CREATE TABLE t AS EXECUTE p (2)').sql).toBe('CREATE TABLE t AS EXECUTE "_td1_p" (2)');
    expect(read('DEALLOCATE PREPARE p').deallocated).toEqual(['_td1_p']);
    expect(read('FETCH FORWARD -2 IN c').sql).toBe('FETCH FORWARD -2 IN "_td1_c"');
    expect(read('MOVE ABSOLUTE 3 FROM "C"').sql).toBe('MOVE ABSOLUTE 3 FROM "_td1_C"');
    expect(read('UPDATE t SET x = 1 WHERE CURRENT OF c').sql).toBe('UPDATE t SET x = 1 WHERE CURRENT OF "_td1_c"');
    const held = read('DECLARE c NO SCROLL CURSOR WITH HOLD FOR SELECT 1; CLOSE d');
    expect(held.sql).toBe('DECLARE "_td1_c" NO SCROLL CURSOR WITH HOLD FOR SELECT 1; CLOSE "_td1_d"');
    expect([held.held, held.closed]).toEqual([['_td1_c'], ['_td1_d']]);
  });

  it('keeps a hostile name inside its quotes', () => {
    const use = read(`PREPARE "x""; DROP TABLE t; --" AS SELECT 1`);
    expect(use.sql).toBe(`PREPARE "_td1_x""; DROP TABLE t; --" AS SELECT 1`);
    expect(use.prepared).toEqual([{ name: '_td1_x"; DROP TABLE t; --', sql: use.sql }]);
  });

  it('leaves what only looks like a name alone: strings, bodies, comments, other EXECUTEs', () => {
    for (const sql of [
      `DO $$BEGIN EXECUTE 'PREPARE p AS SELECT 1'; END$$`,
      'GRANT EXECUTE ON FUNCTION f() TO r',
      'CREATE TRIGGER t AFTER INSERT ON x FOR EACH ROW EXECUTE FUNCTION f()',
      `PREPARE TRANSACTION 'gid'`,
      `SELECT 'EXECUTE p' -- FETCH c
       /* CLOSE c */`,
      `SELECT 'unterminated`,
    ]) {
      expect(read(sql).sql).toBe(sql);
    }
  });

  it('notes temporary objects, advisory locks and what clears a whole session', () => {
    expect(read('CREATE OR REPLACE TEMP VIEW v AS SELECT 1').temp).toBe(true);
    expect(read('CREATE SEQUENCE pg_temp.s').temp).toBe(true);
    expect(read('SELECT 1 INTO TEMPORARY TABLE t').temp).toBe(true);
    expect(read('CREATE TEMP TABLE t (x int) ON COMMIT DROP').temp).toBe(false);
    expect(read('CREATE TEMP TABLE t (x int) ON COMMIT DROP; CREATE TEMP TABLE u (y int)').temp).toBe(true);
    expect(read('SELECT x INTO y FROM (SELECT 1 AS x) s').temp).toBe(false);
    expect(read('SELECT pg_catalog.pg_try_advisory_lock(1)')).toMatchObject({ sessionLock: true, advisory: true });
    expect(read('SELECT pg_advisory_xact_lock(1)')).toMatchObject({ sessionLock: false, advisory: true });
    expect(read("SELECT 'pg_advisory_lock(1)'")).toMatchObject({ advisory: false });
    expect(read('DEALLOCATE ALL; DISCARD ALL; CLOSE ALL')).toMatchObject({
      deallocateAll: true,
      discard: 'all',
      closeAll: true,
    });
  });
});
