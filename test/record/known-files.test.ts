// The fs tracker's known files: under() finds every known file at a path or below it, the same as
// the pass over every known file it replaces, while set and delete keep the folder index right (a
// folder leaves it with its last file).
import { describe, expect, it } from 'vitest';
import { KnownFiles } from '../../src/record/world/known-files.js';

/** What under() replaces: a pass over every known file. */
const byPass = (known: KnownFiles<unknown>, rel: string) =>
  [...known.keys()].filter((k) => rel === '' || k === rel || k.startsWith(`${rel}/`)).sort();
const under = (known: KnownFiles<unknown>, rel: string) => known.under(rel).sort();
const filesOf = (rels: string[]) => {
  const known = new KnownFiles<number>();
  for (const [i, rel] of rels.entries()) known.set(rel, i);
  return known;
};

describe('KnownFiles', () => {
  it('finds the files under nested folders, at a file, and under the root', () => {
    const known = filesOf(['a/b/c/d.txt', 'a/b/e.txt', 'a/f.txt', 'g.txt']);
    expect(under(known, 'a')).toEqual(['a/b/c/d.txt', 'a/b/e.txt', 'a/f.txt']);
    expect(under(known, 'a/b')).toEqual(['a/b/c/d.txt', 'a/b/e.txt']);
    expect(under(known, 'a/b/c')).toEqual(['a/b/c/d.txt']);
    expect(under(known, 'a/f.txt')).toEqual(['a/f.txt']);
    expect(under(known, '')).toEqual(['a/b/c/d.txt', 'a/b/e.txt', 'a/f.txt', 'g.txt']);
    for (const none of ['nope', 'a/nope', 'a/b/c/d.txt/x', 'a/', 'a/b/c/d'])
      expect(under(known, none), none).toEqual([]);
  });

  it('keeps apart names that share a prefix', () => {
    const known = filesOf(['a/b/x', 'a/b/c/z', 'a/bc', 'a/bcd/y', 'a-b/w', 'ab', 'a.b']);
    expect(under(known, 'a/b')).toEqual(['a/b/c/z', 'a/b/x']);
    expect(under(known, 'a/bc')).toEqual(['a/bc']);
    expect(under(known, 'a/bcd')).toEqual(['a/bcd/y']);
    expect(under(known, 'a/b/c')).toEqual(['a/b/c/z']);
    expect(under(known, 'a')).toEqual(['a/b/c/z', 'a/b/x', 'a/bc', 'a/bcd/y']);
    expect(under(known, 'a-b')).toEqual(['a-b/w']);
    expect(under(known, 'a-')).toEqual([]);
    expect(under(known, 'ab')).toEqual(['ab']);
  });

  it('drops a folder from the index with its last file', () => {
    const known = filesOf(['a/b/c.txt', 'a/d.txt']);
    expect(known.folderCount).toBe(3); // '', 'a', 'a/b'
    known.set('a/b/c.txt', 9); // known already: a new value, nothing added to the index
    expect([known.get('a/b/c.txt'), known.size, known.folderCount]).toEqual([9, 2, 3]);
    expect(known.delete('a/b/c.txt')).toBe(true);
    expect([known.has('a/b/c.txt'), known.size, known.folderCount]).toEqual([false, 1, 2]);
    expect(under(known, 'a/b')).toEqual([]);
    expect(under(known, 'a')).toEqual(['a/d.txt']);
    expect(known.delete('a/b/c.txt')).toBe(false);
    expect(known.delete('a/b')).toBe(false);
    expect(known.delete('a')).toBe(false);
    expect(known.folderCount).toBe(2);
    known.delete('a/d.txt');
    expect([known.size, known.folderCount, under(known, '')]).toEqual([0, 0, []]);
    known.set('a/b/c.txt', 1);
    expect([under(known, 'a'), known.folderCount]).toEqual([['a/b/c.txt'], 3]);
  });

  it('keeps a name that is both a file and a folder (read at two moments) until both are gone', () => {
    for (const first of ['a', 'a/b']) {
      const known = filesOf(['a', 'a/b', 'c']);
      expect(under(known, 'a')).toEqual(['a', 'a/b']);
      known.delete(first);
      const left = first === 'a' ? 'a/b' : 'a';
      expect(under(known, 'a')).toEqual([left]);
      expect(under(known, '')).toEqual([left, 'c']);
      known.delete(left);
      expect([under(known, 'a'), under(known, ''), known.folderCount]).toEqual([[], ['c'], 1]);
    }
  });

  it('agrees with a pass over every known file through many sets and deletes', () => {
    // A fixed pseudo-random walk (a small LCG): the same every run.
    let seed = 22;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const names = ['a', 'b', 'ab', 'a-b', 'a.b', 'bc'];
    const pathOf = () => Array.from({ length: 1 + next(4) }, () => names[next(names.length)]).join('/');
    const known = new KnownFiles<number>();
    const probes = new Set<string>(['']);
    for (let i = 0; i < 3000; i++) {
      const rel = pathOf();
      probes.add(rel);
      if (next(3) === 0) known.delete(rel);
      else known.set(rel, i);
      if (i % 100 === 0) for (const probe of probes) expect(under(known, probe), probe).toEqual(byPass(known, probe));
    }
    for (const probe of probes) expect(under(known, probe), probe).toEqual(byPass(known, probe));
    for (const rel of [...known.keys()]) known.delete(rel);
    expect([known.size, known.folderCount]).toEqual([0, 0]);
  });
});
