// Which observation of a row is its pre-run image (ObservedRun.observe): a keyed read made on
// another connection after a read of an inheritance parent can come back while the run's next
// write runs; the write's before-image, exact as of its statement, must win over it then, in
// either order of arrival, and a read that came back before the write was issued must win over it.
import { describe, expect, it } from 'vitest';
import type { CatalogTable } from './observed-catalog.js';
import { ObservedRun } from './observed-run.js';

const table: CatalogTable = {
  oid: 1,
  schema: 'zoo',
  name: 'dog',
  kind: 'r',
  readable: true,
  columns: [],
  primaryKey: ['id'],
  foreignKeys: [],
  sequences: [],
  children: [],
  keyTriggers: false,
};
const key = { id: 1 };
const before = { id: 1, name: 'twin' };
const after = { id: 1, name: 'TWIN' };

/** The pre-run image of the row after these observations, in this order. */
function preImage(observations: Array<{ row: typeof before; source: 'before' | 'read'; seq: number; readAt: number }>) {
  const run = new ObservedRun(() => undefined);
  for (const { row, ...o } of observations) run.observe(table, row, key, o);
  return run.touchedTables()[0]?.images.values().next().value?.row;
}

describe('observed capture: a row’s pre-run image', () => {
  it('is the write’s before-image when a keyed read came back as the write was issued (statement 3)', () => {
    // The read of statement 1 came back once statement 3 (the UPDATE) was issued: it may hold it.
    const read = { row: after, source: 'read' as const, seq: 1, readAt: 3 };
    const write = { row: before, source: 'before' as const, seq: 3, readAt: 3 };
    expect(preImage([read, write])).toEqual(before);
    expect(preImage([write, read])).toEqual(before);
  });

  it('is the keyed read when it came back before the write was issued', () => {
    const read = { row: before, source: 'read' as const, seq: 1, readAt: 2 };
    const write = { row: { id: 1, name: 'other' }, source: 'before' as const, seq: 3, readAt: 3 };
    expect(preImage([read, write])).toEqual(before);
    expect(preImage([write, read])).toEqual(before);
  });
});
