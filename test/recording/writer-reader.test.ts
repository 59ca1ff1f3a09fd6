import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  blobRelativePath,
  bodyText,
  createRecordingWriter,
  FORMAT,
  INLINE_FILE_MAX,
  listRecordings,
  readRecording,
  sha256Hex,
} from '../../src/recording/index.js';
import { init, tempDir, writeTwoSteps } from './helpers.js';

describe('writer and reader', () => {
  it('writes a recording that reads back with every event, seq assigned in order', async () => {
    const dir = join(tempDir(), 'run-1');
    const w = await createRecordingWriter(dir, init());
    writeTwoSteps(w);
    w.append({ type: 'run.completed', stepId: 0, payload: { status: 'complete', exitCode: 0 } });
    await w.close('complete');

    const rec = await readRecording(dir);
    expect(rec.manifest.format).toBe(FORMAT);
    expect(rec.manifest.status).toBe('complete');
    expect(rec.manifest.id).toBe('run-1');
    expect(rec.events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(rec.events.map((e) => e.type)).toEqual([
      'run.started',
      'step.started',
      'http.exchange',
      'model.called',
      'step.completed',
      'step.started',
      'tool.called',
      'step.completed',
      'run.completed',
    ]);
    expect(rec.manifest.integrity.events).toBe(9);
    expect(rec.warnings).toEqual([]);
    const exchange = rec.events.find((e) => e.type === 'http.exchange');
    if (exchange?.type !== 'http.exchange') throw new Error('no exchange');
    expect(bodyText(rec, exchange.payload.request.body)).toContain('book a flight');
  });

  it('writes every flush whole, small or large, two writers taking turns', async () => {
    // Sizes about the flush's scratch buffer (64 KiB, taken for up to 21,845 UTF-16 units) and
    // past it; multibyte text (3 bytes a unit) at its edge.
    const names = ['short', '€'.repeat(7000), 'x'.repeat(21_700), '€'.repeat(21_800), 'y'.repeat(100_000), 'z'];
    const dirs = [join(tempDir(), 'turns-a'), join(tempDir(), 'turns-b')];
    const writers = await Promise.all(dirs.map((dir) => createRecordingWriter(dir, init())));
    for (const [i, name] of names.entries()) {
      for (const [k, w] of writers.entries()) {
        const payload = { stateType: 'API_CALL' as const, name: `${k}:${name}` };
        w.append({ type: 'step.started', stepId: i + 1, payload });
        w.append({ type: 'step.completed', stepId: i + 1, payload: { status: 'success', latencyMs: 1 } });
      }
    }
    for (const w of writers) await w.close('complete');
    for (const [k, dir] of dirs.entries()) {
      const rec = await readRecording(dir);
      expect(rec.warnings).toEqual([]);
      const started = rec.events.flatMap((e) => (e.type === 'step.started' ? [e.payload.name] : []));
      expect(started).toEqual(names.map((name) => `${k}:${name}`));
    }
  });

  it('marks a recording incomplete from the first moment, with a readable manifest', async () => {
    const dir = join(tempDir(), 'open');
    const w = await createRecordingWriter(dir, init());
    writeTwoSteps(w);
    const rec = await readRecording(dir);
    expect(rec.manifest.status).toBe('incomplete');
    expect(rec.events).toHaveLength(8);
    await w.close('complete');
  });

  it('says an agent that exited early ended the run, not that the writer was killed or is still running', async () => {
    const dir = join(tempDir(), 'exited');
    const w = await createRecordingWriter(dir, init());
    writeTwoSteps(w);
    w.append({ type: 'run.completed', stepId: 0, payload: { status: 'failed', exitCode: 1 } });
    await w.close('incomplete');
    const rec = await readRecording(dir);
    expect(rec.warnings).toEqual([
      'the recording is incomplete: the agent exited with code 1 before its run finished (the recording is closed)',
    ]);
    const open = join(tempDir(), 'open-still');
    const w2 = await createRecordingWriter(open, init());
    writeTwoSteps(w2);
    expect((await readRecording(open)).warnings).toEqual([
      'the recording is incomplete: the writer did not close it (killed or still running)',
    ]);
    await w2.close('complete');
  });

  it('puts large bodies in content-addressed blobs and binary bodies in base64', async () => {
    const dir = join(tempDir(), 'blobs');
    const w = await createRecordingWriter(dir, init());
    const large = 'x'.repeat(10_000);
    const a = w.body(large, 'text/plain');
    const b = w.body(large, 'text/plain');
    expect(a.blob).toMatch(/^[0-9a-f]{64}$/);
    expect(a).toEqual(b);
    const bin = w.body(new Uint8Array([0xff, 0x00, 0xfe]), 'application/octet-stream');
    expect(bin.base64).toBe(Buffer.from([0xff, 0x00, 0xfe]).toString('base64'));
    await w.close('complete');
    const blobPath = join(dir, 'blobs/sha256', a.blob!.slice(0, 2), a.blob!.slice(2));
    expect(readFileSync(blobPath, 'utf8')).toBe(large);
    expect(readdirSync(join(dir, 'blobs/sha256', a.blob!.slice(0, 2)))).toHaveLength(1);
    const rec = await readRecording(dir);
    expect(bodyText(rec, a)).toBe(large);
  });

  it('keeps small files inline (text or base64) up to a budget for the whole recording, then as blobs', async () => {
    const dir = join(tempDir(), 'files');
    const w = await createRecordingWriter(dir, init('files', { inlineFileBudget: 10 }));
    const text = w.fileContent(Buffer.from('four'));
    const binary = w.fileContent(Buffer.from([0xff, 0x00]));
    expect(text).toEqual({ sha256: sha256Hex('four'), text: 'four' });
    expect(binary).toEqual({ sha256: sha256Hex(Buffer.from([0xff, 0x00])), base64: '/wA=' });
    // 6 of the 10 bytes spent: five more go to a blob, as does anything over INLINE_FILE_MAX.
    expect(w.fileContent(Buffer.from('fives'))).toEqual({ sha256: sha256Hex('fives') });
    expect(w.fileContent(Buffer.from('abc'))).toEqual({ sha256: sha256Hex('abc'), text: 'abc' });
    const big = Buffer.alloc(INLINE_FILE_MAX + 1, 'x');
    const roomy = await createRecordingWriter(join(tempDir(), 'roomy'), init());
    expect(roomy.fileContent(big)).toEqual({ sha256: sha256Hex(big) });
    await roomy.close('complete');
    await w.close('complete');
    expect(readFileSync(join(dir, blobRelativePath(sha256Hex('fives'))), 'utf8')).toBe('fives');
  });

  it('gives the same bytes for the same events', async () => {
    const root = tempDir();
    const files: string[][] = [];
    for (const name of ['a', 'b']) {
      const w = await createRecordingWriter(join(root, name), init('same', { id: 'same' }));
      writeTwoSteps(w);
      await w.close('complete');
      files.push(['manifest.json', 'events.jsonl'].map((f) => readFileSync(join(root, name, f), 'utf8')));
    }
    expect(files[0]).toEqual(files[1]);
  });

  it('lists recordings under a root', async () => {
    const root = tempDir();
    for (const name of ['one', 'nested/two']) {
      const w = await createRecordingWriter(join(root, name), init(name));
      await w.close('complete');
    }
    const list = await listRecordings(root);
    expect(list.map((r) => r.manifest.name).sort()).toEqual(['nested/two', 'one']);
  });

  it('with validate on, rejects a malformed event at append time without leaving a gap in seq', async () => {
    const dir = join(tempDir(), 'validated');
    const w = await createRecordingWriter(dir, init('v', { validate: true }));
    expect(() => w.append({ type: 'step.completed', stepId: 1, payload: { status: 'done' } as never })).toThrow(
      /payload\.status/,
    );
    expect(w.append({ type: 'step.completed', stepId: 1, payload: { status: 'success', latencyMs: 1 } })).toBe(0);
    expect(() => w.append({ type: 'nope' as never, stepId: 1, payload: {} as never })).toThrow(/unknown event type/);
    await w.close('complete');
    expect((await readRecording(dir)).events.map((e) => e.seq)).toEqual([0]);
  });

  it('refuses to write over an existing recording', async () => {
    const dir = join(tempDir(), 'twice');
    await (await createRecordingWriter(dir, init())).close('complete');
    await expect(createRecordingWriter(dir, init())).rejects.toThrow(/already holds a recording/);
  });
});
