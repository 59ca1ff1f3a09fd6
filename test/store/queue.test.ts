// The job queue on a server: each job runs once even with concurrent workers, failures retry
// then fail, and jobs of dead workers come back. (The worker itself: warehouse-pglite.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openQueue, openWarehouse, type Warehouse } from '../../src/store/index.js';
import { createTestDatabase, PG_URL } from './helpers.js';

describe.skipIf(!PG_URL)('job queue on a Postgres server (TAPEDECK_PG_URL)', () => {
  let db: { url: string; drop: () => Promise<void> };
  let a: Warehouse;
  let b: Warehouse;
  beforeAll(async () => {
    db = await createTestDatabase('tapedeck_queue');
    a = await openWarehouse({ url: db.url });
    b = await openWarehouse({ url: db.url });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it('never hands the same job to two workers claiming at once', async () => {
    const qa = openQueue(a);
    const qb = openQueue(b);
    for (let i = 0; i < 40; i++) await qa.enqueue('noop', { i });
    const claimed: number[] = [];
    const drain = async (q: typeof qa, name: string) => {
      for (;;) {
        const job = await q.claim(name, ['noop']);
        if (!job) return;
        claimed.push(job.id);
        await q.complete(job.id, { by: name });
      }
    };
    await Promise.all([drain(qa, 'a1'), drain(qa, 'a2'), drain(qb, 'b1'), drain(qb, 'b2')]);
    expect(claimed).toHaveLength(40);
    expect(new Set(claimed).size).toBe(40);
    expect((await qa.counts()).done).toBe(40);
  });

  it('retries a failing job, then marks it failed with its error', async () => {
    const q = openQueue(a);
    const id = await q.enqueue('flaky', {}, { maxAttempts: 2 });
    let first = await q.claim('w', ['flaky']);
    expect(first?.id).toBe(id);
    expect(await q.fail(id, 'boom', 0)).toBe('queued');
    first = await q.claim('w', ['flaky']);
    expect(first?.attempts).toBe(2);
    expect(await q.fail(id, 'boom again', 0)).toBe('failed');
    expect(await q.claim('w', ['flaky'])).toBeNull();
    expect((await q.get(id))?.error).toBe('boom again');
  });

  it('puts back a job whose worker died', async () => {
    const q = openQueue(a);
    const id = await q.enqueue('orphan', {});
    expect((await q.claim('dead-worker', ['orphan']))?.id).toBe(id);
    expect(await q.claim('other', ['orphan'])).toBeNull();
    expect(await q.reap(0)).toBeGreaterThanOrEqual(1);
    expect((await q.claim('other', ['orphan']))?.id).toBe(id);
  });
});
