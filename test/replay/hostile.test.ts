// Hostile or broken input gives a clear error and leaves no sandbox behind: no temp folder, no
// half-written replay, no PGlite server, no template database.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDbSandbox } from '../../sandbox/index.js';
import { blobRelativePath, type DbSnapshot, TapedeckError } from '../../src/recording/index.js';
import { replay } from '../../src/replay/index.js';
import { deadSandboxes } from '../support/pg-leftovers.js';
import { writeRecording } from './build.js';

const PG_URL = process.env.TAPEDECK_PG_URL;
let tmp: string;
let privateTmp: string;
const savedTmpdir = process.env.TMPDIR;

const DB: DbSnapshot = {
  schemas: ['shop'],
  ddl: [
    'CREATE SCHEMA IF NOT EXISTS "shop"',
    'CREATE TABLE "shop"."items" ("id" integer NOT NULL, "name" text, CONSTRAINT "items_pkey" PRIMARY KEY (id))',
  ],
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

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-hostile-'));
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

// Every replay's scratch space goes to a private TMPDIR so leftovers can be counted exactly.
beforeEach(async () => {
  privateTmp = await mkdtemp(path.join(tmp, 'tmpdir-'));
  process.env.TMPDIR = privateTmp;
});

afterEach(() => {
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
});

async function leftovers(): Promise<string[]> {
  return (await readdir(privateTmp)).filter((name) => name.startsWith('tapedeck-replay-'));
}

async function expectError(run: Promise<unknown>, code: string, text: RegExp): Promise<void> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TapedeckError);
  expect((error as TapedeckError).code).toBe(code);
  expect((error as Error).message).toMatch(text);
}

describe('hostile input', () => {
  it('refuses a recording of another format version, naming the file and field', async () => {
    const dir = await writeRecording(path.join(tmp, 'v2'), { calls: [] });
    const manifest = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8'));
    manifest.format = 'tapedeck.recording/v2';
    await writeFile(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
    const out = path.join(tmp, 'v2-replay');
    await expectError(replay({ recording: dir, mode: 'exact', out }), 'BAD_RECORDING', /manifest\.json.*format/);
    expect(existsSync(out)).toBe(false);
    expect(await leftovers()).toEqual([]);
  });

  it('refuses a recording with a missing blob', async () => {
    const dir = await writeRecording(path.join(tmp, 'blob'), {
      fsRoot: path.join(tmp, 'ws'),
      files: { 'notes.txt': 'hello' },
      calls: [],
    });
    const sha = (await readdir(path.join(dir, 'blobs', 'sha256'))).length;
    expect(sha).toBeGreaterThan(0);
    const snapshot = JSON.parse(await readFile(path.join(dir, 'snapshots', 'pre', 'fs.json'), 'utf8'));
    await rm(path.join(dir, blobRelativePath(snapshot.files['notes.txt'].sha256)));
    const out = path.join(tmp, 'blob-replay');
    await expectError(replay({ recording: dir, mode: 'exact', out, trustRecording: true }), 'BAD_RECORDING', /blob/i);
    expect(existsSync(out)).toBe(false);
    expect(await leftovers()).toEqual([]);
  });

  it('reports a command that does not exist, after the PGlite sandbox opened, and leaves nothing behind', async () => {
    const dir = await writeRecording(path.join(tmp, 'nocmd'), {
      command: ['tapedeck-no-such-agent-command'],
      db: DB,
      calls: [],
    });
    const out = path.join(tmp, 'nocmd-replay');
    await expectError(
      replay({ recording: dir, mode: 'exact', out, trustRecording: true }),
      'COMMAND_NOT_FOUND',
      /tapedeck-no-such-agent-command/,
    );
    expect(existsSync(out)).toBe(false);
    expect(await leftovers()).toEqual([]);
  });

  it.runIf(PG_URL)('drops the template and sandbox databases when the command does not exist', async () => {
    const dir = await writeRecording(path.join(tmp, 'nocmd-pg'), {
      command: ['tapedeck-no-such-agent-command'],
      db: DB,
      calls: [],
    });
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    const ours = async () =>
      (await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 'tapedeck\\_%'")).rows
        .map((r) => r.datname)
        .sort();
    try {
      const before = await ours();
      await expectError(
        replay({
          recording: dir,
          mode: 'exact',
          db: PG_URL as string,
          out: path.join(tmp, 'nocmd-pg-replay'),
          trustRecording: true,
        }),
        'COMMAND_NOT_FOUND',
        /not found/,
      );
      expect(before).toBeDefined();
      expect(await deadSandboxes(admin)).toEqual([]);
    } finally {
      await admin.end();
    }
  });

  it('never takes a variable that loads code or chooses programs from the recorded env', async () => {
    const dir = await writeRecording(path.join(tmp, 'env'), { calls: [] });
    const file = path.join(dir, 'manifest.json');
    const manifest = JSON.parse(await readFile(file, 'utf8'));
    const payload = path.join(tmp, 'payload.cjs');
    const loaded = path.join(tmp, 'payload-loaded');
    await writeFile(payload, `require('node:fs').writeFileSync(${JSON.stringify(loaded)}, 'x');`);
    await mkdir(path.join(tmp, 'evil-bin'), { recursive: true });
    manifest.agent.env = {
      NODE_OPTIONS: `--require ${payload}`,
      PATH: path.join(tmp, 'evil-bin'),
      LD_PRELOAD: path.join(tmp, 'evil.so'),
      GREETING: 'kept',
    };
    manifest.world = { db: { url: 'postgres://x@127.0.0.1:1/x', schemas: [], env: 'TAPEDECK_REPLAY_CONFIG' } };
    await writeFile(file, JSON.stringify(manifest));
    const show =
      'const e = process.env; console.log(JSON.stringify({ o: e.NODE_OPTIONS, p: e.PATH, l: e.LD_PRELOAD ?? null, g: e.GREETING }))';
    const result = await replay({
      recording: dir,
      mode: 'exact',
      out: path.join(tmp, 'env-replay'),
      command: [process.execPath, '-e', show],
      // Even a recording the user trusts never gives these.
      trustRecording: true,
      stdio: 'pipe',
    });
    const seen = JSON.parse(result.output?.stdout.trim().split('\n').at(-1) ?? '{}');
    expect(existsSync(loaded)).toBe(false);
    expect(seen.o).not.toContain(payload);
    expect(seen.p).toBe(process.env.PATH);
    expect(seen.l).toBe(process.env.LD_PRELOAD ?? null);
    expect(seen.g).toBe('kept');
    expect(result.warnings?.join('\n')).toContain(
      "the recording's NODE_OPTIONS, PATH, LD_PRELOAD, TAPEDECK_REPLAY_CONFIG (world.db.env) not used",
    );
  });

  it('says clearly when testcontainers finds no container runtime', async () => {
    const error = await openDbSandbox(DB, { kind: 'testcontainers' }).then(
      (db) => db.close().then(() => undefined),
      (e: unknown) => e,
    );
    // Where a Docker engine runs, the sandbox simply opens; this check is for machines without one.
    if (error === undefined) return;
    expect(error).toBeInstanceOf(TapedeckError);
    expect((error as TapedeckError).code).toBe('NO_CONTAINER_RUNTIME');
    expect((error as Error).message).toMatch(/Docker/);
  });

  it('refuses unknown options before touching anything', async () => {
    await expectError(
      replay({ recording: path.join(tmp, 'none'), mode: 'exact', systemPrompt: 'a', promptPatch: 'b' }),
      'BAD_OPTIONS',
      /not both/,
    );
    await expectError(replay({ recording: path.join(tmp, 'none'), mode: 'exact', until: 0 }), 'BAD_OPTIONS', /until/);
    await expectError(replay({ recording: path.join(tmp, 'none'), mode: 'exact' }), 'NO_RECORDING', /No recording/);
    await mkdir(path.join(tmp, 'empty'), { recursive: true });
    await expectError(replay({ recording: path.join(tmp, 'empty'), mode: 'exact' }), 'BAD_RECORDING', /manifest/);
  });
});
