// The replay's fs root in the OS sandbox: a real folder seeded from the pre-snapshot and bound
// writable at the recorded fs root, shared by every process of the agent's tree (node, sh, curl,
// python…). The replayer reads it back: take() reports what changed since the last look, in the
// preload's report format, so files written by any process become the replay's fs.changed events
// and its post-snapshot; apply() writes the recorded effects of a served call into it.
//
// The folder is watched (sandbox/preload/shared-watch.mjs), so a look reads only the paths the
// kernel said were touched, not the whole tree: a call costs what it changed, not the size of the
// world. A watcher that went blind (a folder it could not watch, too many folders) falls back to
// walking everything; the last look (takeAll) always walks, so the post-snapshot is exact.
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { materializeFs } from '../../sandbox/fs.js';
import { readQueued, type TreeWatch, watchTree } from '../../sandbox/preload/shared-watch.mjs';
import type { FsReport } from '../../sandbox/protocol.js';
import type { FsSnapshot } from '../recording/index.js';

interface Seen {
  size: number;
  mtimeMs: number;
  ino: number;
  mode: number;
}

const same = (a: Seen | undefined, b: Seen): boolean =>
  a !== undefined && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino && a.mode === b.mode;

export class WorldCopy {
  private known = new Map<string, Seen>();
  private watch: TreeWatch | undefined;

  private constructor(
    /** The folder on the host. */
    readonly dir: string,
    /** Where it is mounted inside (the recorded fs root). */
    readonly root: string,
  ) {}

  /** Seeds `dir` with `fs` (the pre-snapshot), watches it and takes it as the starting point. */
  static async create(
    dir: string,
    root: string,
    fs: FsSnapshot | undefined,
    readBlob: (sha: string) => Buffer,
  ): Promise<WorldCopy> {
    await materializeFs(fs ?? { files: {} }, readBlob, dir);
    const copy = new WorldCopy(dir, root);
    copy.watch = watchTree(dir);
    // One pass watches each folder before reading it and takes the baseline.
    copy.watch.start((abs) => copy.look(copy.relOf(abs), copy.known));
    if (copy.watch.blind) copy.known = copy.walk();
    return copy;
  }

  private relOf(abs: string): string {
    return path.relative(this.dir, abs).split(path.sep).join('/');
  }

  /** Stats the file at `rel` into `into` (nothing when it is not a plain file); 'dir' for a folder. */
  private look(rel: string, into: Map<string, Seen>): 'dir' | undefined {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(path.join(this.dir, rel));
    } catch {
      return undefined;
    }
    if (st.isDirectory()) return 'dir';
    if (st.isFile()) into.set(rel, { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, mode: st.mode & 0o777 });
    return undefined;
  }

  /** The files under `rel` ('' for the whole copy) as they are now. */
  private walk(rel = ''): Map<string, Seen> {
    const out = new Map<string, Seen>();
    const visit = (r: string) => {
      let names: string[];
      try {
        names = readdirSync(path.join(this.dir, r));
      } catch {
        return;
      }
      for (const name of names) {
        const p = r ? `${r}/${name}` : name;
        if (this.look(p, out) === 'dir') visit(p);
      }
    };
    visit(rel);
    return out;
  }

  /** Compares `now` (the files at or under the paths looked at) with what was known there. */
  private diff(now: Map<string, Seen>, lookedAt: (rel: string) => boolean): FsReport[] {
    const reports: FsReport[] = [];
    // In path order, whatever order the kernel or the folder listing gave.
    for (const [rel, seen] of [...now].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
      if (same(this.known.get(rel), seen)) continue;
      let data: Buffer;
      try {
        data = readFileSync(path.join(this.dir, rel));
      } catch {
        continue;
      }
      this.known.set(rel, seen);
      reports.push({ abs: path.join(this.root, rel), mode: seen.mode, b64: data.toString('base64') });
    }
    for (const rel of [...this.known.keys()]) {
      if (lookedAt(rel) && !now.has(rel)) {
        this.known.delete(rel);
        reports.push({ abs: path.join(this.root, rel), gone: true });
      }
    }
    return reports;
  }

  /** What changed since the last look, reading every file of the copy. */
  private scanAll(): FsReport[] {
    const now = this.walk();
    return this.diff(now, () => true);
  }

  /** What changed since the last look: the touched paths only, or everything when the watcher cannot tell. */
  private scan(): FsReport[] {
    const touched = this.watch?.take();
    if (!touched) return this.scanAll();
    if (touched.size === 0) return [];
    const now = new Map<string, Seen>();
    const roots: string[] = [];
    for (const abs of touched) {
      const rel = this.relOf(abs);
      if (rel === '' || rel.startsWith('..')) return this.scanAll();
      roots.push(rel);
      if (this.look(rel, now) === 'dir') for (const [r, s] of this.walk(rel)) now.set(r, s);
    }
    // A touched path that is gone, or a folder, may have held files known before.
    const under = (rel: string) => roots.some((r) => rel === r || rel.startsWith(`${r}/`));
    return this.diff(now, under);
  }

  /**
   * What changed since the last look (after reading every change the kernel queued before the
   * call: whatever was written before a question reached the replayer is in it).
   */
  async take(): Promise<FsReport[]> {
    if (this.watch && !this.watch.blind) await readQueued();
    const out = [...this.carried, ...this.scan()];
    this.carried = [];
    return out;
  }

  /** The last look, when the agent's tree has exited: every file read, so nothing a watcher missed is lost. */
  takeAll(): FsReport[] {
    const out = [...this.carried, ...this.scanAll()];
    this.carried = [];
    return out;
  }

  /** Writes recorded effects (paths under the root) into the copy, not reported back as the agent's. */
  async apply(effects: FsReport[]): Promise<void> {
    if (this.watch && !this.watch.blind) await readQueued();
    // What the agent wrote before the effects still counts as its own.
    this.carried.push(...this.scan());
    const written: string[] = [];
    for (const e of effects) {
      const rel = path.relative(this.root, e.abs);
      if (rel.startsWith('..') || path.isAbsolute(rel)) continue;
      const abs = path.join(this.dir, rel);
      if (e.gone) rmSync(abs, { recursive: true, force: true });
      else if (!e.dir) {
        mkdirSync(path.dirname(abs), { recursive: true });
        writeFileSync(abs, Buffer.from(e.b64 ?? '', 'base64'), { mode: (e.mode ?? 0o644) & 0o777 });
      }
      written.push(rel.split(path.sep).join('/'));
    }
    // Known as they are now: the watcher will name these paths, and a look finds them unchanged.
    for (const rel of written) {
      for (const known of [...this.known.keys()])
        if (known === rel || known.startsWith(`${rel}/`)) this.known.delete(known);
      if (this.look(rel, this.known) === 'dir') for (const [r, s] of this.walk(rel)) this.known.set(r, s);
    }
  }

  /** Agent writes seen while applying effects, handed out by the next take(). */
  private carried: FsReport[] = [];

  /** Stops watching. */
  close(): void {
    this.watch?.close();
  }
}
