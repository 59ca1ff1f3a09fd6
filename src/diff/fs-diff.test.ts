import { createHash } from 'node:crypto';
import { applyPatch } from 'diff';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FileEntry, FsSnapshot } from '../recording/index.js';
import { diffFs } from './fs-diff.js';

const blobs = new Map<string, Buffer>();
function entry(content: string | Buffer): FileEntry {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  blobs.set(sha256, bytes);
  return { mode: 0o644, size: bytes.length, sha256 };
}
const readBlob = (sha: string) => blobs.get(sha)!;
const fs = (files: Record<string, FileEntry>): FsSnapshot => ({ files });

describe('diffFs', () => {
  it('reports created, modified and deleted files with unified diffs for text', () => {
    const before = fs({ 'a.txt': entry('one\ntwo\nthree\n'), 'gone.md': entry('bye\n'), 'same.txt': entry('x') });
    const after = fs({ 'a.txt': entry('one\nTWO\nthree\n'), 'new.md': entry('hello\n'), 'same.txt': entry('x') });
    const changes = diffFs(before, after, { readBlob });
    expect(changes.map((c) => [c.path, c.op])).toEqual([
      ['a.txt', 'modify'],
      ['gone.md', 'delete'],
      ['new.md', 'create'],
    ]);
    const mod = changes[0]!;
    expect(mod.patch).toContain('-two');
    expect(mod.patch).toContain('+TWO');
    expect(mod).toMatchObject({ added: 1, removed: 1, binary: false });
    expect(changes[2]!.patch).toContain('+hello');
  });

  it('compares binary files by hash only', () => {
    const changes = diffFs(
      fs({ 'img.png': entry(Buffer.from([0x89, 0, 1, 2])) }),
      fs({ 'img.png': entry(Buffer.from([0x89, 0, 1, 3])) }),
      {
        readBlob,
      },
    );
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ op: 'modify', binary: true });
    expect(changes[0]!.patch).toBeUndefined();
    expect(changes[0]!.before!.sha256).not.toBe(changes[0]!.after!.sha256);
  });

  it('attributes a change to the last step that touched the path', () => {
    const changes = diffFs(fs({}), fs({ 'out.md': entry('x') }), { attribution: new Map([['out.md', [2, 5]]]) });
    expect(changes[0]).toMatchObject({ stepId: 5, steps: [2, 5] });
  });

  it('finds exactly the paths a random edit touched, and its patches rebuild the new text (property)', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.stringMatching(/^[a-z]{1,6}(\/[a-z]{1,6})?\.txt$/),
          fc.array(fc.string({ maxLength: 8 }), { maxLength: 6 }),
          { maxKeys: 25 },
        ),
        fc.array(fc.tuple(fc.nat(), fc.constantFrom('edit', 'delete', 'create')), { maxLength: 10 }),
        (tree, edits) => {
          const before: Record<string, string> = Object.fromEntries(
            Object.entries(tree).map(([p, lines]) => [p, lines.join('\n')]),
          );
          const after = { ...before };
          const paths = Object.keys(before);
          edits.forEach(([n, op], i) => {
            const p = paths.length > 0 ? paths[n % paths.length]! : `new${i}.txt`;
            if (op === 'edit' && p in after) after[p] = `${after[p]}\nedited ${i}`;
            else if (op === 'delete') delete after[p];
            else if (op === 'create') after[`created${i}/x.txt`] = `new ${i}`;
          });
          const snap = (files: Record<string, string>) =>
            fs(Object.fromEntries(Object.entries(files).map(([p, t]) => [p, entry(t)])));
          const changes = diffFs(snap(before), snap(after), { readBlob });
          const expected = [...new Set([...Object.keys(before), ...Object.keys(after)])]
            .filter((p) => before[p] !== after[p])
            .sort();
          expect(changes.map((c) => c.path)).toEqual(expected);
          for (const c of changes) {
            expect(c.op).toBe(!(c.path in before) ? 'create' : !(c.path in after) ? 'delete' : 'modify');
            expect(applyPatch(before[c.path] ?? '', c.patch!)).toBe(after[c.path] ?? '');
          }
        },
      ),
    );
  });
});
