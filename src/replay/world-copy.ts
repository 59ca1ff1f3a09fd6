// The replay's fs root in the OS sandbox: a real folder seeded from the pre-snapshot and bound
// writable at the recorded fs root, shared by every process of the agent's tree (node, sh, curl,
// python…). The replayer reads it back: scan() reports what changed since the last scan, in the
// preload's report format, so files written by any process become the replay's fs.changed events
// and its post-snapshot; apply() writes the recorded effects of a served call into it.
import { lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FsReport } from '../../sandbox/index.js';
import { materializeFs } from '../../sandbox/index.js';
import type { FsSnapshot } from '../recording/index.js';

interface Seen {
  size: number;
  mtimeMs: number;
  ino: number;
  mode: number;
}

export class WorldCopy {
  private known = new Map<string, Seen>();

  private constructor(
    /** The folder on the host. */
    readonly dir: string,
    /** Where it is mounted inside (the recorded fs root). */
    readonly root: string,
  ) {}

  /** Seeds `dir` with `fs` (the pre-snapshot) and takes it as the starting point. */
  static async create(
    dir: string,
    root: string,
    fs: FsSnapshot | undefined,
    readBlob: (sha: string) => Buffer,
  ): Promise<WorldCopy> {
    await materializeFs(fs ?? { files: {} }, readBlob, dir);
    const copy = new WorldCopy(dir, root);
    copy.known = copy.walk();
    return copy;
  }

  private walk(): Map<string, Seen> {
    const out = new Map<string, Seen>();
    const visit = (rel: string) => {
      let names: string[];
      try {
        names = readdirSync(path.join(this.dir, rel));
      } catch {
        return;
      }
      for (const name of names) {
        const r = rel ? `${rel}/${name}` : name;
        let st: ReturnType<typeof lstatSync>;
        try {
          st = lstatSync(path.join(this.dir, r));
        } catch {
          continue;
        }
        if (st.isDirectory()) visit(r);
        else if (st.isFile()) out.set(r, { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino, mode: st.mode & 0o777 });
      }
    };
    visit('');
    return out;
  }

  /** What changed since the last scan (or apply): written files with their content, removed files. */
  scan(): FsReport[] {
    const now = this.walk();
    const reports: FsReport[] = [];
    for (const [rel, seen] of now) {
      const before = this.known.get(rel);
      if (
        before &&
        before.size === seen.size &&
        before.mtimeMs === seen.mtimeMs &&
        before.ino === seen.ino &&
        before.mode === seen.mode
      )
        continue;
      let data: Buffer;
      try {
        data = readFileSync(path.join(this.dir, rel));
      } catch {
        continue;
      }
      reports.push({ abs: path.join(this.root, rel), mode: seen.mode, b64: data.toString('base64') });
    }
    for (const rel of this.known.keys()) {
      if (!now.has(rel)) reports.push({ abs: path.join(this.root, rel), gone: true });
    }
    this.known = now;
    return reports;
  }

  /** Writes recorded effects (paths under the root) into the copy, not reported back as the agent's. */
  apply(effects: FsReport[]): void {
    const pending = this.scan();
    for (const e of effects) {
      const rel = path.relative(this.root, e.abs);
      if (rel.startsWith('..') || path.isAbsolute(rel)) continue;
      const abs = path.join(this.dir, rel);
      if (e.gone) rmSync(abs, { recursive: true, force: true });
      else if (!e.dir) {
        mkdirSync(path.dirname(abs), { recursive: true });
        writeFileSync(abs, Buffer.from(e.b64 ?? '', 'base64'), { mode: (e.mode ?? 0o644) & 0o777 });
      }
    }
    this.known = this.walk();
    // What the agent wrote before the effects still counts as its own.
    this.carried.push(...pending);
  }

  /** Agent writes seen while applying effects, handed out by the next take(). */
  private carried: FsReport[] = [];

  /** scan(), plus what apply() set aside. */
  take(): FsReport[] {
    const out = [...this.carried, ...this.scan()];
    this.carried = [];
    return out;
  }
}
