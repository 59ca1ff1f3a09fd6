// `tapedeck record --db` SIGKILLed at random moments (a seeded generator), while a non-superuser
// application role writes to the captured table throughout: the application never gets an error,
// every recording that was started reads back, after the next tapedeck command the database
// holds no tapedeck object (pg_catalog) and no socket or spool is left, and no canary from the
// agent's requests, argv or env is anywhere on disk.
//
// TAPEDECK_KILLS sets the number of kills (the acceptance run of issue 21 is 100, about 8 minutes
// on a quiet 2-core machine; CI runs 12). TAPEDECK_KILL_SEED changes the moments.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecording } from '../../src/recording/index.js';
import { bin, root } from '../cli/run-cli.js';
import { filesUnder } from '../support/files-under.js';
import { captureObjects } from '../support/pg-leftovers.js';
import { createShopDb, type ShopDb, seeded, startToolApi } from './db-fixture.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const KILLS = Number(process.env.TAPEDECK_KILLS ?? 12);
const SEED = Number(process.env.TAPEDECK_KILL_SEED ?? 21);
const AGENT = fileURLToPath(new URL('./fixtures/db-agent.mjs', import.meta.url));
const hex = randomBytes(6).toString('hex');
// argv (after --token), env (API_KEY, sent as a bearer token) and a request alone (a session
// cookie, from a variable whose name says nothing secret).
const CANARY = { argv: `CANARYargv${hex}x`, env: `CANARYenv${hex}x`, request: `CANARYcookie${hex}x` };
const hasCanary = (text: string) => Object.values(CANARY).some((c) => text.includes(c));
/** Files above this size are other tests' databases and the like, not anything a recorder writes. */
const MAX_SCANNED = 64 * 1024 * 1024;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, ...args], { cwd: root, env, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe.runIf(PG_URL)('record --db killed at random moments', () => {
  let tmp: string;
  let db: ShopDb;
  let api: Awaited<ReturnType<typeof startToolApi>>;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(tmpdir(), 'tapedeck-untrusted-kill-'));
    db = await createShopDb(PG_URL as string, 'kill');
    api = await startToolApi();
    env = {
      ...process.env,
      NO_COLOR: '1',
      TAPEDECK_STATE_DIR: path.join(tmp, 'state'),
      TOOL_URL: api.url,
      DATABASE_URL: db.appUrl,
      API_KEY: CANARY.env,
      SESSION: CANARY.request,
      STEPS: '12',
      PAUSE_MS: '15',
    };
  });

  afterAll(async () => {
    await api?.close();
    await db?.drop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it(
    `leaves the database clean, the application unharmed and no secret on disk (${KILLS} kills)`,
    async () => {
      const began = Date.now() - 1000;
      // The application: a non-superuser role inserting, updating and deleting all along.
      const app = new pg.Pool({ connectionString: db.appUrl, max: 3 });
      app.on('error', () => {});
      const appErrors: string[] = [];
      let appWrites = 0;
      let stop = false;
      const writer = (async () => {
        for (let i = 0; !stop; i++) {
          try {
            const { rows } = await app.query<{ id: number }>('INSERT INTO shop.items (name) VALUES ($1) RETURNING id', [
              `app-${i}`,
            ]);
            await app.query('UPDATE shop.items SET touched = touched + 1 WHERE id = $1', [rows[0]?.id]);
            if (i % 3 === 0) await app.query('DELETE FROM shop.items WHERE id = $1', [rows[0]?.id]);
            appWrites += 3;
          } catch (error) {
            appErrors.push((error as Error).message);
          }
          await sleep(5);
        }
      })();

      const record = (i: number, label: string): { child: ChildProcess; exited: Promise<void>; out: string } => {
        const out = path.join(tmp, `rec-${i}`);
        const child = spawn(
          process.execPath,
          [
            bin,
            'record',
            '--db',
            db.url,
            '--db-schema',
            'shop',
            '--out',
            out,
            '--',
            process.execPath,
            AGENT,
            '--token',
            CANARY.argv,
          ],
          { cwd: root, env: { ...env, LABEL: label }, stdio: 'ignore', detached: true },
        );
        const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
        return { child, exited, out };
      };

      /** Resolves when the recorder has opened its recording (or exited). */
      const opened = async (r: ReturnType<typeof record>): Promise<void> => {
        let gone = false;
        void r.exited.then(() => {
          gone = true;
        });
        while (!gone && !existsSync(path.join(r.out, 'manifest.json'))) await sleep(10);
      };

      // One run to the end sets the window the kills fall in: from the recording's opening to its end.
      const started = Date.now();
      const first = record(0, 'full');
      await opened(first);
      const startup = Date.now() - started;
      await first.exited;
      const duration = Date.now() - started - startup;
      expect((await readRecording(first.out)).manifest.status).toBe('complete');

      const random = seeded(SEED);
      const outcomes = { complete: 0, incomplete: 0, failed: 0, 'not started': 0, 'timed-out': 0, interrupted: 0 };
      // Each killed recorder's pid and when it was started: a socket named with a pid is that
      // recorder's only if made after it started (a pid is reused once the machine's pid counter
      // wraps, and another test's killed recorder may have left a socket under the same number).
      const killed: Array<{ pid: number; at: number }> = [];
      let spoolFiles = 0;
      for (let i = 1; i <= KILLS; i++) {
        const r = record(i, `run${i}`);
        killed.push({ pid: r.child.pid as number, at: Date.now() - 1000 });
        // One kill in ten falls anywhere from the start (node and tsx starting up); the others while
        // the recorder works: installing capture, snapshotting, the agent writing, closing.
        if (random() < 0.1) await Promise.race([r.exited, sleep(Math.floor(random() * (startup + duration)))]);
        else {
          await opened(r);
          await Promise.race([r.exited, sleep(Math.floor(random() * duration * 1.1))]);
        }
        r.child.kill('SIGKILL');
        await r.exited;
        // What the kill left, before anything cleans up: the agent's spool is ciphertext.
        for (const f of filesUnder(path.join(r.out, '.spool'))) {
          spoolFiles++;
          const bytes = readFileSync(f, 'latin1');
          expect(hasCanary(bytes) || bytes.includes('"t":"req"')).toBe(false);
        }
        // The next tapedeck command removes what the killed recorder left.
        const verified = await run(['verify', r.out], env);
        expect(verified.stderr).not.toMatch(/\n\s+at /);
        if (existsSync(path.join(r.out, 'manifest.json'))) {
          const recording = await readRecording(r.out);
          outcomes[recording.manifest.status]++;
        } else {
          expect(existsSync(path.join(r.out, 'events.jsonl'))).toBe(false);
          outcomes['not started']++;
        }
        expect(await captureObjects(await dbClient())).toEqual([]);
        expect(existsSync(path.join(r.out, '.spool'))).toBe(false);
        // The agent, orphaned by the kill, is ended with its group.
        try {
          process.kill(-(r.child.pid as number), 'SIGKILL');
        } catch {}
      }
      stop = true;
      await writer;
      await app.end();
      await client?.end();
      client = undefined;

      console.log(
        `issue 21 kill run: ${KILLS} kills (seed ${SEED}, start-up ${startup} ms, window ${Math.round(duration * 1.1)} ms):`,
        JSON.stringify(outcomes),
        `application writes ${appWrites}, errors ${appErrors.length}, spool files left by kills ${spoolFiles}`,
      );
      expect(appErrors).toEqual([]);
      expect(appWrites).toBeGreaterThan(0);
      // No socket of a killed recorder is left in the temp folder.
      const sockets = readdirSync(tmpdir()).filter((n) =>
        killed.some(
          ({ pid, at }) =>
            n.startsWith(`tapedeck-${pid}-`) &&
            (lstatSync(path.join(tmpdir(), n), { throwIfNoEntry: false })?.ctimeMs ?? 0) >= at,
        ),
      );
      expect(sockets).toEqual([]);
      // No canary anywhere a recorder could write: the recordings and the register, everything made
      // in the temp folder since the test began (tapedeck's or not), tapedeck's cache, the
      // repository's recordings folder (the default output) and the folder the recorders ran in.
      const made = readdirSync(tmpdir())
        .map((n) => path.join(tmpdir(), n))
        .filter((p) => p !== tmp && (lstatSync(p, { throwIfNoEntry: false })?.ctimeMs ?? 0) >= began);
      const files = [
        ...filesUnder(tmp),
        ...made.flatMap((p) => (lstatSync(p, { throwIfNoEntry: false })?.isFile() ? [p] : filesUnder(p))),
        ...filesUnder(path.join(homedir(), '.cache', 'tapedeck')),
        ...filesUnder(path.join(root, 'recordings')),
        ...readdirSync(root)
          .map((n) => path.join(root, n))
          .filter((p) => lstatSync(p, { throwIfNoEntry: false })?.isFile()),
      ];
      expect(files.length).toBeGreaterThan(KILLS);
      const leaks = files.filter((f) => {
        try {
          if (lstatSync(f).size > MAX_SCANNED) return false;
          return hasCanary(readFileSync(f, 'latin1'));
        } catch {
          return false;
        }
      });
      expect(leaks).toEqual([]);
    },
    KILLS * 40_000 + 180_000,
  );

  let client: pg.Client | undefined;
  async function dbClient(): Promise<pg.Client> {
    if (client) return client;
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    return client;
  }
});
