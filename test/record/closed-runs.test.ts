// A long-lived server's pool opens its connections inside the sessions that first need them, and
// keeps them for as long as it lives: their async context is that session's run. A finished run
// must not keep what it observed there (the first image of every row it read: up to 50,000 rows)
// for the life of the connection, which under steady load is the server's.
import v8 from 'node:v8';
import vm from 'node:vm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { record } from '../../src/record/index.js';
import { ObservedRun } from '../../src/record/world/observed.js';
import { scratchDatabase, tempDir } from './helpers.js';

const ADMIN = process.env.TAPEDECK_PG_URL;
const tmp = tempDir();
let db: Awaited<ReturnType<typeof scratchDatabase>> | undefined;

beforeAll(async () => {
  if (!ADMIN) return;
  db = await scratchDatabase(
    ADMIN,
    'tdprod_closed_',
    `CREATE SCHEMA kb; CREATE TABLE kb.docs (id integer PRIMARY KEY, body text NOT NULL);
     INSERT INTO kb.docs SELECT g, repeat('x', 200) FROM generate_series(1, 2000) g;`,
  );
});
afterAll(async () => {
  await db?.drop();
  tmp.remove();
});

describe.skipIf(!ADMIN)('a finished run in the connections it opened', () => {
  it('keeps nothing it observed once its recording is written', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    // Every run's observation, weakly: which ones are still reachable once their runs are over.
    const observations: Array<WeakRef<ObservedRun>> = [];
    const nextSeq = ObservedRun.prototype.nextSeq;
    ObservedRun.prototype.nextSeq = function (this: ObservedRun) {
      if (!observations.some((o) => o.deref() === this)) observations.push(new WeakRef(this));
      return nextSeq.call(this);
    };
    // A pool that never closes an idle connection (as one under steady load never has one).
    const pool = new pg.Pool({ connectionString: db?.url, max: 3, idleTimeoutMillis: 0 });
    pool.on('error', () => {});
    try {
      for (let round = 0; round < 3; round++) {
        await Promise.all(
          [0, 1, 2].map((n) =>
            record({ folder: tmp.dir, name: `docs-${round}-${n}` }, async () => {
              const { rows } = await pool.query('SELECT id, body FROM kb.docs WHERE id > $1 ORDER BY id', [n * 500]);
              return rows.length;
            }),
          ),
        );
      }
      expect(observations).toHaveLength(9);
      // Collected in turns of their own: a deref() keeps its target for the rest of its turn.
      for (let i = 0; i < 5; i++) {
        await new Promise((r) => setTimeout(r, 20));
        gc();
      }
      await new Promise((r) => setTimeout(r, 20));
      expect(observations.filter((o) => o.deref() !== undefined)).toHaveLength(0);
    } finally {
      ObservedRun.prototype.nextSeq = nextSeq;
      await pool.end();
    }
  });
});
