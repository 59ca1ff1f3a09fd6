// The fs world tracker that watches (inotify through fs.watch, looking again only at touched paths)
// reports exactly the changes of the one that scans the whole folder at every step: files created,
// modified in place with the same size, chmodded, removed; folders created with files in them,
// renamed, removed, replaced by a file; a file made and removed within one step; the excluded
// folder's writes ignored. What it knew under a gone folder goes, after a scan too, and a gone
// path it never knew costs no more for the many files it knows.
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFsTracker } from '../../src/record/index.js';
import type { FileLook } from '../../src/record/protocol.js';
import { sha256Hex } from '../../src/recording/index.js';
import { tempDir } from './helpers.js';

const tmp = tempDir('tapedeck-fs-tracker-');

/** Steps both tests take in a root holding a/f0.txt, a/f2.txt and a/b/f1.txt: a file created, one modified in place (same size), one chmodded, one removed. */
const changedAndRemoved = (p: (rel: string) => string): Array<[string, () => void]> => [
  [
    'create and modify in place (same size)',
    () => {
      writeFileSync(p('new.txt'), 'new\n');
      writeFileSync(p('a/f0.txt'), 'FILE 0\n');
    },
  ],
  [
    'chmod and remove',
    () => {
      chmodSync(p('a/b/f1.txt'), 0o600);
      rmSync(p('a/f2.txt'));
    },
  ],
];
afterAll(() => tmp.remove());

describe('fs world capture with watching', () => {
  it('reports the same changes, step by step, as scanning the whole folder', async () => {
    const root = path.join(tmp.dir, 'ws');
    const own = path.join(root, '.rec');
    mkdirSync(path.join(root, 'a/b'), { recursive: true });
    mkdirSync(own);
    for (let i = 0; i < 20; i++) writeFileSync(path.join(root, i % 2 ? 'a/b' : 'a', `f${i}.txt`), `file ${i}\n`);
    writeFileSync(path.join(root, 'top.txt'), 'top\n');
    const put = (bytes: Uint8Array) => ({ sha256: sha256Hex(bytes) });
    const watching = createFsTracker(root, put, { exclude: [own], watch: true });
    const scanning = createFsTracker(root, put, { exclude: [own] });
    try {
      expect(await watching.snapshot()).toEqual(await scanning.snapshot());
      const p = (rel: string) => path.join(root, rel);
      const steps: Array<[string, () => void]> = [
        ['nothing', () => {}],
        ...changedAndRemoved(p),
        [
          'a new nested folder with files',
          () => {
            mkdirSync(p('c/d/e'), { recursive: true });
            writeFileSync(p('c/d/e/deep.txt'), 'deep\n');
            writeFileSync(p('c/one.txt'), 'one\n');
          },
        ],
        ['a file in the folder made last step', () => writeFileSync(p('c/d/two.txt'), 'two\n')],
        ['a folder renamed', () => renameSync(p('c'), p('c2'))],
        ['a file in the renamed folder', () => writeFileSync(p('c2/d/e/deep.txt'), 'deeper\n')],
        ['a folder removed', () => rmSync(p('a/b'), { recursive: true })],
        [
          'a file replaced by a folder, a folder by a file',
          () => {
            rmSync(p('top.txt'));
            mkdirSync(p('top.txt'));
            writeFileSync(p('top.txt/inside.txt'), 'inside\n');
            rmSync(p('c2'), { recursive: true });
            writeFileSync(p('c2'), 'now a file\n');
          },
        ],
        [
          'made and removed within one step; the excluded folder written',
          () => {
            writeFileSync(p('brief.txt'), 'x');
            rmSync(p('brief.txt'));
            writeFileSync(path.join(own, 'events.jsonl'), '{}\n');
          },
        ],
        [
          'a folder removed and made again with other files',
          () => {
            rmSync(p('top.txt'), { recursive: true });
            mkdirSync(p('top.txt'));
            writeFileSync(p('top.txt/again.txt'), 'again\n');
          },
        ],
        ['a file in the folder made again', () => writeFileSync(p('top.txt/later.txt'), 'later\n')],
      ];
      for (const [name, act] of steps) {
        act();
        const [w, s] = [await watching.changes(), await scanning.changes()];
        expect(w, name).toEqual(s);
        expect(watching.lastPass, name).toBe('touched');
        expect(scanning.lastPass, name).toBe('scan');
        if (name !== 'nothing' && !name.startsWith('made and removed')) expect(w.length, name).toBeGreaterThan(0);
      }
      expect(await watching.snapshot()).toEqual(await scanning.snapshot());
    } finally {
      watching.close();
      scanning.close();
    }
  });

  it('applies files the agent read itself: the changes a scan finds, none reported twice, no name outside the root', async () => {
    const root = path.join(tmp.dir, 'applied');
    const own = path.join(root, '.rec');
    mkdirSync(path.join(root, 'a/b'), { recursive: true });
    mkdirSync(own);
    for (let i = 0; i < 6; i++) writeFileSync(path.join(root, i % 2 ? 'a/b' : 'a', `f${i}.txt`), `file ${i}\n`);
    const put = (bytes: Uint8Array) => ({ sha256: sha256Hex(bytes) });
    const watching = createFsTracker(root, put, { exclude: [own], watch: true });
    const scanning = createFsTracker(root, put, { exclude: [own] });
    const { createQuietWorld } = (await import(
      path.join(import.meta.dirname, '../../src/record/preload/record-quiet.mjs')
    )) as {
      createQuietWorld(root: string, exclude: string[]): { check(): Promise<boolean | FileLook[]>; close(): void };
    };
    const agent = createQuietWorld(root, [own]);
    const p = (rel: string) => path.join(root, rel);
    try {
      await watching.snapshot();
      await scanning.snapshot();
      expect(await agent.check()).toBe(false);
      const steps: Array<[string, () => void]> = [
        ...changedAndRemoved(p),
        ['a folder removed', () => rmSync(p('a/b'), { recursive: true })],
        ['rewritten with the same bytes', () => writeFileSync(p('new.txt'), 'new\n')],
      ];
      for (const [name, act] of steps) {
        act();
        const seen = await agent.check();
        expect(Array.isArray(seen), name).toBe(true);
        const applied = watching.apply(seen as FileLook[]);
        expect(await watching.changes(), `${name}: nothing left to drain`).toEqual([]);
        expect(applied, name).toEqual(await scanning.changes());
      }
      // Names the agent's process should never send: ignored, nothing changes.
      const data = Buffer.from('x').toString('base64');
      const hostile: FileLook[] = [
        ...['../escape.txt', '/etc/passwd', 'a/../new.txt', './new.txt', 'a//f0.txt', '.rec/x.txt', ''].map((path) => ({
          path,
          mode: 0o644,
          key: 'k',
          data,
        })),
        ...['..', '', '.', '/', '.rec'].map((path) => ({ path, gone: true as const })),
      ];
      expect(watching.apply(hostile)).toEqual([]);
      expect(await watching.snapshot()).toEqual(await scanning.snapshot());
    } finally {
      agent.close();
      watching.close();
      scanning.close();
    }
  });

  it('drops what it knew under a gone folder after a scan replaced what it knows', async () => {
    const root = path.join(tmp.dir, 'replaced');
    mkdirSync(path.join(root, 'a/b'), { recursive: true });
    writeFileSync(path.join(root, 'a/b/f.txt'), 'f\n');
    const scanning = createFsTracker(root, (bytes) => ({ sha256: sha256Hex(bytes) }));
    try {
      await scanning.snapshot();
      rmSync(path.join(root, 'a/b'), { recursive: true });
      mkdirSync(path.join(root, 'x/y'), { recursive: true });
      writeFileSync(path.join(root, 'x/y/g.txt'), 'g\n');
      expect((await scanning.changes()).map((c) => [c.op, c.path])).toEqual([
        ['delete', 'a/b/f.txt'],
        ['create', 'x/y/g.txt'],
      ]);
      expect(scanning.apply([{ path: 'a', gone: true }])).toEqual([]);
      expect(scanning.apply([{ path: 'x', gone: true }]).map((c) => [c.op, c.path])).toEqual([['delete', 'x/y/g.txt']]);
      expect(await scanning.snapshot()).toEqual({ files: { 'x/y/g.txt': expect.anything() } });
    } finally {
      scanning.close();
    }
  });

  it('a gone path it never knew costs the same with 100,000 known files as with none', async () => {
    // Files made and removed within one step (an agent's temp files) are gone paths the tracker
    // never knew: looking for what it knew under them must not be a pass over every known file
    // (that was 2,000 x 100,000 path comparisons: seconds). Timed against the same work on the same
    // tracker knowing nothing (watched), and against learning the 100,000 (applied), each the
    // fastest of two tries: a loaded machine slows both sides alike.
    const root = path.join(tmp.dir, 'many');
    mkdirSync(root);
    const tracker = createFsTracker(root, (bytes) => ({ sha256: sha256Hex(bytes) }), { watch: true });
    const timed = async (act: () => unknown) => {
      const start = performance.now();
      await act();
      return performance.now() - start;
    };
    const temps = Array.from({ length: 2000 }, (_, i) => `tmp-${i}.txt`);
    const madeAndRemoved = async () => {
      for (const name of temps) {
        writeFileSync(path.join(root, name), 'x');
        rmSync(path.join(root, name));
      }
      return timed(async () => expect(await tracker.changes()).toEqual([]));
    };
    try {
      await tracker.snapshot();
      const knowingNone = Math.min(await madeAndRemoved(), await madeAndRemoved());
      expect(tracker.lastPass).toBe('touched');
      const data = Buffer.from('x').toString('base64');
      const many: FileLook[] = Array.from({ length: 100_000 }, (_, i) => ({
        path: `d${i % 100}/e${(i >> 7) % 10}/f${i}.txt`,
        mode: 0o644,
        key: `k${i}`,
        data,
      }));
      const learning = await timed(() => expect(tracker.apply(many)).toHaveLength(100_000));
      const knowingMany = Math.min(await madeAndRemoved(), await madeAndRemoved());
      expect(tracker.lastPass).toBe('touched');
      const gone = temps.map((name) => ({ path: name, gone: true as const }));
      const applying = Math.min(
        await timed(() => expect(tracker.apply(gone)).toEqual([])),
        await timed(() => expect(tracker.apply(gone)).toEqual([])),
      );
      // Measured on 2 cores: knowing none ~130 ms, knowing many the same (with the pass: ~1,800 ms);
      // learning ~1,400 ms, applying ~10 ms (with the pass: ~14,700 ms).
      expect(knowingMany, `${knowingMany} ms, knowing none ${knowingNone} ms`).toBeLessThan(4 * knowingNone);
      expect(applying, `${applying} ms, learning ${learning} ms`).toBeLessThan(learning / 4);
    } finally {
      tracker.close();
    }
  });
});
