// A file entry's content: inline in the entry (text or base64, for small files) or the blob its
// sha256 names. Every reader of fs snapshots and changes gets a file's bytes through fileBytes.
import { isUtf8 } from 'node:buffer';
import type { FileEntry, FsSnapshot } from './types.js';

/** Where a file's bytes are kept: its sha256, and the bytes themselves when they are inline. */
export type FileContent = Pick<FileEntry, 'sha256' | 'text' | 'base64'>;

/** The entry's bytes: its inline content, else the blob of its sha256 (read through `readBlob`). */
export function fileBytes(entry: FileEntry, readBlob: (sha256: string) => Buffer | Uint8Array): Buffer | Uint8Array {
  if (entry.text !== undefined) return Buffer.from(entry.text, 'utf8');
  if (entry.base64 !== undefined) return Buffer.from(entry.base64, 'base64');
  return readBlob(entry.sha256);
}

/** Whether the entry carries its bytes (no blob file holds them). */
export function isInline(entry: FileEntry): boolean {
  return entry.text !== undefined || entry.base64 !== undefined;
}

/** What the file is (mode, size, sha256) without where its bytes are kept: equal for equal files however stored. */
export function fileIdentity(entry: FileEntry): FileEntry {
  return { mode: entry.mode, size: entry.size, sha256: entry.sha256 };
}

/** The snapshot's files by what they are (fileIdentity): two snapshots of the same files are equal however each kept its bytes. */
export function fsIdentity(fs: FsSnapshot | undefined): FsSnapshot {
  const files: FsSnapshot['files'] = {};
  for (const [path, entry] of Object.entries(fs?.files ?? {})) files[path] = fileIdentity(entry);
  return { files };
}

/** Bytes as inline content: text when they are UTF-8, else base64. */
export function inlineContent(bytes: Uint8Array): { text: string } | { base64: string } {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return isUtf8(buffer) ? { text: buffer.toString('utf8') } : { base64: buffer.toString('base64') };
}
