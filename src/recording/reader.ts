// The recording reader: validates a recording directory line by line and reports a bad or hostile
// one as a RecordingError naming file, line and field, never a crash or a hang.
import { createHash } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readFileSync } from 'node:fs';
import { type FileHandle, open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';
import { blobRelativePath, isSha256, sha256Hex } from './blobs.js';
import { describeFromDdl } from './db-description.js';
import { RecordingError, TapedeckError } from './errors.js';
import { isRecord } from './json.js';
import { unsafePathReason } from './paths.js';
import {
  DbSnapshotSchema,
  EVENT_TYPES,
  EventEnvelopeSchema,
  FORMAT,
  FsSnapshotSchema,
  ManifestSchema,
  PAYLOAD_SCHEMAS,
} from './schema.js';
import type { DbSnapshot, DbTable, EventType, FsSnapshot, Manifest, Recording, RecordingEvent } from './types.js';

/** A line of events.jsonl longer than this is refused (a hostile file must not exhaust memory). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** manifest.json and snapshot files larger than this are refused. */
export const MAX_JSON_FILE_BYTES = 512 * 1024 * 1024;
/** A blob larger than this is refused (bodies and file contents are read whole). */
export const MAX_BLOB_BYTES = 512 * 1024 * 1024;
/**
 * JSON nested deeper than this is refused: every engine walks values recursively, and a value a
 * real agent exchanges is nowhere near this deep.
 */
export const MAX_JSON_DEPTH = 200;
/** events.jsonl holding more events than this is refused. */
export const MAX_EVENTS = 2_000_000;

// A symlink in place of a file is refused (O_NOFOLLOW), and a FIFO does not block the open.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export interface ReadOptions {
  /** Default MAX_LINE_BYTES. */
  maxLineBytes?: number;
  /** Hash every blob under blobs/ while reading (default true); readBlob always verifies. */
  verifyBlobs?: boolean;
}

const EVENT_TYPE_SET = new Set<string>(EVENT_TYPES);

/** `payload.request.headers["x-y"]`-style path of a zod issue. */
export function formatFieldPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out === '' ? '(root)' : out;
}

function issueField(issue: z.core.$ZodIssue, prefix: ReadonlyArray<PropertyKey> = []): string {
  const path = [...prefix, ...issue.path];
  if (issue.code === 'unrecognized_keys' && issue.keys.length > 0) path.push(issue.keys[0] as string);
  return formatFieldPath(path);
}

function issueProblem(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown field (${issue.keys.map((k) => JSON.stringify(k)).join(', ')})`;
  return issue.message;
}

/** The 1-based line of the last path segment found in a pretty-printed JSON text (best effort). */
function lineOf(text: string, path: ReadonlyArray<PropertyKey>): number {
  let pos = 0;
  for (const seg of path) {
    if (typeof seg !== 'string') continue;
    const at = text.indexOf(JSON.stringify(seg), pos);
    if (at >= 0) pos = at;
  }
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < pos; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function jsonErrorLine(text: string, error: unknown): number {
  const match = /position (\d+)/.exec(String((error as Error).message));
  return match ? text.slice(0, Number(match[1])).split('\n').length : 1;
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
function parentsAreFolders(dir: string, file: string): boolean {
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
async function openInside(dir: string, file: string): Promise<{ handle: FileHandle; size: number } | undefined> {
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
function readInsideSync(dir: string, file: string, max: number): Buffer | undefined {
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

function tooDeep(where: { dir: string; file: string; line?: number }): RecordingError {
  return new RecordingError(
    { ...where, field: '(json)' },
    `nests deeper than ${MAX_JSON_DEPTH} levels`,
    'tapedeck never writes values this deep; the file is damaged or hostile',
  );
}

async function readJsonFile(dir: string, file: string): Promise<{ text: string; value: unknown } | undefined> {
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
    text = await opened.handle.readFile('utf8');
  } finally {
    await opened.handle.close();
  }
  if (jsonDepthExceeds(text)) throw tooDeep({ dir, file });
  try {
    return { text, value: JSON.parse(text) };
  } catch (error) {
    throw new RecordingError(
      { dir, file, line: jsonErrorLine(text, error), field: '(json)' },
      `is not valid JSON: ${(error as Error).message}`,
    );
  }
}

/** A missing path or a file where a recording directory belongs is a user mistake: say so in one line. */
async function assertRecordingDir(dir: string): Promise<void> {
  let isDir: boolean;
  try {
    isDir = (await stat(dir)).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new TapedeckError(
        'NO_RECORDING',
        `${dir}: no such recording (expected a directory holding manifest.json and events.jsonl)`,
      );
    }
    if (code === 'EACCES') throw new TapedeckError('NO_RECORDING', `${dir}: permission denied`);
    throw error;
  }
  if (!isDir) {
    throw new TapedeckError(
      'NO_RECORDING',
      `${dir}: is a file, not a recording directory (a recording directory holds manifest.json and events.jsonl)`,
    );
  }
}

/** How many direct subfolders of dir hold a manifest.json (to tell a folder of recordings from a broken one). */
async function recordingsInside(dir: string): Promise<number> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && existsSync(join(dir, e.name, 'manifest.json'))).length;
  } catch {
    return 0;
  }
}

/** Reads and validates manifest.json. */
export async function readManifest(dir: string): Promise<Manifest> {
  await assertRecordingDir(dir);
  const file = 'manifest.json';
  const json = await readJsonFile(dir, file);
  if (!json) {
    const inside = await recordingsInside(dir);
    if (inside > 0) {
      throw new TapedeckError(
        'NO_RECORDING',
        `${dir} is a folder of ${inside} recording${inside === 1 ? '' : 's'}, not a recording: name them (e.g. ${join(dir, '*')})`,
      );
    }
    throw new RecordingError({ dir, file }, 'is missing', 'a recording directory holds manifest.json and events.jsonl');
  }
  const { text, value } = json;
  if (!isRecord(value)) throw new RecordingError({ dir, file, line: 1, field: '(root)' }, 'is not a JSON object');
  if (value.format !== FORMAT) {
    throw new RecordingError(
      { dir, file, line: lineOf(text, ['format']), field: 'format' },
      `unsupported recording format ${JSON.stringify(value.format)}`,
      `this tapedeck reads ${FORMAT}; record again or use a matching tapedeck version`,
    );
  }
  const parsed = ManifestSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0] as z.core.$ZodIssue;
    throw new RecordingError(
      { dir, file, line: lineOf(text, issue.path), field: issueField(issue) },
      issueProblem(issue),
    );
  }
  return parsed.data;
}

function parseEventLine(dir: string, text: string, line: number): RecordingEvent {
  const file = 'events.jsonl';
  if (text.trim() === '') throw new RecordingError({ dir, file, line, field: '(line)' }, 'is empty');
  if (jsonDepthExceeds(text)) throw tooDeep({ dir, file, line });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RecordingError({ dir, file, line, field: '(json)' }, `is not valid JSON: ${(error as Error).message}`);
  }
  if (!isRecord(value)) throw new RecordingError({ dir, file, line, field: '(line)' }, 'is not a JSON object');
  if (typeof value.type === 'string' && !EVENT_TYPE_SET.has(value.type)) {
    throw new RecordingError(
      { dir, file, line, field: 'type' },
      `unknown event type ${JSON.stringify(value.type.slice(0, 100))}`,
      `known types: ${EVENT_TYPES.join(', ')}`,
    );
  }
  const envelope = EventEnvelopeSchema.safeParse(value);
  if (!envelope.success) {
    const issue = envelope.error.issues[0] as z.core.$ZodIssue;
    throw new RecordingError({ dir, file, line, field: issueField(issue) }, issueProblem(issue));
  }
  const type = envelope.data.type as EventType;
  const payload = PAYLOAD_SCHEMAS[type].safeParse(value.payload);
  if (!payload.success) {
    const issue = payload.error.issues[0] as z.core.$ZodIssue;
    throw new RecordingError({ dir, file, line, field: issueField(issue, ['payload']) }, issueProblem(issue));
  }
  if (type === 'fs.changed') {
    const path = (value.payload as { path: string }).path;
    const reason = unsafePathReason(path);
    if (reason) {
      throw new RecordingError(
        { dir, file, line, field: 'payload.path' },
        `path ${JSON.stringify(path.slice(0, 200))} ${reason}`,
      );
    }
  }
  return value as unknown as RecordingEvent;
}

interface ScanResult {
  lines: number;
  sha256: string;
  /** Bytes after the last newline, if any. */
  partial?: { line: number; text: string; bytes: number };
}

/** Reads events.jsonl in chunks, calling onLine for each complete line; refuses lines above maxLine bytes. */
async function scanLines(
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
        onLine(bytes.toString('utf8'), line);
        start = nl + 1;
      }
    }
  } finally {
    await handle.close();
  }
  const result: ScanResult = { lines: line, sha256: hash.digest('hex') };
  if (partLen > 0) result.partial = { line: line + 1, text: Buffer.concat(parts).toString('utf8'), bytes: partLen };
  return result;
}

/** Names that must be unique, and columns that must exist: what seeding a sandbox relies on. */
function checkDbSnapshot(db: DbSnapshot): { path: Array<string | number>; problem: string } | undefined {
  const tables = new Map<string, DbTable>();
  const schemas = new Set(db.schemas);
  for (const [i, table] of db.tables.entries()) {
    const key = JSON.stringify([table.schema, table.name]);
    if (tables.has(key))
      return { path: ['tables', i, 'name'], problem: `table ${table.schema}.${table.name} is listed twice` };
    tables.set(key, table);
    if (!schemas.has(table.schema)) {
      return { path: ['tables', i, 'schema'], problem: `schema ${JSON.stringify(table.schema)} is not in "schemas"` };
    }
    const columns = new Set<string>();
    for (const [c, column] of table.columns.entries()) {
      if (columns.has(column.name))
        return { path: ['tables', i, 'columns', c, 'name'], problem: 'the column is listed twice' };
      columns.add(column.name);
    }
    const lists: Array<[Array<string | number>, string[]]> = [[['primaryKey'], table.primaryKey]];
    for (const [u, unique] of (table.unique ?? []).entries()) lists.push([['unique', u, 'columns'], unique.columns]);
    for (const [x, index] of (table.indexes ?? []).entries()) lists.push([['indexes', x, 'columns'], index.columns]);
    for (const [f, fk] of (table.foreignKeys ?? []).entries()) lists.push([['foreignKeys', f, 'columns'], fk.columns]);
    for (const [path, names] of lists) {
      const missing = names.find((n) => !columns.has(n));
      if (missing !== undefined)
        return { path: ['tables', i, ...path], problem: `no column named ${JSON.stringify(missing)}` };
    }
  }
  const sequences = new Set<string>();
  for (const [i, seq] of (db.sequences ?? []).entries()) {
    const key = JSON.stringify([seq.schema, seq.name]);
    if (sequences.has(key)) return { path: ['sequences', i, 'name'], problem: 'the sequence is listed twice' };
    sequences.add(key);
    if (!schemas.has(seq.schema))
      return { path: ['sequences', i, 'schema'], problem: 'the schema is not in "schemas"' };
  }
  return undefined;
}

interface Snapshots {
  fs?: FsSnapshot;
  db?: DbSnapshot;
}

async function readSnapshot(dir: string, which: 'pre' | 'post', warnings: string[]): Promise<Snapshots> {
  const out: Snapshots = {};
  const fsFile = `snapshots/${which}/fs.json`;
  const fsJson = await readJsonFile(dir, fsFile);
  if (fsJson) {
    const parsed = FsSnapshotSchema.safeParse(fsJson.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0] as z.core.$ZodIssue;
      throw new RecordingError(
        { dir, file: fsFile, line: lineOf(fsJson.text, issue.path), field: issueField(issue) },
        issueProblem(issue),
      );
    }
    for (const path of Object.keys(parsed.data.files)) {
      const reason = unsafePathReason(path);
      if (reason) {
        throw new RecordingError(
          { dir, file: fsFile, line: lineOf(fsJson.text, ['files', path]), field: formatFieldPath(['files', path]) },
          `path ${JSON.stringify(path.slice(0, 200))} ${reason}`,
        );
      }
    }
    out.fs = parsed.data;
  }
  const dbFile = `snapshots/${which}/db.json`;
  const dbJson = await readJsonFile(dir, dbFile);
  if (dbJson) {
    const parsed = DbSnapshotSchema.safeParse(dbJson.value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0] as z.core.$ZodIssue;
      throw new RecordingError(
        { dir, file: dbFile, line: lineOf(dbJson.text, issue.path), field: issueField(issue) },
        issueProblem(issue),
      );
    }
    // A recording made before db.json carried the schema description: derived from its ddl text.
    const { snapshot, ignored } = describeFromDdl(parsed.data);
    const bad = checkDbSnapshot(snapshot);
    if (bad) {
      throw new RecordingError(
        { dir, file: dbFile, line: lineOf(dbJson.text, bad.path), field: formatFieldPath(bad.path) },
        bad.problem,
      );
    }
    if (ignored.length > 0) {
      warnings.push(
        `${dbFile}: ${ignored.length} ddl statement(s) outside the schema description were ignored (ddl[${ignored.slice(0, 5).join('], ddl[')}]${ignored.length > 5 ? ', …' : ''}); a sandbox is built from the description, never by running recorded SQL`,
      );
    }
    out.db = snapshot;
  }
  return out;
}

function blobReader(dir: string): { readBlob(sha256: string): Buffer; verify(sha256: string, bytes: Buffer): void } {
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
async function verifyAllBlobs(dir: string, blobs: ReturnType<typeof blobReader>): Promise<Set<string>> {
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

/** Blob references (bodies, file contents) whose blob is not in the recording: warnings, not errors. */
function missingBlobs(
  events: RecordingEvent[],
  snapshots: Array<[string, FsSnapshot | undefined]>,
  present: Set<string>,
): string[] {
  const out: string[] = [];
  const check = (sha256: string | undefined, where: string) => {
    if (sha256 !== undefined && !present.has(sha256)) out.push(`${where}: blob ${sha256} is missing`);
  };
  events.forEach((event, index) => {
    const at = `events.jsonl:${index + 1}: field payload`;
    if (event.type === 'http.exchange') {
      check(event.payload.request.body?.blob, `${at}.request.body.blob`);
      check(event.payload.response?.body?.blob, `${at}.response.body.blob`);
    } else if (event.type === 'tool.called') {
      check(event.payload.resultBody?.blob, `${at}.resultBody.blob`);
    } else if (event.type === 'fs.changed') {
      check(event.payload.after?.sha256, `${at}.after.sha256`);
    }
  });
  for (const [file, fs] of snapshots) {
    for (const [path, entry] of Object.entries(fs?.files ?? {}))
      check(entry.sha256, `${file}: field ${formatFieldPath(['files', path])}`);
  }
  return out.length > 20 ? [...out.slice(0, 20), `… and ${out.length - 20} more missing blobs`] : out;
}

/**
 * Reads and validates a recording directory. Throws RecordingError naming file, line and field
 * for anything malformed. An `incomplete` recording's cut-off last line is skipped and reported
 * in `warnings`.
 */
export async function readRecording(dir: string, options: ReadOptions = {}): Promise<Recording> {
  const manifest = await readManifest(dir);
  const events: RecordingEvent[] = [];
  const warnings: string[] = [];
  let lastSeq = -1;
  const file = 'events.jsonl';
  const push = (text: string, line: number) => {
    const event = parseEventLine(dir, text, line);
    if (event.seq <= lastSeq) {
      throw new RecordingError(
        { dir, file, line, field: 'seq' },
        `seq ${event.seq} does not follow ${lastSeq}`,
        'events are appended in increasing seq order',
      );
    }
    lastSeq = event.seq;
    events.push(event);
  };
  const scan = await scanLines(dir, file, options.maxLineBytes ?? MAX_LINE_BYTES, push);
  if (!scan)
    throw new RecordingError({ dir, file }, 'is missing', 'a recording directory holds manifest.json and events.jsonl');
  if (scan.partial) {
    const { line, bytes } = scan.partial;
    if (manifest.status === 'incomplete') {
      warnings.push(
        `${file}:${line}: ignored a cut-off last line (${bytes} bytes without a newline): the writer stopped mid-write`,
      );
    } else {
      push(scan.partial.text, line);
      warnings.push(`${file}:${line}: the last line has no newline`);
    }
  }
  const { eventsSha256, events: count } = manifest.integrity;
  if (eventsSha256 !== undefined && eventsSha256 !== scan.sha256) {
    throw new RecordingError(
      { dir, file, field: 'integrity.eventsSha256' },
      `hashes to ${scan.sha256}, but manifest.json says ${eventsSha256}`,
      'events.jsonl was changed or cut after the recording was closed',
    );
  }
  if (eventsSha256 !== undefined && count !== events.length) {
    throw new RecordingError(
      { dir, file: 'manifest.json', field: 'integrity.events' },
      `says ${count} events, but events.jsonl holds ${events.length}`,
    );
  }
  // Step numbers bound the engines' loops (every step from 1 to the last): no more steps than events a recording may hold.
  for (const [index, event] of events.entries()) {
    const step = Math.max(event.stepId, event.parentStepId ?? 0);
    if (step > MAX_EVENTS) {
      throw new RecordingError(
        { dir, file, line: index + 1, field: step === event.stepId ? 'stepId' : 'parentStepId' },
        `step ${step} is past the ${MAX_EVENTS}-step limit`,
        'steps count from 1; a number this large is damage or a hostile edit',
      );
    }
  }
  if (manifest.status === 'incomplete') warnings.push(incompleteWarning(events.at(-1)));
  const [pre, post] = [await readSnapshot(dir, 'pre', warnings), await readSnapshot(dir, 'post', warnings)];
  const blobs = blobReader(dir);
  if (options.verifyBlobs ?? true) {
    const present = await verifyAllBlobs(dir, blobs);
    const snapshots: Array<[string, FsSnapshot | undefined]> = [
      ['snapshots/pre/fs.json', pre.fs],
      ['snapshots/post/fs.json', post.fs],
    ];
    warnings.push(...missingBlobs(events, snapshots, present));
  }
  return { dir, manifest, events, pre, post, readBlob: blobs.readBlob, warnings };
}

/** Why a recording is incomplete: the agent ended early (the run was closed), or nothing closed it. */
function incompleteWarning(last: RecordingEvent | undefined): string {
  if (last?.type !== 'run.completed')
    return 'the recording is incomplete: the writer did not close it (killed or still running)';
  const { exitCode, signal } = last.payload;
  const how = signal ? `was stopped by ${signal}` : `exited with code ${exitCode ?? 'unknown'}`;
  return `the recording is incomplete: the agent ${how} before its run finished (the recording is closed)`;
}

export interface ListOptions {
  /** How many directory levels below root to look (default 3). */
  depth?: number;
  /** Called for a directory whose manifest.json is invalid (default: skip it silently). */
  onError?: (error: RecordingError) => void;
}

/**
 * Finds recordings (directories holding a valid manifest.json) under root, oldest first.
 * A missing root gives an empty list.
 */
export async function listRecordings(
  root: string,
  options: ListOptions = {},
): Promise<Array<{ dir: string; manifest: Manifest }>> {
  const found: Array<{ dir: string; manifest: Manifest }> = [];
  async function walk(dir: string, depth: number): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') return;
      throw error;
    }
    if (entries.some((e) => e.isFile() && e.name === 'manifest.json')) {
      try {
        found.push({ dir, manifest: await readManifest(dir) });
      } catch (error) {
        if (!(error instanceof RecordingError)) throw error;
        options.onError?.(error);
      }
      return;
    }
    if (depth <= 0) return;
    for (const entry of entries) {
      if (entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules') {
        await walk(join(dir, entry.name), depth - 1);
      }
    }
  }
  await walk(root, options.depth ?? 3);
  return found.sort((a, b) =>
    a.manifest.createdAt === b.manifest.createdAt
      ? a.dir.localeCompare(b.dir)
      : a.manifest.createdAt < b.manifest.createdAt
        ? -1
        : 1,
  );
}
