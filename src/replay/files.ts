// The replay's view of the sandboxed filesystem root: path -> entry, kept up to date from the
// preload's reports of what the agent wrote and from the recorded effects the replay applied,
// turned into fs.changed events. Its final state is the replay's post-snapshot.
import path from 'node:path';
import type { FsReport } from '../../sandbox/index.js';
import {
  type FileEntry,
  type FsChangedPayload,
  type FsSnapshot,
  fileBytes,
  type RecordingWriter,
  sha256Hex,
  unsafePathReason,
} from '../recording/index.js';

export class ReplayFiles {
  private readonly files = new Map<string, FileEntry>();

  constructor(
    private readonly writer: RecordingWriter,
    readonly root: string | undefined,
    pre: FsSnapshot | undefined,
  ) {
    for (const [p, e] of Object.entries(pre?.files ?? {})) this.files.set(p, { ...e });
  }

  /**
   * Applies a recorded change (an effect served with its call): what the preload must write, and
   * the change as this replay records it (its content kept as this replay's writer keeps files,
   * inline or a blob, whichever way the recording kept it).
   */
  applyRecorded(
    change: FsChangedPayload,
    readBlob: (sha: string) => Buffer,
  ): { report: FsReport; change: FsChangedPayload } | undefined {
    if (!this.root) return undefined;
    const abs = path.join(this.root, change.path);
    if (change.op === 'delete' || !change.after) {
      this.files.delete(change.path);
      return { report: { abs, gone: true }, change };
    }
    const data = Buffer.from(fileBytes(change.after, readBlob));
    const { mode, size } = change.after;
    const after: FileEntry = { mode, size, ...this.writer.fileContent(data) };
    this.files.set(change.path, after);
    return { report: { abs, mode, b64: data.toString('base64') }, change: { ...change, after } };
  }

  /** Turns the preload's report of written paths into fs.changed events of `step`. */
  takeReport(reports: FsReport[], step: number): void {
    for (const payload of this.changes(reports)) this.writer.append({ type: 'fs.changed', stepId: step, payload });
  }

  /** The changes the preload's report of written paths makes to the root, in order (as fs.changed payloads). */
  changes(reports: FsReport[]): FsChangedPayload[] {
    if (!this.root || reports.length === 0) return [];
    const root = this.root;
    const out: FsChangedPayload[] = [];
    const rel = (abs: string) => path.relative(root, abs).split(path.sep).join('/');
    const inside = (abs: string) => abs === root || abs.startsWith(root + path.sep);
    const seen = new Set<string>();
    const dirs: string[] = [];
    for (const r of reports) {
      if (!inside(r.abs)) continue;
      if (r.dir) {
        dirs.push(rel(r.abs).replace(/\/$/, ''));
        continue;
      }
      const p = rel(r.abs);
      // A name a recording cannot hold (a backslash, a control character) is left out, as the
      // recorder left it out (src/record/world/fs.ts).
      if (p !== '' && unsafePathReason(p) !== undefined) continue;
      if (r.gone) {
        for (const known of [...this.files.keys()]) {
          if (known === p || known.startsWith(`${p}/`) || p === '') this.delete(known, out);
        }
        continue;
      }
      seen.add(p);
      const data = Buffer.from(r.b64 ?? '', 'base64');
      const mode = r.mode ?? 0o644;
      const before = this.files.get(p);
      // Unchanged: nothing stored (no blob written, none of the recording's inline budget spent).
      if (before && before.mode === mode && before.size === data.length && before.sha256 === sha256Hex(data)) continue;
      const entry: FileEntry = { mode, size: data.length, ...this.writer.fileContent(data) };
      this.files.set(p, entry);
      out.push({ path: p, op: before ? 'modify' : 'create', ...(before ? { before } : {}), after: entry });
    }
    for (const d of dirs) {
      for (const known of [...this.files.keys()]) {
        if ((d === '' || known.startsWith(`${d}/`)) && !seen.has(known)) this.delete(known, out);
      }
    }
    return out;
  }

  private delete(p: string, out: FsChangedPayload[]): void {
    const before = this.files.get(p);
    if (!before) return;
    this.files.delete(p);
    out.push({ path: p, op: 'delete', before });
  }

  snapshot(): FsSnapshot {
    const files: FsSnapshot['files'] = {};
    for (const p of [...this.files.keys()].sort()) files[p] = this.files.get(p) as FileEntry;
    return { files };
  }
}
