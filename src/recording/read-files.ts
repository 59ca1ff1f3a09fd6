// The files of a recording, opened safely: never through a link, never a FIFO or device, within
// size and nesting limits; events.jsonl read in chunks, line by line. What the reader stands on.

import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { RecordingError } from './errors.js';
import { MAX_JSON_DEPTH, whyNotJson } from './json.js';

export { MAX_JSON_DEPTH };

/**
 * zod compiles a fast path for an object schema the first time it parses with it: worth it over
 * thousands of events, not for a manifest, a snapshot or a short recording, where compiling costs
 * more than it saves (~5% of `tapedeck ledger`'s start-up). Those are validated without it.
 */
export const PARSE_ONCE = { jitless: true } as const;

/** A line of events.jsonl longer than this is refused (a hostile file must not exhaust memory). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** manifest.json and snapshot files larger than this are refused. */
export const MAX_JSON_FILE_BYTES = 512 * 1024 * 1024;
/** A blob larger than this is refused (bodies and file contents are read whole). */
export const MAX_BLOB_BYTES = 512 * 1024 * 1024;
/** events.jsonl holding more events than this is refused. */
export const MAX_EVENTS = 2_000_000;

// A symlink in place of a file is refused (O_NOFOLLOW), and a FIFO does not block the open.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

function jsonErrorPosition(text: string, error: unknown): number {
  const match = /position (\d+)/.exec(String((error as Error).message));
  return match ? Number(match[1]) : text.length;
}

function jsonErrorLine(text: string, error: unknown): number {
  return text.slice(0, jsonErrorPosition(text, error)).split('\n').length;
}

/**
 * What is wrong with JSON text that JSON.parse refused, on one line: text that stops where a value
 * still had to go on was cut (a writer killed mid-write, a truncated copy), said as such.
 * @example jsonProblem('{"a": [1, 2', error) // 'is cut off: it ends mid-value after 11 bytes (…)'
 */
export function jsonProblem(text: string, error: unknown): string {
  if (jsonErrorPosition(text, error) >= text.trimEnd().length) {
    return `is cut off: it ends mid-value after ${Buffer.byteLength(text)} bytes (truncated, or its writer stopped mid-write)`;
  }
  return `is not valid JSON: ${whyNotJson(error)}`;
}

/** A FIFO or device in place of a file would hang or flood the reader: refuse it by name. */
function notAFile(dir: string, file: string): RecordingError {
  return new RecordingError(
    { dir, file },
    'is not a regular file',
    'a FIFO, device or directory cannot be part of a recording',
  );
}

function aLink(dir: string, file: string): RecordingError {
  return new RecordingError(
    { dir, file },
    'is a symbolic link',
    'the files of a recording are read as they are, never through a link to somewhere else',
  );
}

/**
 * Checks the folders between the recording directory and `file` (snapshots/pre, blobs/sha256/ab):
 * each must be a real folder, not a link. False when one is missing.
 */
export function parentsAreFolders(dir: string, file: string): boolean {
  const parts = file.split('/');
  for (let i = 1; i < parts.length; i++) {
    const rel = parts.slice(0, i).join('/');
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(join(dir, rel));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    if (info.isSymbolicLink()) throw aLink(dir, rel);
    if (!info.isDirectory()) throw notAFile(dir, rel);
  }
  return true;
}

function openError(dir: string, file: string, error: unknown): never {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') throw aLink(dir, file);
  if (code === 'EACCES') throw new RecordingError({ dir, file }, 'cannot be read (permission denied)');
  if (code === 'EISDIR' || code === 'ENXIO') throw notAFile(dir, file);
  throw error;
}

/** Opens a file of the recording: never through a link, never a FIFO or device; undefined when missing. */
export async function openInside(dir: string, file: string): Promise<{ handle: FileHandle; size: number } | undefined> {
  if (!parentsAreFolders(dir, file)) return undefined;
  let handle: FileHandle;
  try {
    handle = await open(join(dir, file), OPEN_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    openError(dir, file, error);
  }
  const info = await handle.stat();
  if (!info.isFile()) {
    await handle.close();
    throw notAFile(dir, file);
  }
  return { handle, size: info.size };
}

/** The bytes of a file of the recording (sync: blobs are read on demand by the engines). */
export function readInsideSync(dir: string, file: string, max: number): Buffer | undefined {
  if (!parentsAreFolders(dir, file)) return undefined;
  let fd: number;
  try {
    fd = openSync(join(dir, file), OPEN_FLAGS);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    openError(dir, file, error);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw notAFile(dir, file);
    if (info.size > max)
      throw new RecordingError({ dir, file }, `is ${info.size} bytes, more than the ${max}-byte limit`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether JSON text nests deeper than `max` (arrays and objects), found by scanning the text so
 * that nothing recursive ever sees it.
 */
export function jsonDepthExceeds(text: string, max: number = MAX_JSON_DEPTH): boolean {
  // A line this short cannot nest this deep.
  if (text.length <= max * 2) return false;
  // Nor can one with at most `max` opening brackets (found by the engine's own search, many times
  // faster than the walk below, which most lines then never need).
  let opening = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1 && opening <= max; at = text.indexOf(bracket, at + 1)) opening++;
  }
  if (opening <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

export function tooDeep(where: { dir: string; file: string; line?: number }): RecordingError {
  return new RecordingError(
    { ...where, field: '(json)' },
    `nests deeper than ${MAX_JSON_DEPTH} levels`,
    'tapedeck never writes values this deep; the file is damaged or hostile',
  );
}

export async function readJsonFile(dir: string, file: string): Promise<{ text: string; value: unknown } | undefined> {
  const opened = await openInside(dir, file);
  if (!opened) return undefined;
  let text: string;
  try {
    if (opened.size > MAX_JSON_FILE_BYTES) {
      throw new RecordingError(
        { dir, file },
        `is ${opened.size} bytes, more than the ${MAX_JSON_FILE_BYTES}-byte limit`,
      );
    }
    const bytes = await opened.handle.readFile();
    if (!isUtf8(bytes)) throw notUtf8(dir, file);
    text = bytes.toString('utf8');
  } finally {
    await opened.handle.close();
  }
  if (jsonDepthExceeds(text)) throw tooDeep({ dir, file });
  try {
    return { text, value: JSON.parse(text) };
  } catch (error) {
    throw new RecordingError(
      { dir, file, line: jsonErrorLine(text, error), field: '(json)' },
      jsonProblem(text, error),
    );
  }
}

interface ScanResult {
  lines: number;
  sha256: string;
  /** Bytes after the last newline, if any. */
  partial?: { line: number; text: string; bytes: number; utf8: boolean };
}

/** Bytes that are not UTF-8: the writer never writes them, and decoding would change them silently. */
export function notUtf8(dir: string, file: string, line?: number): RecordingError {
  return new RecordingError(
    { dir, file, ...(line === undefined ? {} : { line }), field: '(bytes)' },
    'is not valid UTF-8',
    'tapedeck writes UTF-8 JSON only; the file is damaged or hostile',
  );
}

/** Reads events.jsonl in chunks, calling onLine for each complete line; refuses lines above maxLine bytes. */
export async function scanLines(
  dir: string,
  file: string,
  maxLine: number,
  onLine: (text: string, line: number) => void,
): Promise<ScanResult | undefined> {
  const opened = await openInside(dir, file);
  if (!opened) return undefined;
  const { handle } = opened;
  const hash = createHash('sha256');
  const chunk = Buffer.allocUnsafe(1 << 20);
  let parts: Buffer[] = [];
  let partLen = 0;
  let line = 0;
  const tooLong = (n: number) =>
    new RecordingError(
      { dir, file, line: n, field: '(line)' },
      `is longer than ${maxLine} bytes`,
      'an event this large is not something tapedeck writes; the file is damaged or hostile',
    );
  try {
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      const data = chunk.subarray(0, bytesRead);
      hash.update(data);
      let start = 0;
      while (start < bytesRead) {
        const nl = data.indexOf(10, start);
        if (nl === -1) {
          partLen += bytesRead - start;
          if (partLen > maxLine) throw tooLong(line + 1);
          parts.push(Buffer.from(data.subarray(start)));
          break;
        }
        line++;
        if (line > MAX_EVENTS) {
          throw new RecordingError(
            { dir, file, line, field: '(line)' },
            `holds more than ${MAX_EVENTS} events`,
            'the file is damaged or hostile',
          );
        }
        const piece = data.subarray(start, nl);
        if (partLen + piece.length > maxLine) throw tooLong(line);
        const bytes = parts.length > 0 ? Buffer.concat([...parts, piece]) : piece;
        parts = [];
        partLen = 0;
        if (!isUtf8(bytes)) throw notUtf8(dir, file, line);
        onLine(bytes.toString('utf8'), line);
        start = nl + 1;
      }
    }
  } finally {
    await handle.close();
  }
  const result: ScanResult = { lines: line, sha256: hash.digest('hex') };
  if (partLen > 0) {
    const bytes = Buffer.concat(parts);
    result.partial = { line: line + 1, text: bytes.toString('utf8'), bytes: partLen, utf8: isUtf8(bytes) };
  }
  return result;
}
