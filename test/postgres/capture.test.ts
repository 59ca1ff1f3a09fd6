// Change capture on a recorded database never gets in the application's way and never outlives
// its recorder: an unprivileged application role writes through it without an error, its
// triggers vanish with the recorder's session, and what a dead run left is found and removed.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDbTracker, removeCaptureLeftovers } from '../../src/postgres/index.js';
import { captureObjects } from '../support/pg-leftovers.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-capture-test-'));
process.env.TAPEDECK_STATE_DIR ??= path.join(tmp, 'state');
const suffix = randomBytes(4).toString('hex');
const dbName = `utst_capture_${suffix}`;
const appRole = `utst_app_${suffix}`;
let admin: pg.Client;
let dbUrl: string;
let appUrl: string;

describe.runIf(PG_URL)('change capture', () => {
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    await admin.query(`CREATE ROLE ${appRole} LOGIN NOSUPERUSER`);
    const u = new URL(PG_URL as string);
    u.pathname = `/${dbName}`;
    dbUrl = u.toString();
    u.username = appRole;
    appUrl = u.toString();
    const owner = new pg.Client({ connectionString: dbUrl });
    await owner.connect();
    await owner.query(`CREATE SCHEMA shop;
      CREATE TABLE shop.items (id serial PRIMARY KEY, name text NOT NULL, price numeric(10,2), big bigint);
      GRANT USAGE ON SCHEMA shop TO ${appRole};
      GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA shop TO ${appRole};
      GRANT USAGE ON ALL SEQUENCES IN SCHEMA shop TO ${appRole};`);
    await owner.end();
  });

  afterAll(async () => {
    await admin?.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin?.query(`DROP ROLE IF EXISTS ${appRole}`);
    await admin?.end();
    rmSync(tmp, { recursive: true, force: true });
  });

  const inDb = async <T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  const objects = () => inDb(dbUrl, (c) => captureObjects(c));

  it('lets an unprivileged application role write through it, and logs exactly its changes', async () => {
    const tracker = await createDbTracker(dbUrl, { schemas: ['shop'] });
    await tracker.start();
    try {
      await tracker.snapshot();
      await inDb(appUrl, async (app) => {
        await app.query("INSERT INTO shop.items (name, price, big) VALUES ('tent', 12.50, 9007199254740993)");
        await app.query("UPDATE shop.items SET price = 13 WHERE name = 'tent'");
      });
      const changes = await tracker.drain();
      expect(changes.map((c) => c.op)).toEqual(['insert', 'update']);
      expect(changes[0]?.after).toMatchObject({ name: 'tent', price: '12.50', big: '9007199254740993' });
      // The application role cannot see or touch tapedeck's log.
      await inDb(appUrl, async (app) => {
        await expect(app.query(`SELECT * FROM ${tracker.captureSchema}.log`)).rejects.toThrow(/permission denied/);
      });
    } finally {
      await tracker.close();
    }
    expect(await objects()).toEqual([]);
  });

  it("does not let another role put its capture function (SECURITY DEFINER, running its trigger's argument) on a table", async () => {
    const tracker = await createDbTracker(dbUrl, { schemas: ['shop'] });
    await tracker.start();
    try {
      const fn = await inDb(dbUrl, async (c) => {
        const r = await c.query(
          "SELECT format('%I.%I', n.nspname, p.proname) AS fn FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname LIKE 'tapedeck_capture_%'",
        );
        await c.query(`GRANT TRIGGER ON shop.items TO ${appRole}`);
        return r.rows[0]?.fn as string;
      });
      expect(fn).toMatch(/tapedeck_capture_/);
      // A role with TRIGGER on a table, had it EXECUTE on the function, would run any SQL as the recorder.
      await inDb(appUrl, async (app) => {
        await expect(
          app.query(
            `CREATE TRIGGER evil AFTER INSERT ON shop.items FOR EACH ROW EXECUTE FUNCTION ${fn}('SELECT 1 AS x')`,
          ),
        ).rejects.toThrow(/permission denied/);
      });
    } finally {
      await inDb(dbUrl, (c) =>
        c.query(`REVOKE TRIGGER ON shop.items FROM ${appRole}; DROP TRIGGER IF EXISTS evil ON shop.items`),
      );
      await tracker.close();
    }
    expect(await objects()).toEqual([]);
  });

  it('leaves no trigger behind when its session dies (a SIGKILLed recorder), and the next run removes its schema', async () => {
    const tracker = await createDbTracker(dbUrl, { schemas: ['shop'] });
    await tracker.start();
    const schema = tracker.captureSchema;
    // The server ends the recorder's session, as it does when a killed recorder's socket closes.
    await inDb(dbUrl, (c) =>
      c.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'tapedeck capture' AND datname = current_database()",
      ),
    );
    await tracker.close().catch(() => {});
    // Writes go on, with no error, and feed nothing: the triggers went with the session.
    for (let wait = 0; wait < 100 && (await objects()).some((o) => !o.startsWith('schema')); wait++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await inDb(appUrl, (app) => app.query("INSERT INTO shop.items (name) VALUES ('after the kill')"));
    expect(await objects()).toEqual([`schema ${schema}`]);
    // Any later run on this database finds the dead run's schema and removes it; a live one stays.
    const live = await createDbTracker(dbUrl, { schemas: ['shop'] });
    await live.start();
    try {
      expect(await objects()).toEqual([
        `function tapedeck_capture_${live.captureSchema.slice(-8)}`,
        `schema ${live.captureSchema}`,
        `trigger zz_tapedeck_${live.captureSchema.slice(-8)}`,
      ]);
      const report = await inDb(dbUrl, (c) => removeCaptureLeftovers(c));
      expect(report.removed).toEqual([]);
      expect(report.live).toEqual([
        `trigger zz_tapedeck_${live.captureSchema.slice(-8)} on shop.items`,
        `schema ${live.captureSchema}`,
      ]);
    } finally {
      await live.close();
    }
    expect(await objects()).toEqual([]);
  });

  it('gives parallel runs their own schema and lock, whatever their names', async () => {
    const trackers = await Promise.all(Array.from({ length: 4 }, () => createDbTracker(dbUrl, { schemas: ['shop'] })));
    try {
      for (const t of trackers) await t.start();
      expect(new Set(trackers.map((t) => t.captureSchema)).size).toBe(4);
      await inDb(appUrl, (app) => app.query("INSERT INTO shop.items (name) VALUES ('seen by all')"));
      for (const t of trackers) expect((await t.drain()).map((c) => c.after?.name)).toEqual(['seen by all']);
    } finally {
      for (const t of trackers) await t.close();
    }
    expect(await objects()).toEqual([]);
  });
});
