// The recording reader: validates a recording directory line by line and reports a bad or hostile
// one as a RecordingError naming file, line and field, never a crash or a hang. The files are
// opened by read-files.ts, the snapshots read by read-snapshots.ts, the blobs by read-blobs.ts.
import type { Dirent } from 'node:fs';
import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type * as z from 'zod';
import { RecordingError, TapedeckError } from './errors.js';
import { issueField, issueProblem, lineOf, schemaError } from './field-path.js';
import { type FsChangeAt, fsChangesClash } from './file-tree.js';
import { isRecord } from './json.js';
import { unsafePathReason } from './paths.js';
import { blobReader, inlineFiles, missingBlobs, verifyAllBlobs } from './read-blobs.js';
import {
  jsonDepthExceeds,
  jsonProblem,
  MAX_EVENTS,
  MAX_LINE_BYTES,
  notUtf8,
  PARSE_ONCE,
  readJsonFile,
  scanLines,
  tooDeep,
} from './read-files.js';
import { EVENT_TYPES, EventEnvelopeSchema, PAYLOAD_SCHEMAS } from './schema-events.js';
import { FORMAT, ManifestSchema } from './schema-manifest.js';
import { isStagingName, sweepStaging } from './staging.js';
import { stoppedWarning } from './stopped.js';
import type { EventType, FsSnapshot, Manifest, Recording, RecordingEvent } from './types.js';

/** Past this many lines of events.jsonl, zod's compiled fast path pays for itself (see PARSE_ONCE). */
const JIT_AFTER_LINES = 200;

export { formatFieldPath } from './field-path.js';
export { jsonDepthExceeds, MAX_LINE_BYTES } from './read-files.js';

export interface ReadOptions {
  /** Default MAX_LINE_BYTES. */
  maxLineBytes?: number;
  /** Hash every blob under blobs/ while reading (default true); readBlob always verifies. */
  verifyBlobs?: boolean;
  /** The manifest, already read from this recording by the caller (readManifest): not read again. */
  manifest?: Manifest;
  /**
   * Read the world snapshots (snapshots/pre and post: fs.json, db.json; default true). false: `pre`
   * and `post` are empty and the snapshot schemas are not even loaded, for a command that reads the
   * events alone (`ledger`): a database snapshot's validation is most of a small recording's read.
   */
  world?: boolean;
}

const EVENT_TYPE_SET = new Set<string>(EVENT_TYPES);
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
    return entries.filter(
      (e) => e.isDirectory() && !e.name.startsWith('.') && existsSync(join(dir, e.name, 'manifest.json')),
    ).length;
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
  const parsed = ManifestSchema.safeParse(value, PARSE_ONCE);
  if (!parsed.success) throw schemaError(dir, file, text, parsed.error);
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
    throw new RecordingError({ dir, file, line, field: '(json)' }, jsonProblem(text, error));
  }
  if (!isRecord(value)) throw new RecordingError({ dir, file, line, field: '(line)' }, 'is not a JSON object');
  if (typeof value.type === 'string' && !EVENT_TYPE_SET.has(value.type)) {
    throw new RecordingError(
      { dir, file, line, field: 'type' },
      `unknown event type ${JSON.stringify(value.type.slice(0, 100))}`,
      `known types: ${EVENT_TYPES.join(', ')}`,
    );
  }
  const ctx = line <= JIT_AFTER_LINES ? PARSE_ONCE : undefined;
  const envelope = EventEnvelopeSchema.safeParse(value, ctx);
  if (!envelope.success) {
    const issue = envelope.error.issues[0] as z.core.$ZodIssue;
    throw new RecordingError({ dir, file, line, field: issueField(issue) }, issueProblem(issue));
  }
  const type = envelope.data.type as EventType;
  const payload = PAYLOAD_SCHEMAS[type].safeParse(value.payload, ctx);
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

/**
 * Reads and validates a recording directory. Throws RecordingError naming file, line and field
 * for anything malformed. An `incomplete` recording's cut-off last line is skipped and reported
 * in `warnings`.
 */
export async function readRecording(dir: string, options: ReadOptions = {}): Promise<Recording> {
  const manifest = options.manifest ?? (await readManifest(dir));
  const events: RecordingEvent[] = [];
  const warnings: string[] = [];
  let lastSeq = -1;
  let traceId: string | undefined;
  const file = 'events.jsonl';
  const push = (text: string, line: number) => {
    const event = parseEventLine(dir, text, line);
    // Every event of a run repeats its trace id: one string for all (18 MB at 100k steps).
    if (event.traceId === traceId) event.traceId = traceId;
    else traceId = event.traceId;
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
  const { eventsSha256, events: count } = manifest.integrity;
  if (scan.partial) {
    const { line, bytes } = scan.partial;
    if (manifest.status === 'incomplete') {
      warnings.push(
        `${file}:${line}: ignored a cut-off last line (${bytes} bytes without a newline): the writer stopped mid-write`,
      );
    } else {
      try {
        if (!scan.partial.utf8) throw notUtf8(dir, file, line);
        push(scan.partial.text, line);
      } catch (error) {
        // A closed recording whose last line stops mid-event lost its tail after it was closed.
        if (error instanceof RecordingError && eventsSha256 !== undefined && events.length < count)
          throw lostTail(dir, manifest, events, scan.partial);
        throw error;
      }
      warnings.push(`${file}:${line}: the last line has no newline`);
    }
  }
  if (eventsSha256 !== undefined && eventsSha256 !== scan.sha256) {
    if (events.length < count && !scan.partial) throw lostTail(dir, manifest, events);
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
  // A step is started once: the engines key steps by their id (the line of each step's step.started).
  const started = new Map<number, number>();
  for (const [index, event] of events.entries()) {
    const step = Math.max(event.stepId, event.parentStepId ?? 0);
    if (step > MAX_EVENTS) {
      throw new RecordingError(
        { dir, file, line: index + 1, field: step === event.stepId ? 'stepId' : 'parentStepId' },
        `step ${step} is past the ${MAX_EVENTS}-step limit`,
        'steps count from 1; a number this large is damage or a hostile edit',
      );
    }
    if (event.type === 'step.started') {
      const first = started.get(event.stepId);
      if (first !== undefined) {
        throw new RecordingError(
          { dir, file, line: index + 1, field: 'stepId' },
          `step ${event.stepId} is started twice: line ${first} started it already`,
          'a step has one step.started; the file is damaged or hostile',
        );
      }
      started.set(event.stepId, index + 1);
    }
  }
  if (manifest.status === 'incomplete') warnings.push(incompleteWarning(events.at(-1)));
  const stopped = stoppedWarning(manifest);
  if (stopped !== undefined) warnings.push(stopped);
  const cut = cutWarning(manifest, events);
  if (cut !== undefined) warnings.push(cut);
  let pre: Recording['pre'] = {};
  let post: Recording['post'] = {};
  if (options.world ?? true) {
    const { readSnapshot } = await import('./read-snapshots.js');
    pre = await readSnapshot(dir, 'pre', warnings);
    post = await readSnapshot(dir, 'post', warnings);
  }
  const clash = fsChangesClash(pre.fs?.files, fsChanges(events));
  if (clash) {
    throw new RecordingError(
      { dir, file, line: clash.line, field: 'payload.path' },
      `after step ${clash.step}, ${clash.problem}`,
      'a path is a file or a folder, never both: the recording is damaged or hostile',
    );
  }
  const blobs = blobReader(dir, inlineFiles(events, [pre.fs, post.fs]));
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

/** The fs.changed events, with their lines in events.jsonl. */
function fsChanges(events: readonly RecordingEvent[]): FsChangeAt[] {
  const out: FsChangeAt[] = [];
  for (const [index, event] of events.entries()) {
    if (event.type === 'fs.changed')
      out.push({ line: index + 1, seq: event.seq, stepId: event.stepId, payload: event.payload });
  }
  return out;
}

/**
 * A closed recording (its manifest counts and hashes its events) whose events.jsonl holds fewer:
 * truncated after it was closed. Says where it stops, what is left and how much is lost.
 */
function lostTail(
  dir: string,
  manifest: Manifest,
  events: RecordingEvent[],
  partial?: { line: number; bytes: number },
): RecordingError {
  const count = manifest.integrity.events;
  const last = events.at(-1);
  const kept =
    last === undefined
      ? 'no whole event is left'
      : `${events.length} whole event${events.length === 1 ? '' : 's'} left, the last seq ${last.seq} (step ${last.stepId}, ${last.type})`;
  const where = partial
    ? { line: partial.line, at: `is cut off ${partial.bytes} bytes into line ${partial.line}` }
    : { at: `ends after line ${events.length}` };
  return new RecordingError(
    { dir, file: 'events.jsonl', ...(where.line === undefined ? {} : { line: where.line }), field: '(line)' },
    `${where.at}: ${kept}; ${count - events.length} of the ${count} events manifest.json counts are lost`,
    'the file was truncated after the recording was closed; pull or copy it again',
  );
}

/** Why a recording is incomplete: the agent ended early (the run was closed), or nothing closed it. */
const MIB = 1024 * 1024;
const sizeText = (bytes: number) =>
  bytes >= MIB ? `${(bytes / MIB).toFixed(1)} MiB` : bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${bytes} B`;

/**
 * A recording the recorder cut to fit its size caps (`manifest.cut`), in one line: which events,
 * how large they were, and what that means for a replay, which serves what was kept.
 */
function cutWarning(manifest: Manifest, events: RecordingEvent[]): string | undefined {
  const cut = manifest.cut ?? [];
  if (cut.length === 0) return undefined;
  const stepOf = new Map(events.map((e) => [e.seq, e.stepId]));
  const how = { stream: 'a stream kept to its first chunks', body: 'a body cut', line: 'its long values cut' };
  const named = cut
    .slice(0, 3)
    .map(
      (c) =>
        `step ${stepOf.get(c.seq) ?? '?'} ${c.what ?? c.type} (${c.bytes > 0 ? `${sizeText(c.bytes)}, ` : ''}${how[c.why]})`,
    );
  const more = cut.length > 3 ? ` and ${cut.length - 3} more` : '';
  return `the recording was cut to fit the recorder's size caps (maxBodyBytes, ${sizeText(MAX_LINE_BYTES)} an event): ${named.join('; ')}${more}; a replay serves what was kept, so the run may diverge there`;
}

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
 * A missing root gives an empty list. Temp folders a killed writer left (`.tmp-…`, see
 * staging.ts) are removed on the way once their owner is gone.
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
    // Folders being created or removed (a killed writer's) are never recordings; stale ones go.
    if (entries.some((e) => isStagingName(e.name))) {
      await sweepStaging(
        dir,
        entries.map((e) => e.name),
      );
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
