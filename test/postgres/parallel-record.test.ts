// Ten `tapedeck record --db` runs at once on one database, each with a long --name: every one
// completes, and each recording holds exactly the rows its own agent wrote — none of the others'.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DbChangedPayload, readRecording } from '../../src/recording/index.js';
import { bin, root } from '../cli/run-cli.js';
import { captureObjects } from '../support/pg-leftovers.js';
import { createShopDb, type ShopDb, startToolApi } from './db-fixture.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const AGENT = fileURLToPath(new URL('./fixtures/db-agent.mjs', import.meta.url));
const RUNS = 10;
const STEPS = 6;

describe.runIf(PG_URL)('parallel recordings on one database', () => {
  let tmp: string;
  let db: ShopDb;
  let api: Awaited<ReturnType<typeof startToolApi>>;

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-untrusted-parallel-'));
    db = await createShopDb(PG_URL as string, 'parallel');
    api = await startToolApi();
  });
  afterAll(async () => {
    await api?.close();
    await db?.drop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it(`${RUNS} runs with long names: each complete, each holding only its own rows`, async () => {
    const name = (i: number) => `a-very-long-recording-name-that-goes-on-well-past-forty-characters-run-${i}`;
    const runs = await Promise.all(
      Array.from(
        { length: RUNS },
        (_, i) =>
          new Promise<{ code: number; stderr: string; out: string }>((resolve) => {
            const out = path.join(tmp, `rec-${i}`);
            execFile(
              process.execPath,
              [
                bin,
                'record',
                '--db',
                db.url,
                '--db-schema',
                'shop',
                '--name',
                name(i),
                '--out',
                out,
                '--',
                process.execPath,
                AGENT,
                '--token',
                't',
              ],
              {
                cwd: root,
                timeout: 500_000,
                env: {
                  ...process.env,
                  NO_COLOR: '1',
                  TAPEDECK_STATE_DIR: path.join(tmp, 'state'),
                  TOOL_URL: api.url,
                  DATABASE_URL: db.appUrl,
                  LABEL: `run${i}`,
                  STEPS: String(STEPS),
                  PAUSE_MS: '30',
                },
              },
              (error, _stdout, stderr) =>
                resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stderr, out }),
            );
          }),
      ),
    );
    for (const [i, run] of runs.entries()) {
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(run.code, run.stderr).toBe(0);
      const recording = await readRecording(run.out);
      expect(recording.manifest.status).toBe('complete');
      expect(recording.manifest.name).toBe(name(i));
      const rows = recording.events
        .filter((e) => e.type === 'db.changed')
        .map((e) => (e.payload as DbChangedPayload).after?.name);
      expect(rows).toEqual(Array.from({ length: STEPS }, (_, k) => `run${i}-${k}`));
    }
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      expect(await captureObjects(client)).toEqual([]);
    } finally {
      await client.end();
    }
  }, 600_000);
});
