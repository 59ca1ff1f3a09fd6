// Recording stores: a recording pushed to a store (a folder, or Postgres with blobs shared across
// recordings) is taken by URL by every command, pulled back byte for byte, and a store's content
// is checked like any recording (a tampered blob or a hostile path never reaches the disk).
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRecording } from '../../src/recording/index.js';
import {
  listStore,
  localRecording,
  pullRecording,
  pushRecording,
  splitRecordingUrl,
} from '../../src/store/recordings/index.js';
import { example, expectOneLineError, tapedeck } from '../cli/run-cli.js';
import { copyWithId, createTestDatabase, filesOf, PG_URL } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-store-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const withId = (source: string, id: string) => copyWithId(source, tmp, id);
const sentinel = join(tmp, 'sentinel');
writeFileSync(sentinel, 'sentinel');

describe('store URLs', () => {
  it('split into the store and the recording id', () => {
    expect(splitRecordingUrl('pg://u@h:5432/db/run-1')).toEqual({ storeUrl: 'pg://u@h:5432/db', id: 'run-1' });
    expect(splitRecordingUrl('pg://u@h/db/run-1?sslmode=disable')).toEqual({
      storeUrl: 'pg://u@h/db?sslmode=disable',
      id: 'run-1',
    });
    expect(splitRecordingUrl('file:///srv/recs/run-1')).toEqual({ storeUrl: 'file:///srv/recs', id: 'run-1' });
    expect(() => splitRecordingUrl('pg://u@h/run-1')).toThrow(/names no recording/);
    expect(() => splitRecordingUrl('ftp://h/x/y')).toThrow(/no recording store for ftp:/);
  });
});

describe('folder store (file://)', () => {
  it('push, list, read by URL, pull; the same recording again is a no-op, a different one with its id is refused', async () => {
    const store = `file://${join(tmp, 'folder-store')}`;
    const pushed = await pushRecording(example('openai-baseline'), store);
    expect(pushed).toMatchObject({ id: 'openai-baseline', added: true, url: `${store}/openai-baseline` });
    expect((await pushRecording(example('openai-baseline'), store)).added).toBe(false);
    expect((await listStore(store)).map((r) => r.id)).toEqual(['openai-baseline']);
    // Read in place: the folder store's recording is already on this disk.
    expect(await localRecording(pushed.url)).toBe(join(tmp, 'folder-store', 'openai-baseline'));
    const impostor = join(tmp, 'impostor');
    cpSync(example('openai-fixed-stream'), impostor, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(impostor, 'manifest.json'), 'utf8')) as { id: string };
    manifest.id = 'openai-baseline';
    writeFileSync(join(impostor, 'manifest.json'), JSON.stringify(manifest));
    await expect(pushRecording(impostor, store)).rejects.toThrow(/already holds a different recording with id/);
  });
});

describe('a hostile folder store', () => {
  // A shared folder is as untrusted as a recording: what pull copies out of it is files alone.
  it.each([
    ['a FIFO', (file: string) => execFileSync('mkfifo', [file]), /is not a regular file or folder/],
    ['a link to a file outside', (file: string) => symlinkSync(sentinel, file), /is not a regular file or folder/],
  ])('pull refuses a recording holding %s in one line and leaves no folder', async (_what, plant, message) => {
    const root = join(tmp, `hostile-store-${readdirSync(tmp).length}`);
    const rec = withId(example('openai-baseline'), 'h1');
    cpSync(rec, join(root, 'h1'), { recursive: true });
    rmSync(join(root, 'h1', 'snapshots/pre/fs.json'), { force: true });
    plant(join(root, 'h1', 'snapshots/pre/fs.json'));
    const out = join(tmp, `pulled-${readdirSync(tmp).length}`);
    const run = await tapedeck(['pull', `file://${root}/h1`, '--out', out]);
    expectOneLineError(run, message);
    expect(existsSync(out)).toBe(false);
    expect(readFileSync(sentinel, 'utf8')).toBe('sentinel');
  });

  it('pull removes the copy of a recording the reader refuses', async () => {
    const root = join(tmp, 'bad-store');
    cpSync(withId(example('openai-baseline'), 'h2'), join(root, 'h2'), { recursive: true });
    const events = join(root, 'h2', 'events.jsonl');
    writeFileSync(events, readFileSync(events).subarray(0, 5000));
    const out = join(tmp, 'pulled-bad');
    await expect(pullRecording(`file://${root}/h2`, out)).rejects.toThrow(
      /events\.jsonl:\d+: field \(line\): is cut off \d+ bytes into line \d+: \d+ whole events left/,
    );
    expect(existsSync(out)).toBe(false);
  });
});

describe.skipIf(!PG_URL)('Postgres store (pg://, TAPEDECK_PG_URL)', () => {
  let db: { url: string; drop: () => Promise<void> };
  let store: string;
  beforeAll(async () => {
    db = await createTestDatabase('tapedeck_store');
    store = db.url.replace(/^postgres(ql)?:/, 'pg:');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('stores each distinct file once across recordings, and gives a recording back byte for byte', async () => {
    const first = await pushRecording(example('openai-baseline'), store);
    expect(first).toMatchObject({ added: true, reused: 0 });
    // A second recording sharing the blobs and snapshots: only what differs is sent.
    const copy = withId(example('openai-baseline'), 'baseline-copy');
    const second = await pushRecording(copy, store);
    expect(second.added).toBe(true);
    expect(second.reused).toBe(second.files - 1); // only manifest.json differs
    expect((await pushRecording(example('openai-baseline'), store)).added).toBe(false);

    const out = join(tmp, 'pulled');
    await pullRecording(first.url, out);
    expect(filesOf(out)).toEqual(filesOf(example('openai-baseline')));
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const blobs = await c.query('SELECT count(*)::int AS n FROM tapedeck_store_blob');
    const files = await c.query('SELECT count(*)::int AS n FROM tapedeck_store_file');
    await c.end();
    expect(files.rows[0].n).toBe(2 * first.files);
    expect(blobs.rows[0].n).toBe(first.files + 1);
  });

  it('every command takes the recording by URL: verify, ledger, eval, replay, list, pull', async () => {
    const url = `${store}/openai-baseline`;
    const cwd = mkdtempSync(join(tmp, 'cli-'));
    const [verify, ledgerByUrl, ledgerLocal, evalRun, list] = await Promise.all([
      tapedeck(['verify', url], { cwd }),
      tapedeck(['ledger', url, '--json'], { cwd }),
      tapedeck(['ledger', example('openai-baseline'), '--json'], { cwd }),
      tapedeck(['eval', url, '--contract', join(import.meta.dirname, '../../examples/contracts/book-flight.yaml')], {
        cwd,
      }),
      tapedeck(['list', store], { cwd }),
    ]);
    expect(verify.code, verify.stderr).toBe(0);
    expect(ledgerByUrl.code, ledgerByUrl.stderr).toBe(0);
    expect(JSON.parse(ledgerByUrl.stdout).run).toEqual(JSON.parse(ledgerLocal.stdout).run);
    expect(evalRun.stderr).not.toMatch(/\n\s+at /);
    expect([0, 1]).toContain(evalRun.code);
    expect(list.stdout).toContain(url);
    // Pushed from a committed example made elsewhere: its command runs only when trusted.
    const replayed = await tapedeck(['replay', url, '--trust-recording', '--json', '--out', join(cwd, 'replay')], {
      cwd,
    });
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout).divergences).toEqual([]);
    const pulled = await tapedeck(['pull', url, '--out', join(cwd, 'copy')], { cwd });
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(filesOf(join(cwd, 'copy'))).toEqual(filesOf(example('openai-baseline')));
    // The replay pushed back, then read from the store by another command.
    const pushed = await tapedeck(['push', join(cwd, 'replay'), store, '--json'], { cwd });
    expect(pushed.code, pushed.stderr).toBe(0);
    const replayUrl = JSON.parse(pushed.stdout)[0].url as string;
    const diff = await tapedeck(['diff', url, replayUrl, '--json'], { cwd });
    expect([0, 1]).toContain(diff.code);
    expect(diff.stderr).not.toMatch(/\n\s+at /);
  }, 300_000);

  it('a tampered blob, a hostile path or a missing id never reaches the disk', async () => {
    const copy = withId(example('anthropic-fixed'), 'to-tamper');
    await pushRecording(copy, store);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      // Tamper with a blob only this recording uses (its manifest).
      await c.query(
        `UPDATE tapedeck_store_blob SET data = 'x'::bytea WHERE sha256 = (SELECT sha256 FROM tapedeck_store_file WHERE recording_id = 'to-tamper' AND path = 'manifest.json')`,
      );
      const cwd = mkdtempSync(join(tmp, 'tamper-'));
      expectOneLineError(
        await tapedeck(['ledger', `${store}/to-tamper`], { cwd }),
        /to-tamper: manifest\.json does not match its sha256 in the store/,
      );
      expect(readdirSync(join(cwd, '.tapedeck/cache/recordings')).filter((f) => !f.startsWith('.'))).toEqual([]);

      const hostile = withId(example('anthropic-fixed'), 'hostile');
      await pushRecording(hostile, store);
      await c.query(
        `UPDATE tapedeck_store_file SET path = '../../escape.txt' WHERE recording_id = 'hostile' AND path = 'manifest.json'`,
      );
      await expect(pullRecording(`${store}/hostile`, join(tmp, 'hostile-out'))).rejects.toThrow(
        /file path "\.\.\/\.\.\/escape\.txt" escapes the root/,
      );
      const missing = await tapedeck(['verify', `${store}/nope`], { cwd });
      expect(missing.code).toBe(1);
      expect(missing.stdout).toMatch(/^bad {2}.*\/nope: no such recording in the store/);
    } finally {
      await c.end();
    }
  });

  it('a recording pulled from the store is read through the recording reader', async () => {
    const dir = await localRecording(`${store}/openai-baseline`, join(tmp, 'cache'));
    const recording = await readRecording(dir);
    expect(recording.manifest.id).toBe('openai-baseline');
    // Pulled once, then reused while unchanged.
    expect(await localRecording(`${store}/openai-baseline`, join(tmp, 'cache'))).toBe(dir);
  });
});
