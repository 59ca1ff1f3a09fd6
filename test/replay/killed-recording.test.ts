// The exact replay of a recording whose recorder was SIGKILLed mid-run (`record --fs`, and `--db`
// when TAPEDECK_PG_URL is set): the recording has no post snapshot, so its end state is what it
// knows (the pre snapshot plus the changes recorded before the kill). Files and rows that were
// there before the run, or that the run wrote before the kill, are no difference; the replay stops
// where the recording stops and says so, and exits 0.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cutAt, endWorld, readRecording } from '../../src/recording/index.js';
import { bin, root, tapedeck } from '../cli/run-cli.js';
import { scratchDatabase, startServer, type TestServer, tempDir } from '../record/helpers.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
const tmp = tempDir('tapedeck-killed-recording-');
const PG_MODULE = path.join(root, 'node_modules/pg/lib/index.js');

// Books four slots: asks the server, writes a confirmation and (with a database) inserts its row,
// then leaves a mark outside the workspace so the test knows it is gone.
const AGENT = `
import { writeFileSync } from 'node:fs';
const [ws, url, dbUrl, done] = process.argv.slice(2);
const db = dbUrl === '-' ? undefined : new (await import(${JSON.stringify(PG_MODULE)})).default.Client({ connectionString: dbUrl });
await db?.connect();
for (let i = 1; i <= 4; i++) {
  const { id } = await fetch(url + '/book?i=' + i).then((r) => r.json());
  writeFileSync(ws + '/confirmations/' + id + '.md', 'booked ' + id + '\\n');
  await db?.query('INSERT INTO f3.bookings (id, note) VALUES ($1, $2)', [id, 'slot ' + i]);
}
await db?.end();
writeFileSync(done, '');
`;

/** Lines of events.jsonl of type `type` so far (0 before the file exists). */
function eventsWritten(out: string, type: string): number {
  try {
    return readFileSync(path.join(out, 'events.jsonl'), 'utf8').split(`"type":"${type}"`).length - 1;
  } catch {
    return 0;
  }
}

async function until(what: string, done: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let server: TestServer;
let requests = 0;
/** Holds the third booking's answer until the recorder is dead: the kill lands after two bookings. */
let gate = { held: Promise.resolve(), release: () => {} };
function closeGate(): void {
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  gate = { held, release };
}

beforeAll(async () => {
  server = await startServer(async (_req, _body, res) => {
    const n = ++requests;
    if (n === 3) await gate.held;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: `XB-000${n}` }));
  });
});

afterAll(async () => {
  gate.release();
  await server?.close();
  tmp.remove();
});

/** Records the agent into `out`, SIGKILLs the recorder once two bookings are written, lets the agent finish. */
async function recordKilled(name: string, dbUrl: string | undefined): Promise<string> {
  requests = 0;
  closeGate();
  const ws = path.join(tmp.dir, name, 'ws');
  mkdirSync(path.join(ws, 'confirmations'), { recursive: true });
  // There before the run: part of the recorded world, never "not in" it.
  writeFileSync(path.join(ws, 'readme.md'), 'bookings\n');
  writeFileSync(path.join(ws, 'confirmations', 'XB-0000.md'), 'booked before\n');
  const agent = path.join(tmp.dir, name, 'agent.mjs');
  writeFileSync(agent, AGENT);
  const done = path.join(tmp.dir, name, 'agent-done');
  const out = path.join(tmp.dir, name, 'rec');
  const db = dbUrl ? ['--db', dbUrl, '--db-schema', 'f3'] : [];
  const child: ChildProcess = spawn(
    process.execPath,
    [bin, 'record', '--out', out, '--fs', ws, ...db, '--', process.execPath, agent, ws, server.url, dbUrl ?? '-', done],
    { cwd: root, stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The third request is held: the two bookings before it are written and recorded by then.
  await until(
    'two recorded bookings',
    () =>
      requests >= 3 &&
      eventsWritten(out, 'fs.changed') >= 2 &&
      (dbUrl === undefined || eventsWritten(out, 'db.changed') >= 2),
  );
  child.kill('SIGKILL');
  await exited;
  gate.release();
  // The agent outlives its recorder and finishes its bookings unrecorded.
  await until('the agent to finish', () => existsSync(done));
  return out;
}

async function expectHonestReplay(out: string, withDb: boolean): Promise<void> {
  const recording = await readRecording(out);
  expect(recording.manifest.status).toBe('incomplete');
  expect(recording.post).toEqual({});
  const cut = cutAt(recording);
  expect(cut).toBeGreaterThan(0);
  // What the recording knows of its end: the files and rows from before, and the two bookings.
  const known = endWorld(recording);
  expect(Object.keys(known.fs?.files ?? {})).toEqual(
    expect.arrayContaining(['readme.md', 'confirmations/XB-0000.md', 'confirmations/XB-0001.md']),
  );
  if (withDb) {
    const rows = known.db?.tables.find((t) => t.schema === 'f3' && t.name === 'bookings')?.rows ?? [];
    expect(rows.map((r) => r.id)).toEqual(expect.arrayContaining(['XB-OLD', 'XB-0001', 'XB-0002']));
  }

  // One replay, read as a user reads it: stopped where the recording stops, nothing called missing.
  const replayed = await tapedeck(['replay', out, '--out', path.join(path.dirname(out), 'replay')], {
    timeoutMs: 120_000,
  });
  expect(replayed.stdout).toContain(`the recording stops at step ${cut} (its recorder was killed before closing it)`);
  expect(replayed.stdout).toContain('no divergence');
  expect(replayed.stdout).toContain('end state equals the recorded end state');
  expect(replayed.stdout).not.toContain('not in the recorded world');
  expect(replayed.stdout).not.toContain('unexpected row');
  expect(replayed.code).toBe(0);
  // The replay's own end state is the known one: the bookings after the kill were never made.
  const replay = await readRecording(path.join(path.dirname(out), 'replay'));
  expect(replay.manifest.status).toBe('complete');
  expect(Object.keys(replay.post.fs?.files ?? {}).sort()).toEqual(Object.keys(known.fs?.files ?? {}).sort());
}

it('replays a recording whose recorder was killed with --fs to where it stops, its end state the known one', async () => {
  await expectHonestReplay(await recordKilled('fs', undefined), false);
}, 180_000);

describe.runIf(PG_URL)('with --db', () => {
  let db: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    db = await scratchDatabase(
      PG_URL as string,
      'tapedeck_killed_',
      `CREATE SCHEMA f3; CREATE TABLE f3.bookings (id text PRIMARY KEY, note text);
       INSERT INTO f3.bookings VALUES ('XB-OLD', 'before the run');`,
    );
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('counts neither the rows from before the run nor those written before the kill as differences', async () => {
    await expectHonestReplay(await recordKilled('db', db.url), true);
  }, 180_000);
});
