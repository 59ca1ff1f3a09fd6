// Bench of the state-diff engine: a 100k-row table with 1% changed rows, a 10k-file tree with 1% changed files.
// Baseline measured in the same run: building a plain Map of the same rows / files (the floor of any hash join).
import { createHash } from 'node:crypto';
import { diffDb, diffFs, stateDiff } from '../src/diff/index.js';
import type { DbSnapshot, FileEntry, FsSnapshot, Recording, RecordingEvent, Row } from '../src/recording/index.js';

function time<T>(fn: () => T): { ms: number; value: T } {
  const t0 = performance.now();
  const value = fn();
  return { ms: performance.now() - t0, value };
}

function best<T>(runs: number, fn: () => T): { ms: number; value: T } {
  let out = time(fn);
  for (let i = 1; i < runs; i++) {
    const t = time(fn);
    if (t.ms < out.ms) out = t;
  }
  return out;
}

function table(rows: Row[]): DbSnapshot {
  return {
    schemas: ['public'],
    ddl: [],
    tables: [
      {
        schema: 'public',
        name: 'bookings',
        columns: ['id', 'flight_id', 'passenger', 'seats', 'status', 'created_at'].map((name) => ({
          name,
          type: 'text',
          nullable: false,
        })),
        primaryKey: ['id'],
        rows,
      },
    ],
  };
}

export async function run(): Promise<void> {
  const N = 100_000;
  const before: Row[] = [];
  for (let i = 0; i < N; i++)
    before.push({
      id: i,
      flight_id: `TD${i % 997}`,
      passenger: `passenger ${i}`,
      seats: 1 + (i % 4),
      status: 'confirmed',
      created_at: '2026-11-24T10:00:00Z',
    });
  const after = before.map((r, i) => (i % 100 === 0 ? { ...r, status: 'cancelled' } : r));
  const a = table(before);
  const b = table(after);
  const baseline = best(3, () => {
    const m = new Map<number, Row>();
    for (const r of before) m.set(r.id as number, r);
    for (const r of after) m.get(r.id as number);
    return m.size;
  });
  const db = best(3, () => diffDb(a, b));
  const rowsPerSec = (2 * N) / (db.ms / 1000);
  process.stdout.write(
    `db  100k rows, 1% changed: ${db.value.length} changes in ${db.ms.toFixed(1)} ms (${Math.round(rowsPerSec).toLocaleString()} rows/s; ` +
      `target < 1000 ms) — ${(db.ms / baseline.ms).toFixed(1)}x a plain Map build (${baseline.ms.toFixed(1)} ms)\n`,
  );

  // End to end: a recording whose 1% changed rows each have their db.changed event (attribution included).
  const events: RecordingEvent[] = [];
  for (let i = 0; i < N; i += 100)
    events.push({
      seq: events.length,
      traceId: 't',
      stepId: 1 + (i % 7),
      type: 'db.changed',
      time: '2026-11-24T10:00:00Z',
      payload: {
        schema: 'public',
        table: 'bookings',
        op: 'update',
        key: { id: i },
        before: before[i]!,
        after: after[i]!,
      },
    });
  const recording: Recording = {
    dir: '/bench',
    manifest: {} as Recording['manifest'],
    events,
    pre: { db: a },
    post: { db: b },
    readBlob: () => Buffer.alloc(0),
    warnings: [],
  };
  const full = best(3, () => stateDiff(recording));
  process.stdout.write(
    `stateDiff (recording, 100k rows, 1000 attributed changes -> eval_state_result): ${full.value.rows.length} rows in ${full.ms.toFixed(1)} ms ` +
      `(${Math.round((2 * N) / (full.ms / 1000)).toLocaleString()} rows/s; target < 1000 ms) — ${(full.ms / baseline.ms).toFixed(1)}x a plain Map build\n`,
  );

  const F = 10_000;
  const blobs = new Map<string, Buffer>();
  const entry = (text: string): FileEntry => {
    const bytes = Buffer.from(text);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    blobs.set(sha256, bytes);
    return { mode: 0o644, size: bytes.length, sha256 };
  };
  const lines = (i: number, changed: boolean) =>
    Array.from({ length: 40 }, (_, l) =>
      changed && l === 20 ? `line ${l} of file ${i} CHANGED` : `line ${l} of file ${i}`,
    ).join('\n');
  const fsBefore: FsSnapshot = { files: {} };
  const fsAfter: FsSnapshot = { files: {} };
  for (let i = 0; i < F; i++) {
    const path = `src/dir${i % 100}/file${i}.txt`;
    fsBefore.files[path] = entry(lines(i, false));
    fsAfter.files[path] = i % 100 === 0 ? entry(lines(i, true)) : fsBefore.files[path]!;
  }
  const readBlob = (sha: string) => blobs.get(sha)!;
  const fsBaseline = best(3, () => {
    const m = new Map<string, FileEntry>();
    for (const [p, e] of Object.entries(fsBefore.files)) m.set(p, e);
    for (const p of Object.keys(fsAfter.files)) m.get(p);
    return m.size;
  });
  const fs = best(3, () => diffFs(fsBefore, fsAfter, { readBlob }));
  const filesPerSec = (2 * F) / (fs.ms / 1000);
  process.stdout.write(
    `fs  10k files, 1% changed (unified diffs): ${fs.value.length} changes in ${fs.ms.toFixed(1)} ms ` +
      `(${Math.round(filesPerSec).toLocaleString()} files/s; target < 500 ms) — ${(fs.ms / fsBaseline.ms).toFixed(1)}x a plain Map build (${fsBaseline.ms.toFixed(1)} ms)\n`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
