// A CHECK constraint added to one partition alone (ALTER TABLE <partition> ADD CONSTRAINT … CHECK,
// not on its parent): described on that partition, rebuilt there in every sandbox (PGlite
// in-process, over its socket, a template database), holding the agent's new rows to it in that
// partition only; one outside what a sandbox can rebuild is named in `unbuilt` on its partition.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotDatabase } from '../../src/postgres/index.js';
import type { DbSnapshot } from '../../src/recording/index.js';
import { scratchDatabase } from '../record/helpers.js';
import { sandboxPaths } from './sandbox-paths.js';

const ADMIN = process.env.TAPEDECK_PG_URL;

const WORLD = `
  CREATE SCHEMA app;
  CREATE SCHEMA arch;
  CREATE TABLE app.events (id int NOT NULL, at int NOT NULL, kind text NOT NULL, qty int, PRIMARY KEY (id, at, kind))
    PARTITION BY RANGE (at);
  CREATE TABLE app.events_old PARTITION OF app.events FOR VALUES FROM (0) TO (100) PARTITION BY LIST (kind);
  CREATE TABLE app.events_old_a PARTITION OF app.events_old FOR VALUES IN ('a', 'b');
  CREATE TABLE arch.events_new PARTITION OF app.events FOR VALUES FROM (100) TO (200);
  INSERT INTO app.events VALUES (1, 5, 'a', 1), (2, 150, 'z', 50);
  -- On one leaf partition alone (in another schema), and on a partition that is itself partitioned.
  ALTER TABLE arch.events_new ADD CONSTRAINT "qty is small" CHECK (qty < 100);
  ALTER TABLE app.events_old ADD CONSTRAINT old_qty_positive CHECK (qty > 0);
  -- Outside the expressions a sandbox rebuilds: named, not lost.
  ALTER TABLE arch.events_new ADD CONSTRAINT no_bang CHECK (strpos(kind, '!') = 0);`;

let source: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
let snapshot: DbSnapshot;

beforeAll(async () => {
  if (!ADMIN) return;
  source = await scratchDatabase(ADMIN, 'worlds6_partchk_', WORLD);
  const client = new pg.Client({ connectionString: source.url });
  await client.connect();
  try {
    snapshot = (await snapshotDatabase(client, ['app', 'arch'])).snapshot;
  } finally {
    await client.end();
  }
}, 60_000);

afterAll(async () => source?.drop());

describe.runIf(ADMIN)('a check constraint added to one partition alone', () => {
  it('is described on its partition, and one outside the data forms is named there in unbuilt', () => {
    const events = snapshot.tables.find((t) => t.name === 'events');
    expect(events?.checks).toBeUndefined();
    const byName = Object.fromEntries((events?.partitions ?? []).map((p) => [p.name, p.checks?.map((c) => c.name)]));
    // The sub-partition inherits events_old's check: described once, where it is declared.
    expect(byName).toEqual({ events_old: ['old_qty_positive'], events_new: ['qty is small'], events_old_a: undefined });
    expect(snapshot.unbuilt?.filter((u) => u.kind === 'check')).toEqual([
      { kind: 'check', schema: 'arch', name: 'no_bang', table: 'events_new' },
    ]);
  });

  describe.each(sandboxPaths(['app', 'arch']))('rebuilt through $name', ({ open, skip }) => {
    it.skipIf(skip)(
      "holds the agent's rows to it in that partition only",
      async () => {
        const db = await open(snapshot);
        try {
          expect(db.lacks).toEqual([]);
          const refused = async (sql: string) => {
            try {
              await db.query(sql);
            } catch (error) {
              return (error as Error).message;
            }
            return 'accepted';
          };
          expect(await refused("INSERT INTO app.events VALUES (3, 160, 'z', 500)")).toMatch(/qty is small/);
          expect(await refused("INSERT INTO app.events VALUES (4, 10, 'b', 0)")).toMatch(/old_qty_positive/);
          // The same values in the partition without the check are the agent's to write.
          expect(await refused("INSERT INTO app.events VALUES (5, 10, 'a', 500)")).toBe('accepted');
          expect(await refused("INSERT INTO app.events VALUES (6, 150, 'z', -1)")).toBe('accepted');
          // Read back, the sandbox describes it as the recorded database did.
          const again = (await db.read()).tables.find((t) => t.name === 'events');
          expect(again?.partitions?.map((p) => [p.name, p.checks ?? []])).toEqual(
            snapshot.tables.find((t) => t.name === 'events')?.partitions?.map((p) => [p.name, p.checks ?? []]),
          );
        } finally {
          await db.close();
        }
      },
      60_000,
    );
  });
});
