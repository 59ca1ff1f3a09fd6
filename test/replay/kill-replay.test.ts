// Replays SIGKILLed at random moments (a seeded generator), with a PGlite sandbox and with a
// template sandbox on the test server: after the next tapedeck command, no sandbox database or
// role, no temp folder and no socket of the killed replay is left.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbSnapshot } from '../../src/recording/index.js';
import { bin, root } from '../cli/run-cli.js';
import { seeded } from '../postgres/db-fixture.js';
import { writeRecording } from './build.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const KILLS = Number(process.env.TAPEDECK_REPLAY_KILLS ?? 4);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const DB: DbSnapshot = {
  schemas: ['shop'],
  ddl: [],
  tables: [
    {
      schema: 'shop',
      name: 'items',
      columns: [
        { name: 'id', type: 'integer', nullable: false },
        { name: 'name', type: 'text', nullable: true },
      ],
      primaryKey: ['id'],
      rows: [{ id: 1, name: 'tent' }],
    },
  ],
};

interface Noted {
  paths: string[];
  sandboxes: string[];
}

/** What the replay with this pid has written down in the register so far. */
function notedBy(state: string, pid: number): Noted {
  const noted: Noted = { paths: [], sandboxes: [] };
  let names: string[] = [];
  try {
    names = readdirSync(path.join(state, 'live')).filter((n) => n.startsWith(`${pid}-`) && n.endsWith('.json'));
  } catch {}
  for (const name of names) {
    try {
      const entry = JSON.parse(readFileSync(path.join(state, 'live', name), 'utf8')) as {
        items: Array<{ kind: string; path?: string; name?: string }>;
      };
      for (const item of entry.items) {
        if (item.kind === 'path' && item.path) noted.paths.push(item.path);
        if (item.kind === 'pg-sandbox' && item.name) noted.sandboxes.push(item.name);
      }
    } catch {}
  }
  return noted;
}

describe('killed replays', () => {
  let tmp: string;
  let recording: string;
  let state: string;

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-untrusted-kill-replay-'));
    state = path.join(tmp, 'state');
    recording = await writeRecording(path.join(tmp, 'rec'), { db: DB, calls: [] });
  });
  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const modes = [['pglite', []] as const, ...(PG_URL ? [['template', ['--db', PG_URL]] as const] : [])];
  for (const [mode, extra] of modes) {
    it(
      `leave nothing behind after the next command (${mode}, ${KILLS} kills)`,
      async () => {
        const env = { ...process.env, NO_COLOR: '1', TAPEDECK_STATE_DIR: state };
        const random = seeded(mode === 'pglite' ? 2101 : 2102);
        const seen: Noted = { paths: [], sandboxes: [] };
        for (let i = 0; i < KILLS; i++) {
          const child: ChildProcess = spawn(
            process.execPath,
            [
              bin,
              'replay',
              recording,
              ...extra,
              '--out',
              path.join(tmp, `out-${mode}-${i}`),
              '--',
              process.execPath,
              '-e',
              'setTimeout(() => {}, 4000)',
            ],
            { cwd: root, env, stdio: 'ignore', detached: true },
          );
          const pid = child.pid as number;
          let exited = false;
          const exit = new Promise<void>((resolve) =>
            child.on('exit', () => {
              exited = true;
              resolve();
            }),
          );
          // Wait until the replay has made its first thing outside (its temp folder), then kill
          // it a random while later: while the sandbox opens, seeds, or the agent runs.
          while (!exited && notedBy(state, pid).paths.length === 0) await sleep(10);
          await Promise.race([exit, sleep(Math.floor(random() * 4000))]);
          const noted = notedBy(state, pid);
          child.kill('SIGKILL');
          await exit;
          try {
            process.kill(-pid, 'SIGKILL');
          } catch {}
          seen.paths.push(...noted.paths);
          seen.sandboxes.push(...noted.sandboxes);
          // The next tapedeck command.
          await new Promise<void>((resolve) =>
            execFile(process.execPath, [bin, 'verify', recording], { cwd: root, env, timeout: 120_000 }, () =>
              resolve(),
            ),
          );
          for (const p of noted.paths) expect(existsSync(p), p).toBe(false);
          if (noted.sandboxes.length > 0 && PG_URL) {
            const admin = new pg.Client({ connectionString: PG_URL });
            await admin.connect();
            try {
              const { rows } = await admin.query(
                'SELECT datname AS name FROM pg_database WHERE datname = ANY($1) UNION SELECT rolname FROM pg_roles WHERE rolname = ANY($1)',
                [noted.sandboxes],
              );
              expect(rows).toEqual([]);
            } finally {
              await admin.end();
            }
          }
        }
        console.log(
          `issue 21 killed replays (${mode}): ${KILLS} kills, ${seen.paths.length} temp paths and ${seen.sandboxes.length} sandbox databases noted, none left`,
        );
        expect(seen.paths.length).toBeGreaterThanOrEqual(KILLS);
        if (mode === 'template') expect(seen.sandboxes.length).toBeGreaterThan(0);
      },
      KILLS * 90_000 + 60_000,
    );
  }
});
