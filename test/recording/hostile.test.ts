// Bad and hostile recordings: each gives a RecordingError naming file, line and field; none hangs.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createRecordingWriter,
  fileBytes,
  INLINE_FILE_MAX,
  type RecordingError,
  readRecording,
} from '../../src/recording/index.js';
import { init, readError, tempDir, writeTwoSteps } from './helpers.js';

async function goodRecording(status: 'complete' | 'incomplete' = 'complete'): Promise<string> {
  const dir = join(tempDir(), 'rec');
  const w = await createRecordingWriter(dir, init());
  writeTwoSteps(w);
  w.writeSnapshot('pre', { fs: { files: { 'a.txt': { mode: 0o644, size: 1, sha256: w.putBlob(Buffer.from('a')) } } } });
  await w.close(status);
  return dir;
}

function replaceLine(dir: string, line: number, text: string): void {
  const file = join(dir, 'events.jsonl');
  const lines = readFileSync(file, 'utf8').split('\n');
  lines[line - 1] = text;
  writeFileSync(file, lines.join('\n'));
}

function editLine(dir: string, line: number, edit: (event: Record<string, unknown>) => void): void {
  const lines = readFileSync(join(dir, 'events.jsonl'), 'utf8').split('\n');
  const event = JSON.parse(lines[line - 1] as string);
  edit(event);
  replaceLine(dir, line, JSON.stringify(event));
}

/** An fs.changed event with `payload` in place of line 2 (integrity dropped). */
function putFsChange(dir: string, payload: Record<string, unknown>): void {
  dropIntegrity(dir);
  replaceLine(
    dir,
    2,
    JSON.stringify({ seq: 1, traceId: 't', stepId: 1, type: 'fs.changed', time: '2026-01-01T00:00:00.000Z', payload }),
  );
}

/** For tampering tests: drop the integrity hash so the reader looks at the content itself. */
function dropIntegrity(dir: string): void {
  const file = join(dir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  manifest.integrity = { events: manifest.integrity.events };
  writeFileSync(file, JSON.stringify(manifest, null, 2));
}

function expectWhere(error: RecordingError, file: string, line: number | undefined, field: string | undefined): void {
  expect({ file: error.file, line: error.line, field: error.field }).toEqual({ file, line, field });
  expect(error.message).toContain(line === undefined ? file : `${file}:${line}`);
  if (field !== undefined) expect(error.message).toContain(field);
  expect(error.code).toBe('BAD_RECORDING');
}

describe('hostile recordings', () => {
  it('names the line of an event that is not JSON', async () => {
    const dir = await goodRecording();
    dropIntegrity(dir);
    replaceLine(dir, 3, '{"seq": 2, "type": "http.exch');
    expectWhere(await readError(dir), 'events.jsonl', 3, '(json)');
  });

  it('names an unknown event type', async () => {
    const dir = await goodRecording();
    dropIntegrity(dir);
    editLine(dir, 2, (e) => {
      e.type = 'shell.exec';
    });
    const error = await readError(dir);
    expectWhere(error, 'events.jsonl', 2, 'type');
    expect(error.message).toContain('unknown event type "shell.exec"');
  });

  it('names the payload field that is wrong', async () => {
    const dir = await goodRecording();
    dropIntegrity(dir);
    editLine(dir, 4, (e) => {
      (e.payload as { latencyMs: unknown }).latencyMs = 'fast';
    });
    expectWhere(await readError(dir), 'events.jsonl', 4, 'payload.latencyMs');
  });

  it('names a nested payload field and an unknown field', async () => {
    const dir = await goodRecording();
    dropIntegrity(dir);
    editLine(dir, 3, (e) => {
      (e.payload as { request: { headers: unknown } }).request.headers = { accept: 5 };
    });
    expectWhere(await readError(dir), 'events.jsonl', 3, 'payload.request.headers.accept');
    editLine(dir, 3, (e) => {
      (e.payload as { request: { headers: unknown } }).request.headers = {};
      (e.payload as Record<string, unknown>).exploit = true;
    });
    expectWhere(await readError(dir), 'events.jsonl', 3, 'payload.exploit');
  });

  it('refuses another format version', async () => {
    const dir = await goodRecording();
    const file = join(dir, 'manifest.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('tapedeck.recording/v1', 'tapedeck.recording/v999'));
    const error = await readError(dir);
    expectWhere(error, 'manifest.json', error.line, 'format');
    expect(error.line).toBeGreaterThan(1);
    expect(error.message).toContain('tapedeck.recording/v999');
  });

  it('names a bad or missing manifest field', async () => {
    const dir = await goodRecording();
    const file = join(dir, 'manifest.json');
    const manifest = JSON.parse(readFileSync(file, 'utf8'));
    manifest.status = 'done';
    writeFileSync(file, JSON.stringify(manifest, null, 2));
    const error = await readError(dir);
    expectWhere(error, 'manifest.json', error.line, 'status');
    writeFileSync(file, '{"format": "tapedeck.recording/v1",');
    expectWhere(await readError(dir), 'manifest.json', 1, '(json)');
    rmSync(file);
    expect((await readError(dir)).message).toMatch(/manifest\.json: is missing/);
  });

  for (const path of ['../../etc/passwd', '/etc/passwd', 'a/../../b', 'a\\..\\..\\b', 'a\u0000b', 'C:/x', './a']) {
    it(`refuses the snapshot path ${JSON.stringify(path)}`, async () => {
      const dir = await goodRecording();
      const entry = { mode: 420, size: 1, sha256: 'a'.repeat(64) };
      mkdirSync(join(dir, 'snapshots/post'), { recursive: true });
      writeFileSync(
        join(dir, 'snapshots/post/fs.json'),
        JSON.stringify({ files: { 'ok.txt': entry, [path]: entry } }, null, 2),
      );
      const error = await readError(dir);
      expectWhere(error, 'snapshots/post/fs.json', 8, `files[${JSON.stringify(path)}]`);
    });
  }

  it('refuses an fs.changed path that escapes the root', async () => {
    const dir = await goodRecording();
    putFsChange(dir, { path: '../../../home/u/.ssh/authorized_keys', op: 'create' });
    expectWhere(await readError(dir), 'events.jsonl', 2, 'payload.path');
  });

  it('names a blob whose sha256 does not match its content', async () => {
    const dir = await goodRecording();
    const sha = JSON.parse(readFileSync(join(dir, 'snapshots/pre/fs.json'), 'utf8')).files['a.txt'].sha256 as string;
    const blob = `blobs/sha256/${sha.slice(0, 2)}/${sha.slice(2)}`;
    writeFileSync(join(dir, blob), 'tampered');
    const error = await readError(dir);
    expectWhere(error, blob, undefined, 'sha256');
    // readBlob verifies too, when the eager check is off.
    const rec = await readRecording(dir, { verifyBlobs: false });
    expect(() => rec.readBlob(sha)).toThrow(/does not match|hashes to/);
  });

  it('warns about a blob that a snapshot refers to but the recording lacks', async () => {
    const dir = await goodRecording();
    const sha = JSON.parse(readFileSync(join(dir, 'snapshots/pre/fs.json'), 'utf8')).files['a.txt'].sha256 as string;
    rmSync(join(dir, `blobs/sha256/${sha.slice(0, 2)}/${sha.slice(2)}`));
    const rec = await readRecording(dir);
    expect(rec.warnings).toEqual([`snapshots/pre/fs.json: field files["a.txt"]: blob ${sha} is missing`]);
    expect(() => rec.readBlob(sha)).toThrow(/is missing/);
  });

  it('refuses an oversized line without reading it whole', async () => {
    const dir = await goodRecording();
    dropIntegrity(dir);
    replaceLine(dir, 2, JSON.stringify({ seq: 1, pad: 'x'.repeat(5000) }));
    expectWhere(await readError(dir, { maxLineBytes: 4096 }), 'events.jsonl', 2, '(line)');
  });

  it('refuses a 65 MiB line with no newline at the default limit, without hanging', async () => {
    const dir = await goodRecording();
    const file = join(dir, 'events.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n').length - 1;
    appendFileSync(file, '{"seq":');
    truncateSync(file, readFileSync(file).length + 65 * 1024 * 1024);
    expectWhere(await readError(dir), 'events.jsonl', lines + 1, '(line)');
  });

  it('refuses a FIFO or a device in place of events.jsonl instead of hanging', async () => {
    const dir = await goodRecording();
    rmSync(join(dir, 'events.jsonl'));
    execFileSync('mkfifo', [join(dir, 'events.jsonl')]);
    expectWhere(await readError(dir), 'events.jsonl', undefined, undefined);
    rmSync(join(dir, 'events.jsonl'));
    symlinkSync('/dev/zero', join(dir, 'events.jsonl'));
    expect((await readError(dir)).message).toContain('is a symbolic link');
  });

  it('reads a deeply nested payload without overflowing the stack', async () => {
    const dir = await goodRecording();
    dropIntegrity(dir);
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const line = JSON.stringify({
      seq: 3,
      traceId: 't',
      stepId: 1,
      type: 'context.compiled',
      time: '2026-01-01T00:00:00.000Z',
      payload: { x: 0 },
    }).replace('{"x":0}', `{"x":${deep}}`);
    replaceLine(dir, 4, line);
    const outcome = await readRecording(dir).then(
      () => 'read',
      (error: Error) => error.name,
    );
    expect(['read', 'RecordingError']).toContain(outcome);
  });

  it('refuses events out of seq order', async () => {
    const dir = await goodRecording();
    dropIntegrity(dir);
    editLine(dir, 3, (e) => {
      e.seq = 0;
    });
    expectWhere(await readError(dir), 'events.jsonl', 3, 'seq');
  });

  it('detects events.jsonl changed after the recording was closed', async () => {
    const dir = await goodRecording();
    const text = readFileSync(join(dir, 'events.jsonl'), 'utf8');
    writeFileSync(join(dir, 'events.jsonl'), text.replace('"stepId":1', '"stepId":2'));
    expectWhere(await readError(dir), 'events.jsonl', undefined, 'integrity.eventsSha256');
  });

  it('says where events.jsonl of a closed recording was cut and how many events are lost', async () => {
    const dir = await goodRecording();
    const lines = readFileSync(join(dir, 'events.jsonl'), 'utf8').split('\n');
    writeFileSync(join(dir, 'events.jsonl'), `${lines.slice(0, 4).join('\n')}\n`);
    const atBoundary = await readError(dir);
    expectWhere(atBoundary, 'events.jsonl', undefined, '(line)');
    expect(atBoundary.problem).toMatch(
      /^ends after line 4: 4 whole events left, the last seq 3 \(step \d+, [a-z.]+\); 4 of the 8 events manifest\.json counts are lost$/,
    );
    writeFileSync(join(dir, 'events.jsonl'), `${lines.slice(0, 4).join('\n')}\n${(lines[4] as string).slice(0, 17)}`);
    const midLine = await readError(dir);
    expectWhere(midLine, 'events.jsonl', 5, '(line)');
    expect(midLine.problem).toMatch(/^is cut off 17 bytes into line 5: 4 whole events left, .*; 4 of the 8 events/);
  });

  it('ignores and reports a cut-off last line of an incomplete recording', async () => {
    const dir = join(tempDir(), 'open');
    const w = await createRecordingWriter(dir, init());
    writeTwoSteps(w);
    appendFileSync(join(dir, 'events.jsonl'), '{"seq":8,"traceId":"0123","type":"step.sta');
    const rec = await readRecording(dir);
    expect(rec.events).toHaveLength(8);
    expect(rec.warnings.join('\n')).toMatch(/events\.jsonl:9: ignored a cut-off last line/);
    await w.close('complete');
  });

  it('refuses a cut-off last line that is not JSON in a complete recording', async () => {
    const dir = await goodRecording();
    dropIntegrity(dir);
    appendFileSync(join(dir, 'events.jsonl'), '{"seq":8,"traceId"');
    expectWhere(await readError(dir), 'events.jsonl', 9, '(json)');
  });
});

describe('files of a recording are read as they are, never through a link', () => {
  // A file outside the recording that a hostile one points at: its content must never show.
  const secretFile = (): string => {
    const file = join(tempDir('tapedeck-secret-'), 'secret.txt');
    writeFileSync(file, '{"format":"tapedeck.recording/v1","canary":"SECRET-CANARY-41"}\n');
    return file;
  };

  for (const file of ['manifest.json', 'events.jsonl', 'snapshots/pre/fs.json', 'snapshots/pre/db.json']) {
    it(`refuses ${file} that is a symbolic link, without reading its target`, async () => {
      const dir = await goodRecording();
      dropIntegrity(dir);
      mkdirSync(join(dir, 'snapshots/pre'), { recursive: true });
      rmSync(join(dir, file), { force: true });
      symlinkSync(secretFile(), join(dir, file));
      const error = await readError(dir);
      expect(error.message).toContain(`${file}: is a symbolic link`);
      expect(error.message).not.toContain('SECRET-CANARY');
    });
  }

  it('refuses a blob or a folder of the recording that is a symbolic link', async () => {
    const dir = await goodRecording();
    const sha = JSON.parse(readFileSync(join(dir, 'snapshots/pre/fs.json'), 'utf8')).files['a.txt'].sha256 as string;
    const blob = join(dir, `blobs/sha256/${sha.slice(0, 2)}/${sha.slice(2)}`);
    rmSync(blob);
    symlinkSync(secretFile(), blob);
    const rec = await readRecording(dir, { verifyBlobs: false });
    expect(() => rec.readBlob(sha)).toThrow(/is a symbolic link/);
    await expect(readRecording(dir)).rejects.toThrow(/is not a blob|is a symbolic link/);

    const dir2 = await goodRecording();
    const elsewhere = tempDir('tapedeck-elsewhere-');
    mkdirSync(join(elsewhere, 'pre'));
    writeFileSync(join(elsewhere, 'pre', 'fs.json'), '{"files":{}}');
    rmSync(join(dir2, 'snapshots'), { recursive: true });
    symlinkSync(elsewhere, join(dir2, 'snapshots'));
    expect((await readError(dir2)).message).toContain('snapshots: is a symbolic link');
  });

  it('refuses a FIFO in place of a snapshot or a blob without blocking', async () => {
    const dir = await goodRecording();
    rmSync(join(dir, 'snapshots/pre/fs.json'));
    execFileSync('mkfifo', [join(dir, 'snapshots/pre/fs.json')]);
    expect((await readError(dir)).message).toContain('snapshots/pre/fs.json: is not a regular file');
  });

  it('refuses JSON nested deeper than every engine can walk, in events and snapshots', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const dir = await goodRecording();
    dropIntegrity(dir);
    editLine(dir, 4, (e) => {
      (e.payload as Record<string, unknown>).messages = [];
    });
    const lines = readFileSync(join(dir, 'events.jsonl'), 'utf8').split('\n');
    lines[3] = (lines[3] as string).replace('"messages":[]', `"messages":[${deep}]`);
    writeFileSync(join(dir, 'events.jsonl'), lines.join('\n'));
    const error = await readError(dir);
    expectWhere(error, 'events.jsonl', 4, '(json)');
    expect(error.message).toContain('nests deeper than 200 levels');

    const dir2 = await goodRecording();
    writeFileSync(join(dir2, 'snapshots/pre/db.json'), `{"schemas":[],"ddl":[],"tables":[],"x":${deep}}`);
    expect((await readError(dir2)).message).toContain('snapshots/pre/db.json: field (json): nests deeper');
  });

  for (const id of ['../../x', '..', 'a/b', 'a\\b', 'a\u0000b', '']) {
    it(`refuses the recording id ${JSON.stringify(id)} (a replay is written to a folder named by it)`, async () => {
      const dir = await goodRecording();
      const file = join(dir, 'manifest.json');
      const manifest = JSON.parse(readFileSync(file, 'utf8'));
      manifest.id = id;
      writeFileSync(file, JSON.stringify(manifest, null, 2));
      expectWhere(await readError(dir), 'manifest.json', (await readError(dir)).line, 'id');
    });
  }

  it('refuses a step number no recording can reach (engines loop over every step)', async () => {
    const dir = await goodRecording();
    dropIntegrity(dir);
    editLine(dir, 2, (e) => {
      e.stepId = 1e15;
    });
    expectWhere(await readError(dir), 'events.jsonl', 2, 'stepId');
  });

  it('refuses database names that Postgres would cut, and keys naming missing columns', async () => {
    const dir = await goodRecording();
    const table = { schema: 's', name: 't', columns: [{ name: 'id', type: 'integer', nullable: false }], rows: [] };
    const write = (db: unknown) => writeFileSync(join(dir, 'snapshots/pre/db.json'), JSON.stringify(db, null, 2));
    write({ schemas: ['s'], ddl: [], tables: [{ ...table, name: 'x'.repeat(64), primaryKey: [] }] });
    expect((await readError(dir)).field).toBe('tables[0].name');
    write({ schemas: ['s'], ddl: [], tables: [{ ...table, primaryKey: ['nope'] }] });
    expect((await readError(dir)).message).toContain('tables[0].primaryKey: no column named "nope"');
    write({ schemas: ['other'], ddl: [], tables: [{ ...table, primaryKey: ['id'] }] });
    expect((await readError(dir)).message).toContain('tables[0].schema');
    // A primary key names one row; repeated, it made eval's state scoring quadratic.
    write({
      schemas: ['s'],
      ddl: [],
      tables: [{ ...table, primaryKey: ['id'], rows: [{ id: 1 }, { id: 2 }, { id: 1 }] }],
    });
    expect((await readError(dir)).message).toContain('tables[0].rows[2]: repeats the primary key of rows[0] ([1])');
  });
});

describe('hostile inline file contents', () => {
  const sha = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');
  const x = 'x'.repeat(INLINE_FILE_MAX + 1);
  const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ['text that does not hash to its sha256', { size: 5, sha256: sha('other'), text: 'hello' }, 'text', /hashes to/],
    ['text of another size than its entry', { size: 4, sha256: sha('hello'), text: 'hello' }, 'text', /is 5 bytes/],
    ['base64 that does not hash to its sha256', { size: 2, sha256: sha('ab'), base64: 'YWM=' }, 'base64', /hashes to/],
    ['text over the inline limit', { size: x.length, sha256: sha(x), text: x }, 'text', /over the 4096-byte limit/],
    ['base64 that is not base64', { size: 3, sha256: sha('abc'), base64: 'YW!j' }, 'base64', /expected base64/],
    ['base64 without its padding', { size: 2, sha256: sha('ab'), base64: 'YWI' }, 'base64', /expected base64/],
    ['both text and base64', { size: 2, sha256: sha('ab'), text: 'ab', base64: 'YWI=' }, 'base64', /not both/],
    ['text with a lone surrogate', { size: 3, sha256: sha('\ufffd'), text: '\ud800' }, 'text', /lone surrogate/],
  ];
  for (const [what, entry, field, message] of cases) {
    it(`refuses ${what} in a snapshot, naming file, line and field`, async () => {
      const dir = await goodRecording();
      writeFileSync(
        join(dir, 'snapshots/pre/fs.json'),
        JSON.stringify({ files: { 'a.txt': { mode: 420, ...entry } } }, null, 2),
      );
      const error = await readError(dir);
      expect(error.file).toBe('snapshots/pre/fs.json');
      expect(error.field).toBe(`files["a.txt"].${field}`);
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain('\n');
    });
  }

  it('refuses inline content that does not match its hash in an fs.changed event', async () => {
    const dir = await goodRecording();
    putFsChange(dir, {
      path: 'a.txt',
      op: 'create',
      after: { mode: 420, size: 5, sha256: sha('other'), text: 'hello' },
    });
    const error = await readError(dir);
    expectWhere(error, 'events.jsonl', 2, 'payload.after.text');
    expect(error.message).toMatch(/hashes to [0-9a-f]{64}, not to the entry's sha256/);
  });

  it('reads inline content that matches, with no blob file for it', async () => {
    const dir = await goodRecording();
    const bytes = Buffer.from([0, 255, 1]);
    const files = {
      'a.txt': { mode: 420, size: 5, sha256: sha('hello'), text: 'hello' },
      'b.bin': { mode: 420, size: 3, sha256: sha(bytes), base64: bytes.toString('base64') },
    };
    writeFileSync(join(dir, 'snapshots/pre/fs.json'), JSON.stringify({ files }, null, 2));
    const rec = await readRecording(dir);
    expect(rec.warnings).toEqual([]);
    expect(fileBytes(rec.pre.fs!.files['a.txt']!, rec.readBlob).toString()).toBe('hello');
    expect(Buffer.from(fileBytes(rec.pre.fs!.files['b.bin']!, rec.readBlob))).toEqual(bytes);
    // readBlob finds a file's bytes by sha256 whether a blob or its entry holds them.
    expect(rec.readBlob(sha(bytes))).toEqual(bytes);
  });

  it('refuses it through the CLI with a one-line finding', async () => {
    const dir = await goodRecording();
    const entry = { mode: 420, size: 5, sha256: sha('other'), text: 'hello' };
    writeFileSync(join(dir, 'snapshots/pre/fs.json'), JSON.stringify({ files: { 'a.txt': entry } }, null, 2));
    const bin = join(import.meta.dirname, '../../bin/tapedeck.mjs');
    const run = spawnSync(process.execPath, [bin, 'verify', dir], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    const lines = `${run.stdout}${run.stderr}`.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/snapshots\/pre\/fs\.json:\d+: field files\["a\.txt"\]\.text: inline content hashes to/);
  });
});

// Classes the seeded fuzz (test/recording/fuzz-commands.test.ts) found reaching past the reader:
// each refused once here, for every command, with its file, line and field on one line.
interface Exchange {
  request: { url: string; method: string; headers: Record<string, string> };
  response: { headers: Record<string, string> };
}

describe('values the engines cannot take are refused by the reader', () => {
  it('says a missing field is missing, never "received undefined"', async () => {
    const dir = await goodRecording();
    dropIntegrity(dir);
    editLine(dir, 2, (event) => {
      delete event.seq;
    });
    const error = await readError(dir);
    expectWhere(error, 'events.jsonl', 2, 'seq');
    expect(error.problem).toBe('is missing (expected number)');
  });

  it('keeps the error of a JSON file on one line, and says a cut one is cut', async () => {
    const dir = await goodRecording();
    const manifest = readFileSync(join(dir, 'manifest.json'), 'utf8');
    // A broken token inside pretty-printed JSON: Node's message quotes the text around it, newlines and all.
    writeFileSync(join(dir, 'manifest.json'), manifest.replace('",\n', '"\n'));
    const broken = await readError(dir);
    expect(broken.message).not.toContain('\n');
    expect(broken.problem).toMatch(/^is not valid JSON: /);
    writeFileSync(join(dir, 'manifest.json'), manifest.slice(0, 300));
    const cut = await readError(dir);
    expectWhere(cut, 'manifest.json', cut.line as number, '(json)');
    expect(cut.problem).toBe(
      'is cut off: it ends mid-value after 300 bytes (truncated, or its writer stopped mid-write)',
    );
  });

  it('refuses bytes that are not UTF-8 in events.jsonl, naming the line', async () => {
    const dir = await goodRecording();
    dropIntegrity(dir);
    const lines = readFileSync(join(dir, 'events.jsonl'), 'utf8').split('\n');
    const [head, tail] = (lines[2] as string).split('"POST"');
    const bytes = Buffer.concat([
      Buffer.from(`${lines.slice(0, 2).join('\n')}\n${head}"PO`),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(`ST"${tail}\n${lines.slice(3).join('\n')}`),
    ]);
    writeFileSync(join(dir, 'events.jsonl'), bytes);
    const error = await readError(dir);
    expectWhere(error, 'events.jsonl', 3, '(bytes)');
    expect(error.problem).toBe('is not valid UTF-8');
  });

  it.each([
    ['0000-00-00', 'createdAt'],
    ['2026-02-31T00:00:00.000Z', 'createdAt'],
    ['yesterday', 'createdAt'],
  ])('refuses a manifest time %s that is not a calendar time (the warehouse could not store it)', async (time) => {
    const dir = await goodRecording();
    const file = join(dir, 'manifest.json');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(/"createdAt": "[^"]*"/, `"createdAt": ${JSON.stringify(time)}`),
    );
    const error = await readError(dir);
    expectWhere(error, 'manifest.json', error.line as number, 'createdAt');
    expect(error.problem).toMatch(/expected an ISO 8601 time/);
  });

  it.each([
    ['a URL no engine can parse', (p: Exchange) => (p.request.url = 'http://exa\u0000mple/x'), 'payload.request.url'],
    ['a relative URL', (p: Exchange) => (p.request.url = '/v1/chat'), 'payload.request.url'],
    [
      'a method with a line break',
      (p: Exchange) => (p.request.method = 'GET / HTTP/1.1\r\nX: 1'),
      'payload.request.method',
    ],
    [
      'a header value with a carriage return',
      (p: Exchange) => (p.response.headers = { 'x-a': 'b\r\nSet-Cookie: 1' }),
      'payload.response.headers["x-a"]',
    ],
    [
      'a header name that is not a token',
      (p: Exchange) => (p.request.headers = { 'x a:': 'b' }),
      'payload.request.headers["x a:"]',
    ],
  ])('refuses an exchange with %s', async (_what, edit, field) => {
    const dir = await goodRecording();
    dropIntegrity(dir);
    editLine(dir, 3, (event) => edit(event.payload as unknown as Exchange));
    expectWhere(await readError(dir), 'events.jsonl', 3, field);
  });
});
