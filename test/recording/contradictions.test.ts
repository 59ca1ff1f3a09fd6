// Recordings that contradict themselves (a path that is a file and a folder, a step started twice):
// every line is valid alone, so only the reader seeing the whole can refuse them, in one line
// naming file, line and field, before an engine keys steps by id or writes a world to disk.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { materializeFs } from '../../sandbox/fs.js';
import {
  createRecordingWriter,
  type FileEntry,
  type RecordingWriter,
  readRecording,
  TapedeckError,
  worldAt,
} from '../../src/recording/index.js';
import { reseal } from '../support/hostile-recordings.js';
import { init, readError, tempDir, writeTwoSteps } from './helpers.js';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'bin/tapedeck.mjs');
const time = '2026-11-24T12:00:02.000Z';

function file(w: RecordingWriter, text: string): FileEntry {
  const bytes = Buffer.from(text);
  return { mode: 0o644, size: bytes.length, ...w.fileContent(bytes) };
}

type Change = { path: string; op: 'create' | 'modify' | 'delete'; text?: string };

/**
 * A recording as the writer makes it: two steps (writeTwoSteps), then one FILE_WRITE step per
 * entry of `steps` with its fs.changed events, and the given snapshots.
 */
async function recordingWith(
  options: { pre?: Record<string, string>; post?: Record<string, string>; steps?: Change[][] } = {},
): Promise<string> {
  const dir = join(tempDir(), 'rec');
  const w = await createRecordingWriter(dir, init());
  writeTwoSteps(w);
  let stepId = 2;
  for (const changes of options.steps ?? []) {
    stepId++;
    w.append({ type: 'step.started', stepId, time, payload: { stateType: 'FILE_WRITE', name: 'file changes' } });
    for (const c of changes) {
      const after = c.op === 'delete' ? {} : { after: file(w, c.text ?? c.path) };
      w.append({ type: 'fs.changed', stepId, time, payload: { path: c.path, op: c.op, ...after } });
    }
    w.append({ type: 'step.completed', stepId, time, payload: { status: 'success', latencyMs: 0 } });
  }
  const snapshot = (files: Record<string, string>) => ({
    fs: { files: Object.fromEntries(Object.entries(files).map(([p, t]) => [p, file(w, t)])) },
  });
  if (options.pre) w.writeSnapshot('pre', snapshot(options.pre));
  if (options.post) w.writeSnapshot('post', snapshot(options.post));
  await w.close('complete');
  return dir;
}

/** What a forger does: events.jsonl edited, then the manifest's count and hash made to agree. */
function editEvents(dir: string, edit: (events: Array<Record<string, unknown>>) => void): void {
  const events = readFileSync(join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  edit(events);
  for (const [i, e] of events.entries()) e.seq = i;
  writeFileSync(join(dir, 'events.jsonl'), events.map((e) => `${JSON.stringify(e)}\n`).join(''));
  reseal(dir);
}

function cli(args: string[]): { status: number | null; lines: string[] } {
  const run = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, lines: `${run.stdout}${run.stderr}`.trim().split('\n') };
}

/** Every reading command refuses `dir` with one line holding `expected`; verify says bad (exit 1). */
function expectRefusedEverywhere(dir: string, expected: string, commands = ['replay', 'bisect', 'eval', 'diff']): void {
  const verify = cli(['verify', dir]);
  expect(verify.status).toBe(1);
  expect(verify.lines).toEqual([expect.stringMatching(/^bad /)]);
  expect(verify.lines[0]).toContain(expected);
  const other = join(root, 'recordings/examples/openai-baseline');
  const argv: Record<string, string[]> = {
    ledger: ['ledger', dir],
    replay: ['replay', dir, '--out', join(tempDir(), 'out'), '--', process.execPath, '-e', '0'],
    bisect: ['bisect', dir, '--shell', 'exit 0'],
    eval: ['eval', dir, '--contract', join(root, 'examples/contracts/book-flight.yaml')],
    diff: ['diff', other, dir],
  };
  for (const command of commands) {
    const run = cli(argv[command] as string[]);
    expect({ command, status: run.status, lines: run.lines }).toEqual({
      command,
      status: 2,
      lines: [expect.stringContaining(expected)],
    });
  }
}

describe('a path that is a file and a folder at once', () => {
  it('is refused in the pre and the post snapshot, naming the path under the file', async () => {
    for (const which of ['pre', 'post'] as const) {
      const dir = await recordingWith({ [which]: { 'notes.txt': 'n', a: 'x', 'a/b': 'y' } });
      const error = await readError(dir);
      expect({ file: error.file, field: error.field, problem: error.problem }).toEqual({
        file: `snapshots/${which}/fs.json`,
        field: 'files["a/b"]',
        problem: '"a" is a file',
      });
      expect(error.line).toBeGreaterThan(1);
    }
  });

  it('is refused deep down, and when a whole folder sits under a file', async () => {
    const dir = await recordingWith({ pre: { 'src/app': 'x', 'src/app/lib/deep/x.ts': 'y' } });
    expect((await readError(dir)).message).toContain('field files["src/app/lib/deep/x.ts"]: "src/app" is a file');
  });

  it('is refused when an fs.changed event writes under a file of the pre snapshot', async () => {
    const dir = await recordingWith({ pre: { a: 'x' }, steps: [[{ path: 'a/b', op: 'create' }]] });
    const error = await readError(dir);
    expect({ file: error.file, line: error.line, field: error.field }).toEqual({
      file: 'events.jsonl',
      line: 10,
      field: 'payload.path',
    });
    expect(error.problem).toBe('after step 3, "a" is a file');
  });

  it('is refused when fs.changed events of one step or of two make a file and a folder of one path', async () => {
    const one = await recordingWith({
      steps: [
        [
          { path: 'a', op: 'create' },
          { path: 'a/b', op: 'create' },
        ],
      ],
    });
    expect((await readError(one)).problem).toBe('after step 3, "a" is a folder (it holds "a/b")');
    const two = await recordingWith({ steps: [[{ path: 'a/b', op: 'create' }], [{ path: 'a', op: 'create' }]] });
    const error = await readError(two);
    expect(error.line).toBe(13);
    expect(error.problem).toBe('after step 4, "a" is a folder (it holds "a/b")');
  });

  it('is refused by ledger too when the events alone contradict themselves', async () => {
    const dir = await recordingWith({ steps: [[{ path: 'a', op: 'create' }], [{ path: 'a/b', op: 'create' }]] });
    expect((await readError(dir, { world: false })).problem).toBe('after step 4, "a" is a file');
  });

  it('accepts a step that turns a file into a folder or back, and a later step that reuses the name', async () => {
    // The recorder lists a step's changes by path: "a" created before "a/b" deleted.
    const dir = await recordingWith({
      pre: { 'a/b': 'x' },
      steps: [
        [
          { path: 'a', op: 'create' },
          { path: 'a/b', op: 'delete' },
        ],
        [{ path: 'a', op: 'delete' }],
        [{ path: 'a/c', op: 'create' }],
      ],
      post: { 'a/c': 'a/c' },
    });
    const recording = await readRecording(dir);
    expect(Object.keys(worldAt(recording, 3).fs.files)).toEqual(['a']);
    expect(Object.keys(worldAt(recording, 5).fs.files)).toEqual(['a/c']);
    const target = join(tempDir(), 'world');
    await materializeFs(worldAt(recording, 3).fs, recording.readBlob, target);
    expect(readFileSync(join(target, 'a'), 'utf8')).toBe('a');
  });

  it('is refused on one line with exit 2 by every command that reads the world', async () => {
    const dir = await recordingWith({ pre: { a: 'x', 'a/b': 'y' } });
    expectRefusedEverywhere(dir, 'snapshots/pre/fs.json:');
  }, 120_000);
});

describe('a step started twice', () => {
  it('is refused at the second step.started, naming the first', async () => {
    const dir = await recordingWith();
    // Step 2's events renumbered as step 1 (the tester's repro): two different steps, one id.
    editEvents(dir, (events) => {
      for (const e of events) if (e.stepId === 2) e.stepId = 1;
    });
    const error = await readError(dir);
    expect({ file: error.file, line: error.line, field: error.field }).toEqual({
      file: 'events.jsonl',
      line: 6,
      field: 'stepId',
    });
    expect(error.problem).toBe('step 1 is started twice: line 2 started it already');
    // The events alone are enough: ledger (which reads no snapshot) refuses it too.
    expect((await readError(dir, { world: false })).line).toBe(6);
  });

  it('is refused when a step.started line is repeated with a seq of its own', async () => {
    const dir = await recordingWith();
    editEvents(dir, (events) => {
      const started = events.find((e) => e.type === 'step.started' && e.stepId === 2);
      events.push({ ...(started as Record<string, unknown>) });
    });
    expect((await readError(dir)).problem).toBe('step 2 is started twice: line 6 started it already');
  });

  it('accepts what real recordings hold: steps interleaved by concurrent writers, many calls in one step, step 0 events', async () => {
    const dir = join(tempDir(), 'rec');
    const w = await createRecordingWriter(dir, init());
    w.append({ type: 'run.started', stepId: 0, time, payload: { command: ['node', 'agent.mjs'], cwd: '/work' } });
    const tool = (stepId: number, name: string) =>
      w.append({
        type: 'tool.called',
        stepId,
        time,
        payload: { kind: 'in-process', name, stateType: 'API_CALL', args: {}, mutating: false, latencyMs: 1 },
      });
    w.append({ type: 'step.started', stepId: 1, time, payload: { stateType: 'API_CALL', name: 'a' } });
    w.append({ type: 'step.started', stepId: 2, time, payload: { stateType: 'API_CALL', name: 'b' } });
    tool(2, 'b');
    tool(1, 'a');
    tool(1, 'a again');
    w.append({ type: 'step.completed', stepId: 2, time, payload: { status: 'success', latencyMs: 1 } });
    w.append({ type: 'step.completed', stepId: 1, time, payload: { status: 'success', latencyMs: 1 } });
    // A step written out of order (a replay keeps a recorded step's number), after a later one.
    w.append({ type: 'step.started', stepId: 4, time, payload: { stateType: 'API_CALL', name: 'd' } });
    w.append({ type: 'step.completed', stepId: 4, time, payload: { status: 'success', latencyMs: 1 } });
    w.append({ type: 'step.started', stepId: 3, time, payload: { stateType: 'API_CALL', name: 'c' } });
    w.append({ type: 'step.completed', stepId: 3, time, payload: { status: 'success', latencyMs: 1 } });
    w.append({ type: 'run.completed', stepId: 0, time, payload: { status: 'complete', exitCode: 0 } });
    await w.close('complete');
    const recording = await readRecording(dir);
    expect(recording.events.filter((e) => e.type === 'step.started').map((e) => e.stepId)).toEqual([1, 2, 4, 3]);
  });

  it('is refused on one line with exit 2 by every command', async () => {
    const dir = await recordingWith();
    editEvents(dir, (events) => {
      for (const e of events) if (e.stepId === 2) e.stepId = 1;
    });
    expectRefusedEverywhere(dir, 'events.jsonl:6: field stepId: step 1 is started twice', [
      'ledger',
      'replay',
      'bisect',
      'eval',
      'diff',
    ]);
  }, 120_000);
});

describe('the committed recordings hold no contradiction', () => {
  const dirs = ['recordings/examples', 'recordings/support', 'test/providers/fixtures'].flatMap((folder) =>
    readdirSync(join(root, folder), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(root, folder, e.name)),
  );
  it.each(dirs.map((d) => [d.slice(root.length + 1)]))('reads %s', async (dir) => {
    await expect(readRecording(join(root, dir))).resolves.toBeTruthy();
  });
});

describe('materializeFs', () => {
  it('turns a file system error into a one-line TapedeckError naming the file, never a stack trace', async () => {
    // A world the reader would refuse, handed over directly (a bug elsewhere must not print a stack).
    const entry = (text: string): FileEntry => ({
      mode: 0o644,
      size: text.length,
      sha256: createHash('sha256').update(text).digest('hex'),
      text,
    });
    const target = join(tempDir(), 'world');
    const error = await materializeFs({ files: { a: entry('x'), 'a/b': entry('y') } }, () => Buffer.alloc(0), target)
      .then(() => undefined)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TapedeckError);
    expect((error as TapedeckError).code).toBe('WORLD_WRITE_FAILED');
    expect((error as TapedeckError).message).toMatch(
      /^cannot write the world's file "a\/b" into .*: (?:ENOTDIR|EEXIST)/,
    );
    expect((error as TapedeckError).message).not.toContain('\n');
    // The folder itself unwritable: a file where it should be.
    const blocked = join(tempDir(), 'blocked');
    writeFileSync(blocked, '');
    const top = await materializeFs({ files: {} }, () => Buffer.alloc(0), join(blocked, 'world'))
      .then(() => undefined)
      .catch((e: unknown) => e);
    expect((top as TapedeckError).message).toMatch(/^cannot write the world folder into /);
  });
});
