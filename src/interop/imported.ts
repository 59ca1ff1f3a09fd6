// What both importers (OTLP, HAR) do with the recording they write from another tool's file, which
// is untrusted input: if writing fails, nothing they made is left where the user asked for the
// recording (no half recording, no temp folder; what an existing --out folder held stays); what
// was written is read back as every command reads it, so an import never leaves a recording that
// the other commands refuse.
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isTapedeckError, TapedeckError } from '../recording/errors.js';
import {
  createRecordingWriter,
  type Recording,
  type RecordingWriter,
  readRecording,
  removeRecordingFolder,
  type WriterInit,
} from '../recording/index.js';

/**
 * Starts a recording in `out`, runs `write` (which appends and closes the writer), then reads the
 * recording back and returns it. On any failure what the import made is removed and the error
 * passed on; a recording that does not read back is a BAD_IMPORT naming why.
 */
export async function writeImported(
  out: string,
  init: WriterInit,
  write: (writer: RecordingWriter) => Promise<void>,
): Promise<Recording> {
  const before = await namesIn(out);
  const writer = await createRecordingWriter(out, init);
  try {
    await write(writer);
    try {
      return await readRecording(writer.dir);
    } catch (error) {
      if (!isTapedeckError(error)) throw error;
      throw new TapedeckError(
        'BAD_IMPORT',
        `the imported recording does not read back (${error.message}); nothing was kept`,
      );
    }
  } catch (error) {
    await writer.close('failed').catch(() => {});
    await removeMade(writer.dir, before).catch(() => {});
    throw error;
  }
}

async function namesIn(dir: string): Promise<Set<string> | undefined> {
  try {
    return new Set(await readdir(dir));
  } catch {
    return undefined;
  }
}

/** The folder, when the import made it; else only the entries it added to the folder the user had. */
async function removeMade(dir: string, before: Set<string> | undefined): Promise<void> {
  if (before === undefined) return removeRecordingFolder(dir);
  for (const name of await readdir(dir))
    if (!before.has(name)) await rm(join(dir, name), { recursive: true, force: true });
}
