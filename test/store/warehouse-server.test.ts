import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWarehouse, type Warehouse } from '../../src/store/index.js';
import { answers, ingestAll } from './fixtures.js';
import { createTestDatabase, dumpTables, PG_URL } from './helpers.js';

describe.skipIf(!PG_URL)('warehouse on a Postgres server (TAPEDECK_PG_URL)', () => {
  let db: { url: string; drop: () => Promise<void> };
  let server: Warehouse;
  let embedded: Warehouse;
  beforeAll(async () => {
    db = await createTestDatabase('tapedeck_wh');
    server = await openWarehouse({ url: db.url });
    embedded = await openWarehouse({ dir: ':memory:' });
    await ingestAll(server);
    await ingestAll(embedded);
  });
  afterAll(async () => {
    await server?.close();
    await embedded?.close();
    await db?.drop();
  });

  it('answers every query exactly as embedded PGlite does', async () => {
    expect(server.kind).toBe('postgres');
    const a = await answers(server);
    const b = await answers(embedded);
    expect(a).toEqual(b);
    expect((a[1] as unknown[]).length).toBe(3);
  });

  it('is idempotent on the server too', async () => {
    const before = await dumpTables(server);
    await ingestAll(server);
    expect(await dumpTables(server)).toEqual(before);
  });
});
