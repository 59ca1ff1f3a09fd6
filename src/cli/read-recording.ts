// How a command reads the recording it was given (a folder, or <store>/<id>): through the recording
// reader, and what it read up to said on stderr — an incomplete recording is read to its last whole
// line, with a warning each reading command prints alike (docs/recording-format.md "Cut recordings").
import { type ReadOptions, readRecording } from '../recording/reader.js';
import type { Recording } from '../recording/types.js';
import { localRecording } from '../store/recordings/index.js';
import { writeErr } from './output.js';

/** The recording `ref` names, read and validated (`options`: as readRecording's); its warnings printed. */
export async function readGivenRecording(ref: string, options: ReadOptions = {}): Promise<Recording> {
  const recording = await readRecording(await localRecording(ref), options);
  printWarnings(ref, recording);
  return recording;
}

/** A recording's reading warnings on stderr, one `tapedeck: warning:` line each, named by what the user gave. */
export function printWarnings(name: string, recording: Pick<Recording, 'warnings'>): void {
  for (const w of recording.warnings) writeErr(`tapedeck: warning: ${name}: ${w}\n`);
}
