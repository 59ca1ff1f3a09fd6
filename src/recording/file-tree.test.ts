import { describe, expect, it } from 'vitest';
import { type FsChangeAt, fileTreeClash, fsChangesClash } from './file-tree.js';
import type { FileEntry, FsChangedPayload } from './types.js';

const entry: FileEntry = { mode: 0o644, size: 1, sha256: 'a'.repeat(64) };
let seq = 0;
const create = (stepId: number, path: string): FsChangeAt => ({
  line: ++seq,
  seq,
  stepId,
  payload: { path, op: 'create', after: entry },
});
const remove = (stepId: number, path: string): FsChangeAt => ({
  line: ++seq,
  seq,
  stepId,
  payload: { path, op: 'delete', before: entry } as FsChangedPayload,
});

describe('fileTreeClash', () => {
  it('finds a path under a file, however deep and in whatever key order', () => {
    expect(fileTreeClash(['a', 'a/b'])).toEqual({ path: 'a/b', problem: '"a" is a file' });
    expect(fileTreeClash(['x/y/z', 'x'])).toEqual({ path: 'x/y/z', problem: '"x" is a file' });
    expect(fileTreeClash(['d/e', 'd/e/f/g'])).toEqual({ path: 'd/e/f/g', problem: '"d/e" is a file' });
  });

  it('accepts a tree, names that share a prefix without a slash included', () => {
    expect(fileTreeClash(['a/b', 'a/c/d', 'ab', 'a.txt', 'a-b/c'])).toBeUndefined();
    expect(fileTreeClash([])).toBeUndefined();
  });
});

describe('fsChangesClash', () => {
  it('refuses a file created under a file of the pre snapshot', () => {
    expect(fsChangesClash({ a: entry }, [create(1, 'a/b')])).toMatchObject({ step: 1, problem: '"a" is a file' });
  });

  it('refuses a file created where a folder is, in one step or across steps', () => {
    const one = [create(1, 'a/b'), create(1, 'a')];
    expect(fsChangesClash(undefined, one)).toMatchObject({ line: one[0]?.line, step: 1, problem: '"a" is a file' });
    const across = [create(1, 'a/b'), create(2, 'a')];
    expect(fsChangesClash(undefined, across)).toMatchObject({
      line: across[1]?.line,
      step: 2,
      problem: '"a" is a folder (it holds "a/b")',
    });
  });

  it('accepts a step whose changes pass through a clash on the way (the recorder lists them by path)', () => {
    // `rm -r a; echo > a` in one step: "a" created is listed before "a/b" deleted.
    expect(fsChangesClash({ 'a/b': entry }, [create(1, 'a'), remove(1, 'a/b')])).toBeUndefined();
    // And back: the file goes, a folder takes its name.
    expect(fsChangesClash({ a: entry }, [remove(1, 'a'), create(1, 'a/b')])).toBeUndefined();
  });

  it('accepts a path that becomes a folder in a later step after its file was deleted', () => {
    expect(fsChangesClash(undefined, [create(1, 'a'), remove(2, 'a'), create(3, 'a/b'), remove(4, 'a/b')])).toBe(
      undefined,
    );
  });

  it('reads the world at each step as worldAt does: by step, then seq', () => {
    // Step 2's delete of "a" is written before step 1 creates "a/b" (a concurrent writer): after
    // step 1 "a" is still a file, so the world after step 1 holds both.
    const changes = [create(0, 'a'), remove(2, 'a'), create(1, 'a/b')];
    expect(fsChangesClash(undefined, changes)).toMatchObject({ step: 1, problem: '"a" is a file' });
    // Step 2 creates "a" before step 1 deletes it (seq order): after step 2, "a" is gone (worldAt
    // applies both in seq order), so "a/b" of step 2 is no clash.
    const older = [create(2, 'a'), remove(1, 'a'), create(2, 'a/b')];
    expect(fsChangesClash(undefined, older)).toBeUndefined();
  });
});
