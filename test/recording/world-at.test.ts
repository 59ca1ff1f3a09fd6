// worldAt: the pre snapshot plus the changes of steps 0..k; worldAt(last) equals the post snapshot.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createRecordingWriter,
  type DbSnapshot,
  type FsSnapshot,
  type Recording,
  readRecording,
  sha256Hex,
  worldAt,
} from '../../src/recording/index.js';
import { init, tempDir } from './helpers.js';

const entry = (text: string) => ({ mode: 0o644, size: Buffer.byteLength(text), sha256: sha256Hex(text) });
const columns = [
  { name: 'id', type: 'integer', nullable: false },
  { name: 'seats', type: 'integer', nullable: false },
];

/** A booking run: step 1 writes a file, step 2 books a seat (update + insert), step 3 cleans up. */
async function bookingRecording(): Promise<{ rec: Recording; post: { fs: FsSnapshot; db: DbSnapshot } }> {
  const dir = join(tempDir(), 'booking');
  const w = await createRecordingWriter(dir, init('booking'));
  const pre = {
    fs: { files: { 'notes.txt': entry('todo'), 'tmp/scratch': entry('x') } },
    db: {
      schemas: ['public'],
      ddl: ['CREATE TABLE public.flights (id integer primary key, seats integer not null)'],
      tables: [
        {
          schema: 'public',
          name: 'flights',
          columns,
          primaryKey: ['id'],
          rows: [
            { id: 1, seats: 3 },
            { id: 10, seats: 0 },
          ],
        },
      ],
    },
  };
  w.writeSnapshot('pre', pre);
  const step = (stepId: number, changes: () => void) => {
    w.append({ type: 'step.started', stepId, payload: { stateType: 'API_CALL', name: `s${stepId}` } });
    changes();
    w.append({ type: 'step.completed', stepId, payload: { status: 'success', latencyMs: 1 } });
  };
  step(1, () =>
    w.append({
      type: 'fs.changed',
      stepId: 1,
      payload: { path: 'out/ticket.txt', op: 'create', after: entry('ticket 1') },
    }),
  );
  step(2, () => {
    w.append({
      type: 'db.changed',
      stepId: 2,
      payload: {
        schema: 'public',
        table: 'flights',
        op: 'update',
        key: { id: 1 },
        before: { id: 1, seats: 3 },
        after: { id: 1, seats: 2 },
      },
    });
    w.append({
      type: 'db.changed',
      stepId: 2,
      payload: { schema: 'public', table: 'flights', op: 'insert', key: { id: 5 }, after: { id: 5, seats: 9 } },
    });
    w.append({
      type: 'fs.changed',
      stepId: 2,
      payload: { path: 'notes.txt', op: 'modify', before: entry('todo'), after: entry('booked') },
    });
  });
  step(3, () => {
    w.append({ type: 'fs.changed', stepId: 3, payload: { path: 'tmp/scratch', op: 'delete', before: entry('x') } });
    w.append({
      type: 'db.changed',
      stepId: 3,
      payload: { schema: 'public', table: 'flights', op: 'delete', key: { id: 10 }, before: { id: 10, seats: 0 } },
    });
  });
  const post = {
    fs: { files: { 'notes.txt': entry('booked'), 'out/ticket.txt': entry('ticket 1') } },
    db: {
      ...pre.db,
      tables: [
        {
          ...pre.db.tables[0]!,
          rows: [
            { id: 1, seats: 2 },
            { id: 5, seats: 9 },
          ],
        },
      ],
    },
  };
  w.writeSnapshot('post', post);
  await w.close('complete');
  return { rec: await readRecording(dir), post };
}

describe('worldAt', () => {
  it('is the pre snapshot before any step', async () => {
    const { rec } = await bookingRecording();
    expect(worldAt(rec, 0)).toEqual({ fs: rec.pre.fs, db: rec.pre.db });
    expect(worldAt(rec, -1)).toEqual({ fs: rec.pre.fs, db: rec.pre.db });
  });

  it('applies the changes of each step in order', async () => {
    const { rec } = await bookingRecording();
    expect(Object.keys(worldAt(rec, 1).fs.files)).toEqual(['notes.txt', 'out/ticket.txt', 'tmp/scratch']);
    const two = worldAt(rec, 2);
    expect(two.fs.files['notes.txt']).toEqual(entry('booked'));
    expect(two.db?.tables[0]?.rows).toEqual([
      { id: 1, seats: 2 },
      { id: 5, seats: 9 },
      { id: 10, seats: 0 },
    ]);
  });

  it('equals the post snapshot at the last step, and does not change the recording', async () => {
    const { rec, post } = await bookingRecording();
    expect(worldAt(rec, 3)).toEqual(post);
    expect(worldAt(rec, 99)).toEqual({ fs: rec.post.fs, db: rec.post.db });
    expect(rec.pre.db?.tables[0]?.rows).toHaveLength(2);
    expect(Object.keys(rec.pre.fs?.files ?? {})).toEqual(['notes.txt', 'tmp/scratch']);
  });
});
