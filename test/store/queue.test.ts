// The job queue (pg-boss on the warehouse database), on PGlite and on a server: each job goes to one
// worker even when workers fetch at once, a failing job is retried then dead-lettered, a job
// whose worker died is retried after its expiry, and a singleton key is never queued twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openQueue, openWarehouse, QUEUE_SCHEMA, type Queue, type Warehouse } from '../../src/store/index.js';
import { createTestDatabase, PG_URL } from './helpers.js';

function behaviours(name: string, open: () => Promise<{ a: Warehouse; b: Warehouse; close: () => Promise<void> }>) {
  describe(name, () => {
    let a: Warehouse;
    let b: Warehouse;
    let qa: Queue;
    let qb: Queue;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ a, b, close } = await open());
      qa = await openQueue(a, { maintenanceSeconds: 1 });
      qb = a === b ? qa : await openQueue(b, { maintenanceSeconds: 1 });
    });
    afterAll(async () => {
      await qa?.close();
      if (qb !== qa) await qb?.close();
      await close?.();
    });

    it('never hands the same job to two workers fetching at once', async () => {
      for (let i = 0; i < 30; i++) await qa.enqueue('ingest', { recording: `r${i}` });
      const taken: string[] = [];
      const drain = async (q: Queue) => {
        for (;;) {
          const job = await q.fetch(['ingest']);
          if (!job) return;
          taken.push(job.id);
          await q.complete(job, { ok: true });
        }
      };
      await Promise.all([drain(qa), drain(qa), drain(qb), drain(qb)]);
      expect(taken).toHaveLength(30);
      expect(new Set(taken).size).toBe(30);
      expect((await qa.counts(['ingest'])).completed).toBe(30);
    });

    it('retries a failing job with its retry count, then fails it into the dead-letter queue', async () => {
      const id = await qa.enqueue('replay', { recording: 'flaky' }, { retryLimit: 1, retryDelaySeconds: 0 });
      const first = await qa.fetch(['replay']);
      expect(first).toMatchObject({ id, retryCount: 0, payload: { recording: 'flaky' } });
      await qa.fail(first!, 'boom');
      const second = await qa.fetch(['replay']);
      expect(second).toMatchObject({ id, retryCount: 1 });
      await qa.fail(second!, 'boom again');
      expect(await qa.fetch(['replay'])).toBeNull();
      expect(await qa.get('replay', id!)).toMatchObject({ state: 'failed', output: { message: 'boom again' } });
      const dead = await a.query(`SELECT data FROM ${QUEUE_SCHEMA}.job WHERE name = 'tapedeck-dead-letter'`);
      expect(dead.rows.map((r) => r.data)).toContainEqual({ recording: 'flaky' });
    });

    it('a job is ready the moment it is sent, and a failed one with no retry delay the moment it fails', async () => {
      // PGlite's clock has millisecond steps and pg-boss hands out jobs whose start is before now():
      // a fetch in the same millisecond as the send (or the fail) must still get the job.
      for (let i = 0; i < 40; i++) {
        const id = await qa.enqueue('replay', { recording: `now-${i}` }, { retryLimit: 1, retryDelaySeconds: 0 });
        const job = await qb.fetch(['replay']);
        expect(job?.id).toBe(id);
        await qb.fail(job!, 'again');
        const retried = await qa.fetch(['replay']);
        expect(retried).toMatchObject({ id, retryCount: 1 });
        await qa.complete(retried!, { ok: true });
      }
    });

    it('a job whose worker died is retried once it outlives its expiry', async () => {
      const id = await qa.enqueue('replay', { recording: 'orphan' }, { expireInSeconds: 1, retryDelaySeconds: 0 });
      expect((await qa.fetch(['replay']))?.id).toBe(id); // ...and this worker never completes it
      expect(await qb.fetch(['replay'])).toBeNull();
      let again = null;
      for (let i = 0; i < 60 && !again; i++) {
        await new Promise((r) => setTimeout(r, 500));
        again = await qb.fetch(['replay']);
      }
      expect(again).toMatchObject({ id, retryCount: 1 });
      await qb.complete(again!, { ok: true });
      expect((await qb.get('replay', id!))?.state).toBe('completed');
    });

    it('a singleton key has at most one job waiting and one running', async () => {
      const first = await qa.enqueue('replay', { recording: 'probe' }, { singletonKey: 'probe-1' });
      expect(first).not.toBeNull();
      expect(await qb.enqueue('replay', { recording: 'probe' }, { singletonKey: 'probe-1' })).toBeNull();
      const job = await qa.fetch(['replay']);
      expect(job?.singletonKey).toBe('probe-1');
      // While it runs, one more may wait, but it is not handed out until the first is done.
      const second = await qb.enqueue('replay', { recording: 'probe' }, { singletonKey: 'probe-1' });
      expect(second).not.toBeNull();
      expect(await qb.enqueue('replay', { recording: 'probe' }, { singletonKey: 'probe-1' })).toBeNull();
      expect(await qb.fetch(['replay'])).toBeNull();
      await qa.complete(job!, { ok: true });
      // Handed out once the first is done. A fetch skips rows another session holds locked for a
      // moment (pg-boss's own upkeep on the server), so it may take a second try.
      let next = await qb.fetch(['replay']);
      for (let i = 0; i < 20 && !next; i++) {
        await new Promise((r) => setTimeout(r, 250));
        next = await qb.fetch(['replay']);
      }
      expect(next?.id).toBe(second);
    });
  });
}

behaviours('job queue on PGlite (one process)', async () => {
  const wh = await openWarehouse({ dir: ':memory:' });
  return { a: wh, b: wh, close: () => wh.close() };
});

describe.skipIf(!PG_URL)('on a Postgres server (TAPEDECK_PG_URL)', () => {
  behaviours('job queue on a server, two connections', async () => {
    const db = await createTestDatabase('tapedeck_queue');
    const a = await openWarehouse({ url: db.url });
    const b = await openWarehouse({ url: db.url });
    return {
      a,
      b,
      close: async () => {
        await a.close();
        await b.close();
        await db.drop();
      },
    };
  });
});
