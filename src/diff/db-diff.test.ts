import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DbSnapshot, Row } from '../recording/index.js';
import { diffDb, rowRef } from './db-diff.js';

function snapshot(rows: Row[], primaryKey = ['id']): DbSnapshot {
  return {
    schemas: ['public'],
    ddl: [],
    tables: [
      {
        schema: 'public',
        name: 'bookings',
        columns: [
          { name: 'id', type: 'int4', nullable: false },
          { name: 'flight', type: 'text', nullable: false },
          { name: 'seats', type: 'int4', nullable: false },
        ],
        primaryKey,
        rows,
      },
    ],
  };
}

describe('diffDb', () => {
  it('reports inserted, updated and deleted rows by primary key with the changed columns', () => {
    const before = snapshot([
      { id: 1, flight: 'TD101', seats: 1 },
      { id: 2, flight: 'TD202', seats: 2 },
      { id: 3, flight: 'TD303', seats: 1 },
    ]);
    const after = snapshot([
      { id: 1, flight: 'TD101', seats: 1 },
      { id: 2, flight: 'TD202', seats: 3 },
      { id: 4, flight: 'TD404', seats: 1 },
    ]);
    const changes = diffDb(before, after);
    expect(changes.map((c) => [c.op, c.key.id, c.changedColumns])).toEqual([
      ['update', 2, ['seats']],
      ['delete', 3, ['id', 'flight', 'seats']],
      ['insert', 4, ['id', 'flight', 'seats']],
    ]);
    expect(changes[0]!.before).toEqual({ id: 2, flight: 'TD202', seats: 2 });
  });

  it('attributes each row change to the step that made it', () => {
    const attribution = new Map([[rowRef('public', 'bookings', { id: 4 }), [3, 7]]]);
    const changes = diffDb(snapshot([]), snapshot([{ id: 4, flight: 'TD404', seats: 1 }]), { attribution });
    expect(changes[0]).toMatchObject({ op: 'insert', stepId: 7, steps: [3, 7] });
  });

  it('marks an update whose only changed columns the server fills from its clock', () => {
    const stamped = (rows: Row[]): DbSnapshot => {
      const db = snapshot(rows);
      const table = db.tables[0] as DbSnapshot['tables'][number];
      table.columns.push({
        name: 'booked_at',
        type: 'timestamp with time zone',
        nullable: false,
        default: { kind: 'function', name: 'clock_timestamp' },
      });
      return db;
    };
    const changes = diffDb(
      stamped([
        { id: 1, flight: 'TD101', seats: 1, booked_at: '2026-01-01T00:00:00.000000Z' },
        { id: 2, flight: 'TD202', seats: 1, booked_at: '2026-01-01T00:00:00.000000Z' },
      ]),
      stamped([
        { id: 1, flight: 'TD101', seats: 1, booked_at: '2026-02-01T00:00:00.000000Z' },
        { id: 2, flight: 'TD202', seats: 2, booked_at: '2026-02-01T00:00:00.000000Z' },
      ]),
    );
    expect(changes.map((c) => [c.key.id, c.changedColumns, c.serverClock])).toEqual([
      [1, ['booked_at'], true],
      [2, ['seats', 'booked_at'], undefined],
    ]);
  });

  it('keeps 1 and "1" apart as keys', () => {
    const changes = diffDb(
      snapshot([{ id: 1, flight: 'A', seats: 1 }]),
      snapshot([{ id: '1', flight: 'A', seats: 1 }]),
    );
    expect(changes.map((c) => c.op).sort()).toEqual(['delete', 'insert']);
  });

  it('finds exactly the rows a random edit touched (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 500 }), { maxLength: 60 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 500 }), fc.constantFrom('update', 'delete', 'insert')), {
          maxLength: 20,
        }),
        (ids, edits) => {
          const rows = new Map<number, Row>(ids.map((id) => [id, { id, flight: `F${id}`, seats: 1 }]));
          const after = new Map(rows);
          const touched = new Map<number, string>();
          for (const [id, op] of edits) {
            if (op === 'update' && after.has(id))
              after.set(id, { ...after.get(id)!, seats: (after.get(id)!.seats as number) + 1 });
            else if (op === 'delete') after.delete(id);
            else if (op === 'insert' && !after.has(id)) after.set(id, { id, flight: `N${id}`, seats: 9 });
          }
          for (const id of new Set([...rows.keys(), ...after.keys()])) {
            const a = rows.get(id);
            const b = after.get(id);
            if (!a && b) touched.set(id, 'insert');
            else if (a && !b) touched.set(id, 'delete');
            else if (a && b && JSON.stringify(a) !== JSON.stringify(b)) touched.set(id, 'update');
          }
          const changes = diffDb(snapshot([...rows.values()]), snapshot([...after.values()]));
          expect(new Map(changes.map((c) => [c.key.id as number, c.op]))).toEqual(touched);
        },
      ),
    );
  });
});
