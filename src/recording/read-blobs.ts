// A recording's blobs: read on demand and verified against their name, every blob hashed while
// reading (by default), and references to blobs the recording lacks listed as warnings.
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { blobRelativePath, isSha256, sha256Hex } from './blobs.js';
import { RecordingError } from './errors.js';
import { formatFieldPath } from './field-path.js';
import { fileBytes, isInline } from './file-content.js';
import { MAX_BLOB_BYTES, parentsAreFolders, readInsideSync } from './read-files.js';
import type { FileEntry, FsSnapshot, RecordingEvent } from './types.js';

/**
 * `inline`: the recording's file entries that hold their bytes (checked against their sha256 when
 * read), so that readBlob finds every file's bytes by sha256, inline or not.
 */
export function blobReader(
  dir: string,
  inline: ReadonlyMap<string, FileEntry> = new Map(),
): {
  readBlob(sha256: string): Buffer;
  verify(sha256: string, bytes: Buffer): void;
} {
  const verified = new Set<string>();
  function verify(sha256: string, bytes: Buffer): void {
    const actual = sha256Hex(bytes);
    if (actual !== sha256) {
      throw new RecordingError(
        { dir, file: blobRelativePath(sha256), field: 'sha256' },
        `content hashes to ${actual}, not to its name`,
        'the blob was changed or damaged after recording',
      );
    }
    verified.add(sha256);
  }
  function readBlob(sha256: string): Buffer {
    if (!isSha256(sha256)) {
      throw new RecordingError(
        { dir, file: 'blobs/sha256', field: 'blob' },
        `${JSON.stringify(sha256)} is not a sha256`,
      );
    }
    const entry = inline.get(sha256);
    if (entry !== undefined) return Buffer.from(fileBytes(entry, readBlob)); // inline: readBlob is not called again
    const file = blobRelativePath(sha256);
    const bytes = readInsideSync(dir, file, MAX_BLOB_BYTES);
    if (bytes === undefined) {
      throw new RecordingError({ dir, file, field: 'blob' }, 'is missing', 'an event or snapshot refers to it');
    }
    if (!verified.has(sha256)) verify(sha256, bytes);
    return bytes;
  }
  return { readBlob, verify };
}

/** Hashes every blob under blobs/ and returns the set of those present. */
export async function verifyAllBlobs(dir: string, blobs: ReturnType<typeof blobReader>): Promise<Set<string>> {
  const present = new Set<string>();
  const root = join(dir, 'blobs', 'sha256');
  let prefixes: Dirent[];
  try {
    if (!parentsAreFolders(dir, 'blobs/sha256/x')) return present;
    prefixes = await readdir(root, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return present;
    throw error;
  }
  for (const prefix of prefixes) {
    if (prefix.name.startsWith('.')) continue;
    if (!prefix.isDirectory() || !/^[0-9a-f]{2}$/.test(prefix.name)) {
      throw new RecordingError(
        { dir, file: `blobs/sha256/${prefix.name}`, field: 'sha256' },
        'is not a blob directory',
        'blob directories are named by the first 2 hex digits of the sha256',
      );
    }
    for (const entry of await readdir(join(root, prefix.name), { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue; // a writer's temporary file
      const sha256 = prefix.name + entry.name;
      if (!entry.isFile() || !isSha256(sha256)) {
        throw new RecordingError(
          { dir, file: `blobs/sha256/${prefix.name}/${entry.name}`, field: 'sha256' },
          'is not a blob (blobs are files named by the other 62 hex digits of their sha256)',
        );
      }
      const bytes = readInsideSync(dir, `blobs/sha256/${prefix.name}/${entry.name}`, MAX_BLOB_BYTES);
      if (bytes !== undefined) blobs.verify(sha256, bytes);
      present.add(sha256);
    }
  }
  return present;
}

/** Blob references (bodies, file contents not inline) whose blob is not in the recording: warnings, not errors. */
export function missingBlobs(
  events: RecordingEvent[],
  snapshots: Array<[string, FsSnapshot | undefined]>,
  present: Set<string>,
): string[] {
  const out: string[] = [];
  const check = (sha256: string | undefined, where: string) => {
    if (sha256 !== undefined && !present.has(sha256)) out.push(`${where}: blob ${sha256} is missing`);
  };
  const checkFile = (entry: FileEntry | undefined, where: string) => {
    if (entry !== undefined && !isInline(entry)) check(entry.sha256, where);
  };
  events.forEach((event, index) => {
    const at = `events.jsonl:${index + 1}: field payload`;
    if (event.type === 'http.exchange') {
      check(event.payload.request.body?.blob, `${at}.request.body.blob`);
      check(event.payload.response?.body?.blob, `${at}.response.body.blob`);
    } else if (event.type === 'websocket.exchange') {
      check(event.payload.sent?.body?.blob, `${at}.sent.body.blob`);
      for (const [i, m] of event.payload.received.entries()) check(m.body?.blob, `${at}.received[${i}].body.blob`);
    } else if (event.type === 'tool.called') {
      check(event.payload.resultBody?.blob, `${at}.resultBody.blob`);
    } else if (event.type === 'fs.changed') {
      checkFile(event.payload.after, `${at}.after.sha256`);
    }
  });
  for (const [file, fs] of snapshots) {
    for (const [path, entry] of Object.entries(fs?.files ?? {}))
      checkFile(entry, `${file}: field ${formatFieldPath(['files', path])}`);
  }
  return out.length > 20 ? [...out.slice(0, 20), `… and ${out.length - 20} more missing blobs`] : out;
}

/** The file entries of the snapshots and fs.changed events that hold their bytes, by sha256. */
export function inlineFiles(
  events: RecordingEvent[],
  snapshots: Array<FsSnapshot | undefined>,
): Map<string, FileEntry> {
  const out = new Map<string, FileEntry>();
  const add = (entry: FileEntry | undefined) => {
    if (entry !== undefined && isInline(entry)) out.set(entry.sha256, entry);
  };
  for (const fs of snapshots) for (const entry of Object.values(fs?.files ?? {})) add(entry);
  for (const event of events) {
    if (event.type !== 'fs.changed') continue;
    add(event.payload.before);
    add(event.payload.after);
  }
  return out;
}
