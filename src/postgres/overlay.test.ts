import { describe, expect, it } from 'vitest';
import type { DbSnapshot, DbTable } from '../recording/index.js';
import { layWorldOver } from './overlay.js';

const col = (name: string, type = 'integer') => ({ name, type, nullable: true });
function table(name: string, rows: DbTable['rows'], options: { key?: string[]; columns?: string[] } = {}): DbTable {
  return {
    schema: 'shop',
    name,
    columns: (options.columns ?? ['id', 'name']).map((c) => col(c, c === 'name' ? 'text' : 'integer')),
    primaryKey: options.key ?? ['id'],
    rows,
  };
}
const world = (tables: DbTable[]): DbSnapshot => ({ schemas: ['shop'], ddl: [], tables, sequences: [] });
const rowsOf = (db: DbSnapshot | undefined, name: string) => db?.tables.find((t) => t.name === name)?.rows;

describe('layWorldOver', () => {
  const dev = world([
    table('customers', [
      { id: 1, name: 'dev 1' },
      { id: 7, name: 'dev 7' },
      { id: 9, name: 'dev 9' },
    ]),
    table('audit', [{ id: 1, name: 'dev' }], { key: [] }),
  ]);

  it('lays the run’s rows over the snapshot’s by key, the run’s winning, and leaves out the keys the run inserted', () => {
    const pre = world([table('customers', [{ id: 7, name: 'prod 7' }]), table('audit', [], { key: [] })]);
    const post = world([
      table('customers', [
        { id: 7, name: 'prod 7 renamed' },
        { id: 9, name: 'prod 9 inserted' },
      ]),
      table('audit', [{ id: 2, name: 'run' }], { key: [] }),
    ]);
    const { seed, post: expected } = layWorldOver(dev, { pre, post }, 'the snapshot "dev"');
    // 9 was inserted by the run: the snapshot's row 9 would make the replayed insert collide.
    expect(rowsOf(seed, 'customers')).toEqual([
      { id: 1, name: 'dev 1' },
      { id: 7, name: 'prod 7' },
    ]);
    expect(rowsOf(expected, 'customers')).toEqual([
      { id: 1, name: 'dev 1' },
      { id: 7, name: 'prod 7 renamed' },
      { id: 9, name: 'prod 9 inserted' },
    ]);
    expect(rowsOf(expected, 'audit')).toEqual([
      { id: 1, name: 'dev' },
      { id: 2, name: 'run' },
    ]);
    expect(seed.ddl.some((s) => s.startsWith('CREATE TABLE "shop"."customers"'))).toBe(true);
  });

  it('drops from the expected end state the rows the run deleted', () => {
    const pre = world([table('customers', [{ id: 1, name: 'prod 1' }])]);
    const post = world([table('customers', [])]);
    const { seed, post: expected } = layWorldOver(dev, { pre, post }, 'the snapshot "dev"');
    expect(rowsOf(seed, 'customers')?.[0]).toEqual({ id: 1, name: 'prod 1' });
    expect(rowsOf(expected, 'customers')?.map((r) => r.id)).toEqual([7, 9]);
  });

  it('names a table or a column the recording needs and the snapshot lacks', () => {
    const orders = world([table('orders', [{ id: 1, name: 'x' }])]);
    expect(() => layWorldOver(dev, { pre: orders }, 'the snapshot "dev"')).toThrow(
      'the snapshot "dev" has no table shop.orders, which the recording needs',
    );
    const wider = world([
      table('customers', [{ id: 1, name: 'x', email: 'a@b' }], { columns: ['id', 'name', 'email'] }),
    ]);
    expect(() => layWorldOver(dev, { pre: wider }, 'the snapshot "dev"')).toThrow(
      'the snapshot "dev"\'s table shop.customers has no column "email"',
    );
  });

  it('adds, empty, the recorded tables the snapshot lacks and the run never touched', () => {
    const pre = world([table('customers', []), table('coupons', [])]);
    const { seed } = layWorldOver(dev, { pre }, 'the snapshot "dev"');
    expect(seed.tables.map((t) => t.name)).toEqual(['customers', 'audit', 'coupons']);
  });
});
