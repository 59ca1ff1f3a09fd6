// The recording writer: an append-only events.jsonl flushed at every step boundary,
// content-addressed blobs, snapshots and the manifest. Redaction happens here, before any byte is written.

import { isUtf8 } from 'node:buffer';
import { createHash, type Hash, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { BlobStore, sha256Hex, writeAllSync, writeFileAtomic, writeFileAtomicSync } from './blobs.js';
import { isBinaryType } from './body.js';
import { canonicalJson, canonicalJsonPretty } from './canonical-json.js';
import { disk } from './disk.js';
import { TapedeckError } from './errors.js';
import { type FileContent, inlineContent } from './file-content.js';
import { capDepth, cutLongStrings, MAX_JSON_DEPTH } from './json.js';
import { unsafePathReason } from './paths.js';
import { MAX_LINE_BYTES } from './read-files.js';
import { createRedactor, isPlaceholder, type RedactionOptions, type Redactor } from './redact.js';
import { EVENT_TYPES, EventEnvelopeSchema, FORMAT, INLINE_FILE_MAX, PAYLOAD_SCHEMAS } from './schema.js';
import { sealManifest } from './seal.js';
import { stageRecordingFolder } from './staging.js';
import type {
  Body,
  CutEvent,
  DbSnapshot,
  EventType,
  FsSnapshot,
  HttpExchangePayload,
  Manifest,
  PayloadMap,
  PriceSnapshot,
} from './types.js';

/** Bodies up to this many bytes are stored inline in the event; larger ones go to blobs/. */
export const INLINE_BODY_MAX = 4096;
/**
 * File bytes one recording keeps inline at most, all entries together: past it files go to blobs,
 * so a workspace of very many small files neither swells fs.json past what a reader takes nor
 * holds its contents in the recorder's memory (the fs tracker keeps every entry).
 */
export const INLINE_FILES_BUDGET = 16 * 1024 * 1024;
/** Buffered event bytes that force a flush even between step boundaries. */
const FLUSH_THRESHOLD = 1 << 20;
/**
 * A flush's bytes are encoded into one scratch buffer shared by every writer of the thread (a
 * flush is synchronous: nothing else uses it meanwhile) when they surely fit, instead of a new
 * buffer a flush (one a step): 5,100 flushes of a replay's ~3.6 KB steps, 11-12 ms of CPU with a
 * new buffer each, 2-3 ms into the scratch buffer (microbenchmark).
 */
const SCRATCH_BYTES = 64 * 1024;
let scratch: Buffer | undefined;

/** `text` as UTF-8, in the scratch buffer when it fits (at most 3 bytes a UTF-16 unit): valid until the next call. */
function utf8Of(text: string): Buffer {
  if (text.length * 3 > SCRATCH_BYTES) return Buffer.from(text, 'utf8');
  scratch ??= Buffer.allocUnsafe(SCRATCH_BYTES);
  return scratch.subarray(0, scratch.write(text, 0, 'utf8'));
}

export interface WriterInit {
  /** Default: the directory's base name. */
  id?: string;
  name: string;
  agent: Manifest['agent'];
  /** Default: this process's node version and platform, no SDK versions. */
  runtime?: Partial<Manifest['runtime']>;
  prompt?: Manifest['prompt'];
  world?: Manifest['world'];
  replayOf?: string;
  replay?: Manifest['replay'];
  prices?: PriceSnapshot;
  redaction?: RedactionOptions;
  /** Use this redactor instead of building one from `redaction`. */
  redactor?: Redactor;
  /** Default: now. Give it (and traceId) to make two recordings of the same events byte-identical. */
  createdAt?: string;
  /** Default: 32 random hex digits. */
  traceId?: string;
  /** Validate every event with the zod schema as it is appended (slow; for tests). Also env TAPEDECK_VALIDATE_WRITES=1. */
  validate?: boolean;
  /** Default INLINE_BODY_MAX. */
  inlineBodyMax?: number;
  /**
   * File contents up to this many bytes are kept inline in their entries (fileContent); default
   * and most INLINE_FILE_MAX. 0 stores every file as a blob, as recordings made before inline content.
   */
  inlineFileMax?: number;
  /** Inline file bytes this recording keeps at most, all entries together (default INLINE_FILES_BUDGET). */
  inlineFileBudget?: number;
  /**
   * Seal the manifest with this machine's key (src/recording/seal.ts), so a replay here runs its
   * command and applies its env without being told to trust it. Only for what this machine ran
   * (the recorder, the replayer): never for an import, whose command came from elsewhere.
   */
  seal?: boolean;
}

/** What a caller appends: the writer assigns seq and traceId, and time when it is missing. */
export type AppendInput<K extends EventType = EventType> = {
  type: K;
  stepId: number;
  parentStepId?: number;
  /** ISO time; default now. */
  time?: string;
  payload: PayloadMap[K];
};

export interface RecordingWriter {
  readonly dir: string;
  readonly id: string;
  readonly traceId: string;
  readonly redactor: Redactor;
  /** Redacts and buffers one event; returns its seq (0, 1, 2, …). Flushes at step.completed and run.completed. */
  append<K extends EventType>(event: AppendInput<K>): number;
  /**
   * A redacted Body: inline text (utf8) or base64 when small, else a blob reference. Text is
   * redacted as text; bytes (a binary content type, or not UTF-8) by the redactor's bytes pass.
   */
  body(bytes: Uint8Array | string, contentType?: string): Body;
  /** Stores bytes as they are (file contents) and returns their sha256. Not redacted. */
  /** `from`: a file already holding these bytes (another recording's blob, verified): linked, not copied, where it can be. */
  putBlob(bytes: Uint8Array, from?: string): string;
  /**
   * Stores a file's bytes as they are (not redacted): inline in its entry when small (returned
   * with the sha256), else as a blob. The caller puts the result in the file's entry.
   */
  fileContent(bytes: Uint8Array): FileContent;
  /** Writes buffered events to events.jsonl (synchronous; no fsync). */
  flush(): void;
  writeSnapshot(which: 'pre' | 'post', snapshot: { fs?: FsSnapshot; db?: DbSnapshot }): void;
  /** writeSnapshot on libuv's threads: a server finishing many recordings keeps serving meanwhile. */
  writeSnapshotAsync(which: 'pre' | 'post', snapshot: { fs?: FsSnapshot; db?: DbSnapshot }): Promise<void>;
  /** Merges into the manifest and rewrites manifest.json at once. */
  setManifest(patch: Partial<Manifest>): void;
  readonly manifest: Readonly<Manifest>;
  /**
   * Flushes, fsyncs, and writes the manifest with its final status and integrity (and `patch`
   * merged in, as setManifest would, without a write of its own). Idempotent.
   */
  close(status: Manifest['status'], patch?: Partial<Manifest>): Promise<void>;
}

const EVENT_TYPE_SET = new Set<string>(EVENT_TYPES);

// Flush every open writer if the process exits without closing them (not on SIGKILL, by nature).
const openWriters = new Set<Writer>();
let exitHookInstalled = false;
function trackOpen(writer: Writer): void {
  openWriters.add(writer);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const w of openWriters) {
        try {
          w.flush();
        } catch {
          // The process is exiting; a failed last flush leaves an incomplete recording, which readers accept.
        }
      }
    });
  }
}

class Writer implements RecordingWriter {
  readonly id: string;
  readonly traceId: string;
  readonly redactor: Redactor;
  private readonly fd: number;
  private readonly blobs: BlobStore;
  private readonly hash: Hash = createHash('sha256');
  private readonly validate: boolean;
  private readonly inlineMax: number;
  private readonly inlineFileMax: number;
  private inlineFileBytesLeft: number;
  private readonly seal: boolean;
  private pending: string[] = [];
  /** The events cut to fit the recorder's size caps, for the manifest. */
  private readonly cuts: CutEvent[] = [];
  private pendingChars = 0;
  private seq = 0;
  private closed = false;
  private current: Manifest;

  /** No I/O here: createRecordingWriter makes the folders, opens `fd` (events.jsonl) and writes the first manifest. */
  constructor(
    readonly dir: string,
    init: WriterInit,
    fd: number,
  ) {
    this.fd = fd;
    this.id = init.id ?? basename(dir);
    this.traceId = init.traceId ?? randomBytes(16).toString('hex');
    this.redactor = init.redactor ?? createRedactor(init.redaction);
    this.validate = init.validate ?? process.env.TAPEDECK_VALIDATE_WRITES === '1';
    this.inlineMax = init.inlineBodyMax ?? INLINE_BODY_MAX;
    // Readers refuse inline content over INLINE_FILE_MAX: never write more.
    this.inlineFileMax = Math.min(init.inlineFileMax ?? INLINE_FILE_MAX, INLINE_FILE_MAX);
    this.inlineFileBytesLeft = init.inlineFileBudget ?? INLINE_FILES_BUDGET;
    this.seal = init.seal === true;
    this.blobs = new BlobStore(dir);
    const manifest: Manifest = {
      format: FORMAT,
      id: this.id,
      name: init.name,
      createdAt: init.createdAt ?? new Date().toISOString(),
      status: 'incomplete',
      agent: init.agent,
      runtime: { node: process.version, platform: process.platform, sdkVersions: {}, ...init.runtime },
      redaction: { rules: this.redactor.rules, keyId: this.redactor.keyId },
      integrity: { events: 0 },
    };
    if (init.prompt) manifest.prompt = init.prompt;
    if (init.world) manifest.world = init.world;
    if (init.replayOf !== undefined) manifest.replayOf = init.replayOf;
    if (init.replay) manifest.replay = init.replay;
    if (init.prices) manifest.prices = init.prices;
    this.current = this.redactManifest(manifest);
    this.manifestGeneration = this.redactor.generation;
  }

  /** Writes the first manifest (status incomplete) into `folder`: the recording's folder, or its temp name before it is published. */
  async start(folder = this.dir): Promise<void> {
    await writeFileAtomic(join(folder, 'manifest.json'), `${canonicalJsonPretty(this.current)}\n`);
  }

  get manifest(): Readonly<Manifest> {
    return this.current;
  }

  append<K extends EventType>(event: AppendInput<K>): number {
    if (this.closed) throw new Error(`recording ${this.dir} is closed; cannot append ${event.type}`);
    if (!EVENT_TYPE_SET.has(event.type)) throw new TypeError(`unknown event type ${JSON.stringify(event.type)}`);
    if (!Number.isInteger(event.stepId) || event.stepId < 0) {
      throw new TypeError(`stepId must be a non-negative integer, got ${event.stepId}`);
    }
    const seq = this.seq;
    const envelope = {
      seq,
      traceId: this.traceId,
      stepId: event.stepId,
      parentStepId: event.parentStepId,
      type: event.type,
      time: event.time ?? new Date().toISOString(),
      // Before redaction, so what is cut to text is redacted as text. The envelope and the payload
      // object are the line's first two levels.
      payload: this.redactor.payload(event.type, capDepth(event.payload, MAX_JSON_DEPTH - 1)),
    };
    if (this.validate) validateEvent(envelope);
    let line = `${canonicalJson(envelope)}\n`;
    let cut = cutOf(envelope);
    if (line.length * 3 > MAX_LINE_BYTES) {
      const bytes = Buffer.byteLength(line);
      if (bytes > MAX_LINE_BYTES) {
        line = fitLine(envelope, line);
        // An event whose whole is elsewhere (a body blob) loses nothing; any other is cut.
        if (!WHOLE_ELSEWHERE.has(envelope.type)) cut = { why: 'line', bytes, ...whatOf(envelope) };
      }
    }
    if (cut !== undefined && this.cuts.length < MAX_CUTS) this.cuts.push({ seq, type: envelope.type, ...cut });
    this.seq++; // only once the event is sure to be written: a rejected event leaves no gap
    this.pending.push(line);
    this.pendingChars += line.length;
    if (event.type === 'step.completed' || event.type === 'run.completed' || this.pendingChars > FLUSH_THRESHOLD) {
      this.flush();
    }
    return seq;
  }

  body(data: Uint8Array | string, contentType?: string): Body {
    const ct = contentType === undefined ? {} : { contentType };
    let text: string | undefined;
    if (typeof data === 'string') text = data;
    else if (!isBinaryType(contentType) && isUtf8(data)) {
      text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
    }
    if (text !== undefined) {
      const redacted = this.redactor.text(text);
      const size = Buffer.byteLength(redacted, 'utf8');
      if (size <= this.inlineMax) return this.redactor.markClean({ size, ...ct, text: redacted });
      return { size, ...ct, blob: this.blobs.put(Buffer.from(redacted, 'utf8')) };
    }
    // Secrets in bytes are masked in place, at their length: the bytes' framing stays valid.
    const bytes = this.redactor.bytes(data as Uint8Array);
    if (bytes.byteLength <= this.inlineMax) {
      return { size: bytes.byteLength, ...ct, base64: Buffer.from(bytes).toString('base64') };
    }
    return { size: bytes.byteLength, ...ct, blob: this.blobs.put(bytes) };
  }

  putBlob(bytes: Uint8Array, from?: string): string {
    return this.blobs.put(bytes, undefined, from);
  }

  fileContent(bytes: Uint8Array): FileContent {
    const sha256 = sha256Hex(bytes);
    if (
      this.inlineFileMax > 0 &&
      bytes.byteLength <= this.inlineFileMax &&
      bytes.byteLength <= this.inlineFileBytesLeft
    ) {
      this.inlineFileBytesLeft -= bytes.byteLength;
      return { sha256, ...inlineContent(bytes) };
    }
    return { sha256: this.blobs.put(bytes, sha256) };
  }

  flush(): void {
    // A secret learned since the manifest was last written (a token first redacted by name in a
    // later header, quoted in the agent's command or env): the manifest is written again without it.
    if (this.manifestGeneration !== this.redactor.generation && !this.closed) this.redactManifestAgain();
    if (this.pending.length === 0) return;
    const chunk = this.pending.length === 1 ? (this.pending[0] as string) : this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    const bytes = utf8Of(chunk);
    writeAllSync(this.fd, bytes);
    this.hash.update(bytes);
  }

  writeSnapshot(which: 'pre' | 'post', snapshot: { fs?: FsSnapshot; db?: DbSnapshot }): void {
    const { dir, files } = this.snapshotFiles(which, snapshot);
    mkdirSync(dir, { recursive: true });
    for (const [file, text] of files) writeFileAtomicSync(file, text);
  }

  async writeSnapshotAsync(which: 'pre' | 'post', snapshot: { fs?: FsSnapshot; db?: DbSnapshot }): Promise<void> {
    const { dir, files } = this.snapshotFiles(which, snapshot);
    await disk.mkdir(dir, { recursive: true });
    for (const [file, text] of files) await writeFileAtomic(file, text);
  }

  /** A snapshot's folder and files (fs.json, db.json) with their text; refuses an fs path that escapes. */
  private snapshotFiles(
    which: 'pre' | 'post',
    snapshot: { fs?: FsSnapshot; db?: DbSnapshot },
  ): { dir: string; files: Array<[string, string]> } {
    if (which !== 'pre' && which !== 'post') throw new TypeError(`snapshot must be 'pre' or 'post', got ${which}`);
    const dir = join(this.dir, 'snapshots', which);
    const files: Array<[string, string]> = [];
    if (snapshot.fs) {
      for (const path of Object.keys(snapshot.fs.files)) {
        const reason = unsafePathReason(path);
        if (reason) throw new TapedeckError('UNSAFE_PATH', `fs snapshot path ${JSON.stringify(path)} ${reason}`);
      }
      files.push([join(dir, 'fs.json'), `${canonicalJsonPretty(snapshot.fs)}\n`]);
    }
    if (snapshot.db) files.push([join(dir, 'db.json'), `${canonicalJsonPretty(snapshot.db)}\n`]);
    return { dir, files };
  }

  /** The redactor's generation the manifest on disk was redacted at. */
  private manifestGeneration = -1;

  private redactManifestAgain(): void {
    this.manifestGeneration = this.redactor.generation;
    // Compared first without a seal (an HMAC) or a write: a server's shared redactor learns a
    // token every session, and most manifests hold none of them.
    const { agent, dbUrl } = this.redactedParts(this.current);
    if (JSON.stringify(agent) === JSON.stringify(this.current.agent) && dbUrl === this.current.world?.db?.url) return;
    this.current = this.redactManifest(this.current);
    this.writeManifest();
  }

  setManifest(patch: Partial<Manifest>): void {
    if (this.closed) throw new Error(`recording ${this.dir} is closed; cannot change its manifest`);
    const { format: _format, integrity: _integrity, ...rest } = patch;
    this.current = this.redactManifest({ ...this.current, ...rest });
    this.manifestGeneration = this.redactor.generation;
    this.writeManifest();
  }

  async close(status: Manifest['status'], patch?: Partial<Manifest>): Promise<void> {
    if (this.closed) return;
    // Redacted again whatever the patch: a secret learned since the last write is not left in it.
    const { format: _format, integrity: _integrity, ...rest } = patch ?? {};
    this.current = this.redactManifest({ ...this.current, ...rest });
    this.manifestGeneration = this.redactor.generation;
    this.flush();
    this.closed = true;
    openWriters.delete(this);
    this.current = {
      ...this.current,
      ...(this.cuts.length > 0 ? { cut: this.cuts } : {}),
      status,
      integrity: { eventsSha256: this.hash.digest('hex'), events: this.seq },
    };
    // On libuv's threads, not the event loop's: a server closing many recordings goes on serving
    // while the disk syncs (an fsync took milliseconds, each blocking every session).
    await disk.fsync(this.fd);
    await disk.close(this.fd);
    await writeFileAtomic(join(this.dir, 'manifest.json'), `${canonicalJsonPretty(this.current)}\n`);
  }

  /**
   * The agent's command line and the database URL may carry secrets too (`--api-key …`,
   * `postgres://u:pw@…`). The seal, when asked for, is over the stored (redacted) form, which is
   * what a replay reads; a seal the patch carried is never taken as it is.
   */
  private redactManifest(manifest: Manifest): Manifest {
    const { agent, dbUrl } = this.redactedParts(manifest);
    const { seal: _given, ...out } = { ...manifest, agent };
    if (manifest.world?.db && dbUrl !== undefined)
      out.world = { ...manifest.world, db: { ...manifest.world.db, url: dbUrl } };
    return this.seal ? sealManifest(out) : out;
  }

  /** The manifest's parts that may hold secrets, redacted: the agent's command line and env, the database URL. */
  private redactedParts(manifest: Manifest): { agent: Manifest['agent']; dbUrl: string | undefined } {
    const agent = { ...manifest.agent, command: this.redactor.argv(manifest.agent.command) };
    if (manifest.agent.env) agent.env = this.redactEnv(manifest.agent.env);
    return { agent, dbUrl: manifest.world?.db ? this.redactor.url(manifest.world.db.url) : undefined };
  }

  /** Env values: by variable name (OPENAI_API_KEY), URLs by their parts (passwords), the rest as text (tokens). */
  private redactEnv(env: Record<string, string>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(env)) {
      out[name] =
        value !== '' && this.redactor.isSecretName(name)
          ? // Already a placeholder (the manifest redacted again): kept, never the placeholder's own.
            isPlaceholder(value)
            ? value
            : this.redactor.placeholder(value)
          : /^[a-z][a-z0-9+.-]*:\/\//i.test(value)
            ? this.redactor.url(value)
            : this.redactor.text(value);
    }
    return out;
  }

  private writeManifest(): void {
    writeFileAtomicSync(join(this.dir, 'manifest.json'), `${canonicalJsonPretty(this.current)}\n`);
  }
}

/**
 * Events derived from an exchange whose body (a blob, any size) holds the whole: their long strings
 * (a 70 MB prompt in a model.called's messages, the answer in run.completed's finalOutput) may be
 * cut so that the line stays within what a reader takes. Others keep every byte: a replay serves
 * or rebuilds from them.
 */
const WHOLE_ELSEWHERE = new Set<EventType>(['model.called', 'run.completed']);

/**
 * The event's line with its long strings cut until it is within MAX_LINE_BYTES: a longer line
 * would leave the whole recording unreadable. Past the events whose whole is elsewhere, the cut is
 * noted in the manifest (`cut`), and a replay says so; an event carrying many small strings is
 * kept from growing past the line by its producer (a stream's chunks: RecordSession).
 */
function fitLine(envelope: { type: EventType; payload: unknown }, line: string): string {
  for (let keep = 4 * 1024 * 1024; keep >= 1024; keep = Math.floor(keep / 4)) {
    const cut = `${canonicalJson({ ...envelope, payload: cutLongStrings(envelope.payload, keep) })}\n`;
    if (Buffer.byteLength(cut) <= MAX_LINE_BYTES) return cut;
  }
  return line;
}

/** How many cut events the manifest names (the first ones). */
const MAX_CUTS = 100;

/** What an event is, for the manifest's account of a cut: an exchange's method and URL, a change's table. */
function whatOf(envelope: { type: EventType; payload: unknown }): { what?: string } {
  const p = envelope.payload as {
    request?: { method?: unknown; url?: unknown };
    schema?: unknown;
    table?: unknown;
    name?: unknown;
  };
  const what =
    envelope.type === 'http.exchange'
      ? `${String(p.request?.method)} ${String(p.request?.url)}`
      : envelope.type === 'db.changed'
        ? `${String(p.schema)}.${String(p.table)}`
        : typeof p.name === 'string'
          ? p.name
          : undefined;
  return what === undefined ? {} : { what: what.slice(0, 500) };
}

/** A body or stream the recorder cut at its size cap (`maxBodyBytes`), as the event itself marks it. */
function cutOf(envelope: { type: EventType; payload: unknown }): Omit<CutEvent, 'seq' | 'type'> | undefined {
  if (envelope.type !== 'http.exchange') return undefined;
  const { request, response } = envelope.payload as HttpExchangePayload;
  if (response?.truncated === true) return { why: 'stream', bytes: response.streamedBytes ?? 0, ...whatOf(envelope) };
  const body = response?.body?.truncated === true ? response.body : request.body?.truncated ? request.body : undefined;
  return body === undefined ? undefined : { why: 'body', bytes: body.size, ...whatOf(envelope) };
}

function validateEvent(envelope: Record<string, unknown>): void {
  const env = EventEnvelopeSchema.safeParse(envelope);
  const payload = PAYLOAD_SCHEMAS[envelope.type as EventType].safeParse(envelope.payload);
  const issue = env.success ? (payload.success ? undefined : payload.error.issues[0]) : env.error.issues[0];
  if (issue) {
    const where = env.success ? ['payload', ...issue.path] : issue.path;
    throw new TypeError(`invalid ${String(envelope.type)} event: ${where.join('.')}: ${issue.message}`);
  }
}

/**
 * Starts a recording in `dir` (must not already hold one). The folder appears whole: it is made
 * under a temp name beside `dir`, given its events.jsonl and first manifest (status
 * 'incomplete'), and renamed into place (src/recording/staging.ts), so a killed writer leaves a
 * readable recording or nothing a reader sees.
 *
 * @example
 * const w = await createRecordingWriter('recordings/run-1', { name: 'run', agent: { command: ['node', 'a.mjs'], cwd } });
 * w.append({ type: 'run.started', stepId: 0, payload: { command: ['node', 'a.mjs'], cwd } });
 * await w.close('complete');
 */
export async function createRecordingWriter(dir: string, init: WriterInit): Promise<RecordingWriter> {
  // On libuv's threads, not the event loop's: a server opening many recordings keeps serving.
  const staged = await stageRecordingFolder(dir);
  let fd: number | undefined;
  try {
    // blobs/sha256/ is made by the first blob put (most runs in a server have none): two folders
    // fewer a recording, each a new inode on the recording thread's path.
    try {
      fd = await disk.open(join(staged.path, 'events.jsonl'), 'wx');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new TapedeckError(
          'RECORDING_EXISTS',
          `${dir} already holds a recording (events.jsonl exists); choose a new directory or delete it.`,
        );
      }
      throw error;
    }
    const writer = new Writer(dir, init, fd);
    await writer.start(staged.path);
    await staged.publish();
    trackOpen(writer);
    return writer;
  } catch (error) {
    if (fd !== undefined) await disk.close(fd).catch(() => {});
    await staged.abandon().catch(() => {});
    throw error;
  }
}
