// The RecordingStore contract: where recordings live so that workers on other machines can reach
// them. A backend stores a recording folder's files and gives them back; the recording itself is
// always read through the recording reader (with its limits) from a local folder.
import type { Manifest } from '../../recording/types.js';

export interface StoredRecording {
  id: string;
  /** The recording's reference: `<store url>/<id>`, what every command takes. */
  url: string;
  manifest: Manifest;
}

export interface PutResult {
  id: string;
  url: string;
  files: number;
  bytes: number;
  /** Files whose content the store already held (from this or another recording). */
  reused: number;
  /** False when the store already held this recording, byte for byte. */
  added: boolean;
}

export interface RecordingStore {
  /** The store's URL without credentials, e.g. `pg://postgres@db:5432/evals` or `file:///srv/recordings`. */
  readonly url: string;
  list(): Promise<StoredRecording[]>;
  /** Stores a local recording folder under its manifest id. A different recording with that id is refused. */
  put(dir: string): Promise<PutResult>;
  /** sha256 over the recording's files (each path and its content's sha256); undefined when the store has no such recording. */
  contentHash(id: string): Promise<string | undefined>;
  /** Writes the recording's files into `dir`, which must not exist yet. */
  copyTo(id: string, dir: string): Promise<void>;
  /** The recording's folder when it is on this disk already (a folder store): read in place, not copied. */
  localPath?(id: string): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Opens the store a URL names (without a recording id). */
export type StoreOpener = (url: URL) => Promise<RecordingStore>;
