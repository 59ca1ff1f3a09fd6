// The committed example recordings (made by the recorder from the example world) satisfy the contract.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  type AppendInput,
  createRecordingWriter,
  listRecordings,
  readRecording,
  worldAt,
} from '../../src/recording/index.js';
import { init, tempDir } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../recordings/examples', import.meta.url));
const names = (() => {
  try {
    return readdirSync(ROOT).filter((n) => !n.startsWith('.'));
  } catch {
    return [];
  }
})();

describe.skipIf(names.length === 0)('example recordings', () => {
  it('are all found by listRecordings', async () => {
    const list = await listRecordings(ROOT);
    expect(list.map((r) => r.manifest.id).sort()).toEqual([...names].sort());
  });

  for (const name of names) {
    it(`${name}: reads cleanly, worldAt(last) equals the post snapshot, and rewrites byte for byte`, async () => {
      const dir = join(ROOT, name);
      const rec = await readRecording(dir);
      expect(rec.warnings).toEqual([]);
      expect(rec.manifest.status).toBe('complete');

      const last = Math.max(0, ...rec.events.map((e) => e.stepId));
      const world = worldAt(rec, last);
      if (rec.post.fs) expect(world.fs).toEqual(rec.post.fs);
      if (rec.post.db) expect(world.db?.tables.map((t) => t.rows)).toEqual(rec.post.db.tables.map((t) => t.rows));

      // Redaction is a fixed point (nothing secret is left to find), and the writer's output is canonical.
      const traceId = rec.events[0]?.traceId ?? 'none';
      const out = join(tempDir(), name);
      const w = await createRecordingWriter(out, init(name, { traceId }));
      for (const event of rec.events) w.append(event as AppendInput);
      await w.close('complete');
      expect(readFileSync(join(out, 'events.jsonl'), 'utf8')).toBe(readFileSync(join(dir, 'events.jsonl'), 'utf8'));
    });
  }
});
