// The texts a world holds, as every engine that reads a file's words gets them: a file's content
// (inline in its entry, else its blob through the recording's blob reader; binary files have none,
// larger ones are not read) and what changed between two worlds (eval's written values, bisect's claims).
import { canonicalJson, type DbSnapshot, type FileEntry, type FsSnapshot, fileBytes } from '../recording/index.js';

/** Files larger than this (bytes) are not read as text by default: their path is all a reader gets. */
export const MAX_TEXT_BYTES = 1 << 20;

type ReadBlob = (sha256: string) => Uint8Array;
/** Where blobs are read from: a Recording. */
export interface BlobSource {
  readBlob(sha256: string): Uint8Array;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** utf8 text, or null when the bytes look binary (a NUL byte in the first 8 KiB, or invalid utf8). */
export function decodeText(bytes: Uint8Array): string | null {
  const probe = Math.min(bytes.length, 8192);
  for (let i = 0; i < probe; i++) if (bytes[i] === 0) return null;
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * A file's text: its inline content, else its blob read through `readBlob` (a recording's
 * `readBlob`: verified). null when the bytes are binary; undefined when the file is larger than
 * `maxBytes` or its blob is not stored.
 * @example fileText(change.after, (sha) => recording.readBlob(sha)) // '{"id":"ORD-1003"}'
 */
export function fileText(entry: FileEntry, readBlob: ReadBlob, maxBytes = MAX_TEXT_BYTES): string | null | undefined {
  if (entry.size > maxBytes) return undefined;
  let bytes: Uint8Array;
  try {
    bytes = fileBytes(entry, readBlob);
  } catch {
    return undefined;
  }
  return decodeText(bytes);
}

/** The two worlds' parts changedTexts compares (bisect's World, a snapshot). */
export interface WorldTexts {
  fs?: FsSnapshot;
  db?: DbSnapshot;
}

/**
 * The text of everything that differs between two worlds: each changed file's path and its
 * changed lines (all of a created file's, all a deleted file had, the lines a modified one gained
 * or lost), and each inserted, updated or deleted row with its table. Binary and oversized files
 * give their path only. What a claim of a change ("order ORD-1003 placed") is looked up in.
 */
export function changedTexts(before: WorldTexts, after: WorldTexts, blobs: BlobSource): string[] {
  const out: string[] = [];
  const a = before.fs?.files ?? {};
  const b = after.fs?.files ?? {};
  const text = cachedText(blobs);
  for (const path of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const was = a[path];
    const now = b[path];
    if (was?.sha256 === now?.sha256) continue;
    out.push(path);
    const wasText = was === undefined ? undefined : text(was);
    const nowText = now === undefined ? undefined : text(now);
    out.push(...changedLines(wasText ?? undefined, nowText ?? undefined));
  }
  out.push(...changedRows(before.db, after.db));
  return out;
}

/** The lines one text has that the other has not (both ways); a whole text when the other is absent. */
function changedLines(was: string | undefined, now: string | undefined): string[] {
  if (was === undefined) return now === undefined ? [] : [now];
  if (now === undefined) return [was];
  const wasLines = new Set(was.split('\n'));
  const nowLines = new Set(now.split('\n'));
  const changed = [
    ...[...nowLines].filter((l) => !wasLines.has(l)),
    ...[...wasLines].filter((l) => !nowLines.has(l)),
  ].filter((l) => l.trim() !== '');
  return changed.length > 0 ? [changed.join('\n')] : [];
}

function changedRows(before: DbSnapshot | undefined, after: DbSnapshot | undefined): string[] {
  const texts = (db: DbSnapshot | undefined): Set<string> => {
    const s = new Set<string>();
    for (const table of db?.tables ?? [])
      for (const row of table.rows) s.add(`${table.schema}.${table.name} ${canonicalJson(row)}`);
    return s;
  };
  const a = texts(before);
  const b = texts(after);
  return [...[...b].filter((t) => !a.has(t)), ...[...a].filter((t) => !b.has(t))];
}

// A file's text by sha256, read once per recording: a bisection reads the same changed files at every probe.
const texts = new WeakMap<BlobSource, Map<string, string | null | undefined>>();

function cachedText(blobs: BlobSource): (entry: FileEntry) => string | null | undefined {
  let known = texts.get(blobs);
  if (known === undefined) texts.set(blobs, (known = new Map()));
  const cache = known;
  return (entry) => {
    if (cache.has(entry.sha256)) return cache.get(entry.sha256);
    const text = fileText(entry, (sha) => blobs.readBlob(sha));
    cache.set(entry.sha256, text);
    return text;
  };
}
