// Writes an in-memory Recording to disk through the real writer, so list and e2e tests read
// recordings the way the CLI does.
import { createRecordingWriter, type Recording } from '../../src/recording/index.js';

export async function writeRecording(recording: Recording, dir: string): Promise<string> {
  const m = recording.manifest;
  const writer = await createRecordingWriter(dir, {
    id: m.id,
    name: m.name,
    agent: m.agent,
    runtime: m.runtime,
    createdAt: m.createdAt,
    ...(m.replayOf ? { replayOf: m.replayOf } : {}),
    ...(m.replay ? { replay: m.replay } : {}),
  });
  const hashes = new Set<string>();
  const fileHashes = (files: Record<string, { sha256: string }> | undefined) => {
    for (const f of Object.values(files ?? {})) hashes.add(f.sha256);
  };
  fileHashes(recording.pre.fs?.files);
  fileHashes(recording.post.fs?.files);
  for (const e of recording.events) if (e.type === 'fs.changed' && e.payload.after) hashes.add(e.payload.after.sha256);
  for (const h of hashes) writer.putBlob(recording.readBlob(h));
  writer.writeSnapshot('pre', recording.pre);
  for (const e of recording.events) {
    writer.append({
      type: e.type,
      stepId: e.stepId,
      ...(e.parentStepId !== undefined ? { parentStepId: e.parentStepId } : {}),
      time: e.time,
      payload: e.payload,
    } as Parameters<typeof writer.append>[0]);
  }
  writer.writeSnapshot('post', recording.post);
  await writer.close(m.status === 'complete' ? 'complete' : m.status === 'failed' ? 'failed' : 'incomplete');
  return writer.dir;
}
