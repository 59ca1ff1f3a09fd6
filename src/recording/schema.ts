// The Recording contract: zod schemas for the manifest, the event envelope, every event
// payload and the world snapshots. Every module reads and writes recordings through these.
// Over 500 lines on purpose: this is the format in one place (as rr keeps its trace schema in one
// file), read top to bottom when the format changes; a payload's schema and the manifest fields
// that name it must change together, and splitting it would scatter FORMAT's one definition.
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { LOCALE, TIME_ZONE } from './region.js';

export const FORMAT = 'tapedeck.recording/v1';

/** The seed's runtime state types (000 §15), verbatim. */
export const STATE_TYPES = [
  'OBSERVE',
  'THINK',
  'RETRIEVE',
  'MCP_CALL',
  'API_CALL',
  'DB_QUERY',
  'SCRIPT_EXEC',
  'FILE_READ',
  'FILE_WRITE',
  'MEMORY_READ',
  'MEMORY_WRITE',
  'VALIDATE',
  'REFINE',
  'FINALIZE',
] as const;
export const StateTypeSchema = z.enum(STATE_TYPES);

/** The seed's event categories (000 §40) plus http.exchange, websocket.exchange, fs/db changes, nondeterminism and divergence. */
export const EVENT_TYPES = [
  'run.started',
  'step.started',
  'model.called',
  'tool.called',
  'http.exchange',
  'websocket.exchange',
  'context.compiled',
  'fs.changed',
  'db.changed',
  'artifact.created',
  'artifact.modified',
  'state.changed',
  'nondeterminism',
  'validator.called',
  'divergence',
  'step.completed',
  'run.completed',
] as const;
export const EventTypeSchema = z.enum(EVENT_TYPES);

/** How a replay's exchange was answered (see HttpExchangePayloadSchema.servedFrom). */
export const SERVED_FROM = ['recording', 'sandbox', 'mock', 'simulated', 'live', 'blocked'] as const;

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'expected a lowercase hex sha256');
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;
/** A real calendar time, as the writer writes it (toISOString): what the engines and the warehouse take as a time. */
function isIsoTime(text: string): boolean {
  const m = ISO_TIME.exec(text);
  if (!m || !Number.isFinite(Date.parse(text))) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return year >= 1 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
const IsoTime = z.string().refine(isIsoTime, 'expected an ISO 8601 time such as 2026-11-29T18:00:00.000Z');
/**
 * A header as HTTP carries it (a replay serves them back): a token for a name (HTTP/2's pseudo-headers,
 * `:authority`, as a HAR shows them), no carriage return or NUL in a value. A newline is the format's
 * own separator of repeated values (Set-Cookie; every repeated header of an imported HAR).
 */
const Headers = z.record(
  z.string().regex(/^:?[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'expected an HTTP header name'),
  z.string().regex(/^[^\r\u0000]*$/, 'expected a header value without a carriage return or NUL'),
);
/** A URL every engine can parse (`new URL`): the replay matches, routes and exports by it. */
const AbsoluteUrl = z.string().refine((url) => URL.canParse(url), 'expected an absolute URL');

/**
 * A body: inline text (utf8), inline base64 (binary), or a blob reference. Bodies are
 * stored decoded (no gzip, no chunked framing). `size` is the decoded byte length;
 * `truncated` marks a body cut at the recorder's size cap.
 */
export const BodySchema = z
  .object({
    size: z.number().int().nonnegative(),
    contentType: z.string().optional(),
    text: z.string().optional(),
    base64: z.string().optional(),
    blob: Sha256.optional(),
    truncated: z.boolean().optional(),
  })
  .strict();

/**
 * One server-sent chunk of a streamed response: its raw bytes (utf8) and ms offset from the response
 * start. `encoding: 'base64'`: the bytes are not text (an HTTP/2 gRPC message) and `data` is their
 * base64; recordings without it are all text.
 */
export const StreamChunkSchema = z
  .object({ offsetMs: z.number().nonnegative(), data: z.string(), encoding: z.literal('base64').optional() })
  .strict();

export const HttpRequestSchema = z
  .object({
    method: z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'expected an HTTP method'),
    url: AbsoluteUrl,
    headers: Headers,
    body: BodySchema.optional(),
  })
  .strict();

export const HttpResponseSchema = z
  .object({
    status: z.number().int(),
    statusText: z.string().optional(),
    headers: Headers,
    body: BodySchema.optional(),
    /** Present for streamed (SSE) responses; the concatenation of chunk data is the body. */
    chunks: z.array(StreamChunkSchema).optional(),
    /** Trailing headers after the body (HTTP/2: gRPC's grpc-status and grpc-message live here). */
    trailers: Headers.optional(),
  })
  .strict();

/** Provider-reported usage in separate buckets; never double counted. inputTotal = uncached + cacheRead + cacheWrite. */
export const UsageSchema = z
  .object({
    inputUncached: z.number().int().nonnegative(),
    cacheRead: z.number().int().nonnegative(),
    cacheWrite: z.number().int().nonnegative(),
    output: z.number().int().nonnegative(),
    reasoning: z.number().int().nonnegative(),
  })
  .strict();

/**
 * Which process of the agent's tree drew a value (sandbox/preload/shared-process.mjs names them,
 * alike when recording and replaying: `2.1` is the first process started by the agent's second,
 * `2#2` the second to get the name `2`, `2w1` a worker thread of `2`).
 */
export const ProcessNameSchema = z.string().regex(/^[0-9w.#]{1,200}$/);

/**
 * How many values of each kind (clock, random…) the process that made a call had drawn when the
 * call's response head reached it (`process`: its name, none for the agent's own; a kind it had
 * drawn none of is left out). A replay hands the recorded answer back once the process has drawn
 * as many (src/replay/drawn.ts): its concurrent branches then take their recorded values.
 */
export const DrawnAtHeadSchema = z
  .object({
    process: ProcessNameSchema.optional(),
    counts: z
      .object({
        clock: z.number().int().nonnegative().optional(),
        random: z.number().int().nonnegative().optional(),
        uuid: z.number().int().nonnegative().optional(),
        randomBytes: z.number().int().nonnegative().optional(),
        hrtime: z.number().int().nonnegative().optional(),
      })
      .strict(),
  })
  .strict();

export const HttpExchangePayloadSchema = z
  .object({
    /** Recorder-assigned id, unique in the recording; model.called/tool.called point at it. */
    exchangeId: z.string().min(1),
    request: HttpRequestSchema,
    response: HttpResponseSchema.optional(),
    /** Set when no response arrived (connection refused, aborted, blocked in replay). */
    error: z.object({ code: z.string(), message: z.string() }).strict().optional(),
    startedAt: IsoTime,
    durationMs: z.number().nonnegative(),
    ttfbMs: z.number().nonnegative().optional(),
    /**
     * The HTTP version it went over when not HTTP/1.x: `h2` (HTTP/2 over TLS) or `h2c` (cleartext
     * HTTP/2). Its request headers then include the pseudo-headers (:method, :authority…).
     */
    protocol: z.enum(['h2', 'h2c']).optional(),
    /**
     * The values the calling process had drawn when the response head reached it. Recordings
     * made before it (and a call whose head reached the agent only once the message that ends it
     * was written: world capture's barriers) have none: the order of events.jsonl says it.
     */
    drawn: DrawnAtHeadSchema.optional(),
    /**
     * In a replay: how this exchange was answered (its provenance): `recording` (served from the
     * recording), `sandbox` (a sandboxed service), `mock` (an msw handler), `simulated` (written by a
     * model), `live` (a model call sent to the model endpoint), `blocked` (held back, never sent).
     * Recordings made before sandbox/mock/simulated existed use the first three names only.
     */
    servedFrom: z.enum(SERVED_FROM).optional(),
    /**
     * A simulated answer: the model call tapedeck made to write it (the model and its usage), so
     * the ledger costs what the replay spent on it.
     */
    simulatedBy: z
      .object({ provider: z.string().min(1), model: z.string().min(1), usage: UsageSchema.optional() })
      .strict()
      .optional(),
  })
  .strict();

/**
 * One WebSocket message of a turn: its type, its ms offset from the turn's start, its bytes (a text
 * message's as text; none for a close), a close's code and reason; a server's message carries what
 * the agent's process had drawn when it came (`drawn`, as an exchange's response head does).
 */
export const WebSocketMessageSchema = z
  .object({
    type: z.enum(['text', 'binary', 'close', 'ping', 'pong']),
    offsetMs: z.number().nonnegative(),
    body: BodySchema.optional(),
    code: z.number().int().min(0).max(65535).optional(),
    reason: z.string().max(1000).optional(),
    drawn: DrawnAtHeadSchema.optional(),
  })
  .strict();

/**
 * One turn of a WebSocket conversation, a step of its own (src/record/preload/record-websocket.mjs):
 * `open` (turn 0: the upgrade request and its response, and what the server pushed before the
 * agent's first message), then one `message` (or `close`) per message the agent sent (`sent`), with
 * the server's messages until its next one (`received`). The turns of one connection share its
 * `connectionId`; `closed`: the connection ended during this turn.
 */
export const WebSocketExchangePayloadSchema = z
  .object({
    /** Unique in the recording; the step's tool.called points at it. */
    exchangeId: z.string().min(1),
    connectionId: z.string().min(1),
    turn: z.number().int().nonnegative(),
    url: z.string().min(1),
    /** `push`: what the server sent after the agent went on to another call (no `sent`). */
    kind: z.enum(['open', 'message', 'close', 'push']),
    /** The open's upgrade request (no body) and the server's answer (101, or its refusal). */
    request: HttpRequestSchema.optional(),
    response: HttpResponseSchema.optional(),
    sent: WebSocketMessageSchema.optional(),
    received: z.array(WebSocketMessageSchema).max(1_000_000),
    closed: z.boolean().optional(),
    startedAt: IsoTime,
    durationMs: z.number().nonnegative(),
    /** In a replay: how this turn was answered (`recording`, or `blocked`: held back, the connection closed). */
    servedFrom: z.enum(SERVED_FROM).optional(),
  })
  .strict();

export const ToolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.string() }).strict();

export const ModelCalledPayloadSchema = z
  .object({
    exchangeId: z.string().optional(),
    provider: z.string(), // 'openai' | 'anthropic' | other
    api: z.string(), // 'chat.completions' | 'responses' | 'messages'
    model: z.string(),
    streamed: z.boolean(),
    /** The system/developer prompt text the model saw (joined), if any. */
    system: z.string().optional(),
    /** The request's input messages as the provider API shaped them. */
    messages: z.array(z.unknown()),
    tools: z.array(z.unknown()).optional(),
    output: z
      .object({
        text: z.string().optional(),
        toolCalls: z.array(ToolCallSchema),
        /**
         * An embeddings call's answer: how many vectors, of how many dimensions (the vectors stay in
         * the exchange's response body). Absent for a call that answers with text or tool calls;
         * recordings made before embeddings calls were model calls have their calls as tool steps.
         */
        embeddings: z
          .object({ count: z.number().int().nonnegative(), dimensions: z.number().int().nonnegative() })
          .strict()
          .optional(),
      })
      .strict(),
    stopReason: z.string().optional(),
    usage: UsageSchema.optional(),
    latencyMs: z.number().nonnegative(),
    ttftMs: z.number().nonnegative().optional(),
  })
  .strict();

export const ToolCalledPayloadSchema = z
  .object({
    exchangeId: z.string().optional(),
    /** http | mcp | in-process | db | websocket (a turn of a WebSocket conversation) */
    kind: z.enum(['http', 'mcp', 'in-process', 'db', 'websocket']),
    name: z.string(),
    stateType: StateTypeSchema,
    /** Canonical arguments (JSON) the tool was called with. */
    args: z.unknown(),
    /** The result the agent observed (JSON or text); large results may be a body ref. */
    result: z.unknown().optional(),
    resultBody: BodySchema.optional(),
    error: z.object({ code: z.string(), message: z.string() }).strict().optional(),
    mutating: z.boolean(),
    latencyMs: z.number().nonnegative(),
  })
  .strict();

/**
 * File contents up to this many bytes are kept in their entry (`text` or `base64`) instead of a
 * blob file: creating a file is the costly part of world capture (0.1-0.5 ms of kernel time
 * each on some disks), and a workspace is mostly small files. Readers refuse larger inline content.
 */
export const INLINE_FILE_MAX = 4096;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** A lone surrogate: a string that no UTF-8 bytes decode to. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * One file's entry in a snapshot or a change: its mode, size and the sha256 of its bytes. The
 * bytes are the blob of that sha256 (blobs/sha256/…), or, for files up to INLINE_FILE_MAX bytes,
 * inline: `text` (the bytes were UTF-8) or `base64`. Recordings made before inline content have
 * blobs only. Inline content is checked as it is read: well-formed, `size` bytes, hashing to `sha256`.
 */
export const FileEntrySchema = z
  .object({
    mode: z.number().int(),
    size: z.number().int().nonnegative(),
    sha256: Sha256,
    text: z.string().max(INLINE_FILE_MAX, `inline content is over the ${INLINE_FILE_MAX}-byte limit`).optional(),
    base64: z
      .string()
      .max(Math.ceil(INLINE_FILE_MAX / 3) * 4, `inline content is over the ${INLINE_FILE_MAX}-byte limit`)
      .regex(BASE64, 'expected base64 (A-Z, a-z, 0-9, +, /, padded with =)')
      .optional(),
  })
  .strict()
  .superRefine((entry, ctx) => {
    const problem = inlineContentProblem(entry);
    if (problem) ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
  });

/** What is wrong with an entry's inline content (none: undefined). */
function inlineContentProblem(entry: {
  size: number;
  sha256: string;
  text?: string | undefined;
  base64?: string | undefined;
}): { field: 'text' | 'base64'; message: string } | undefined {
  if (entry.text === undefined && entry.base64 === undefined) return undefined;
  if (entry.text !== undefined && entry.base64 !== undefined)
    return { field: 'base64', message: 'an entry holds its content as text or as base64, not both' };
  const field = entry.text !== undefined ? 'text' : 'base64';
  if (entry.text !== undefined && LONE_SURROGATE.test(entry.text))
    return { field, message: 'is not well-formed text (a lone surrogate): inline text is UTF-8' };
  const bytes = entry.text !== undefined ? Buffer.from(entry.text, 'utf8') : Buffer.from(entry.base64 ?? '', 'base64');
  if (bytes.length > INLINE_FILE_MAX)
    return { field, message: `inline content of ${bytes.length} bytes is over the ${INLINE_FILE_MAX}-byte limit` };
  if (bytes.length !== entry.size)
    return { field, message: `inline content is ${bytes.length} bytes, but the entry's size is ${entry.size}` };
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== entry.sha256)
    return { field, message: `inline content hashes to ${actual}, not to the entry's sha256 ${entry.sha256}` };
  return undefined;
}

export const FsChangedPayloadSchema = z
  .object({
    /** POSIX path relative to the fs root; never absolute, never escaping with '..'. */
    path: z.string().min(1),
    op: z.enum(['create', 'modify', 'delete']),
    before: FileEntrySchema.optional(),
    after: FileEntrySchema.optional(),
  })
  .strict();

export const RowSchema = z.record(z.string(), z.unknown());

export const DbChangedPayloadSchema = z
  .object({
    schema: z.string(),
    table: z.string(),
    op: z.enum(['insert', 'update', 'delete']),
    /** Primary key columns -> values (or all columns for a table without a primary key). */
    key: RowSchema,
    before: RowSchema.optional(),
    after: RowSchema.optional(),
    /**
     * Made through the run's own database sessions (the agent's process tree): a replay runs the
     * agent again against its sandbox and never applies it, whatever step it is on. Without it the
     * change was another process's (a tool's server), an effect of the step's call — or, in a
     * recording made before the mark, either.
     */
    own: z.literal(true).optional(),
  })
  .strict();

export const NondeterminismPayloadSchema = z
  .object({
    /**
     * `dbReply` is no value handed to the agent: each is a reply one of the process's Postgres
     * connections got, with how many values of each kind the process had drawn by then
     * ("127.0.0.1:5432#0 clock=3 uuid=1"); a replay holds that reply back until it has drawn as many.
     */
    kind: z.enum(['clock', 'random', 'uuid', 'randomBytes', 'hrtime', 'dbReply']),
    /** The sequence of values handed to the agent since the previous nondeterminism event of this kind (and process). */
    values: z.array(z.union([z.number(), z.string()])),
    /** The process that drew them; none: the agent's own process (and every process, in recordings made before names). */
    process: ProcessNameSchema.optional(),
  })
  .strict();

export const StepStartedPayloadSchema = z
  .object({
    stateType: StateTypeSchema,
    /** What the step is called: the model, or the agent's tool for a step that carries out a decided tool call. */
    name: z.string(),
    agentId: z.string().optional(),
    /** The decided tool call this step answers (the model's tool-call id). */
    toolCallId: z.string().optional(),
    /** The capture layer's name for the step when it is named after the agent's tool (`POST /refunds`). */
    route: z.string().optional(),
  })
  .strict();

export const StepCompletedPayloadSchema = z
  .object({
    status: z.enum(['success', 'error', 'timeout', 'cancelled']),
    latencyMs: z.number().nonnegative(),
    errorType: z.string().optional(),
  })
  .strict();

export const RunStartedPayloadSchema = z
  .object({ command: z.array(z.string()), cwd: z.string(), pid: z.number().int().optional() })
  .strict();

/**
 * Why a run was stopped before it ended by itself: no progress for the idle limit (`idle`), the
 * wall limit reached (`wall`), or a signal to tapedeck (`interrupted`); the last step served and
 * what the agent was doing then. Recordings without it ended by themselves.
 */
export const StoppedSchema = z
  .object({
    reason: z.enum(['idle', 'wall', 'interrupted']),
    /** The limit that was reached (ms); absent when interrupted. */
    limitMs: z.number().int().nonnegative().optional(),
    /** The signal tapedeck was sent (interrupted). */
    signal: z.string().max(20).optional(),
    /** The last step written before the stop (0: none), and what it was. */
    lastStep: z.number().int().nonnegative(),
    last: z.string().max(500).optional(),
    /** What the agent's processes were doing when stopped. */
    doing: z.string().max(2000),
  })
  .strict();

export const RunCompletedPayloadSchema = z
  .object({
    status: z.enum(['complete', 'failed', 'timed-out', 'interrupted']),
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable().optional(),
    /** The agent's final answer text, when known (last model output). */
    finalOutput: z.string().optional(),
  })
  .strict();

export const DivergencePayloadSchema = z
  .object({
    kind: z.enum([
      'unmatched-request',
      'different-request',
      'extra-call',
      'missing-call',
      'blocked-connection',
      'side-channel',
      /** Recorded effects of a served call that could not be applied to the sandbox. */
      'effect-not-applied',
    ]),
    expected: z.unknown().optional(),
    actual: z.unknown().optional(),
    fieldDiff: z.array(z.object({ path: z.string(), expected: z.unknown(), actual: z.unknown() }).strict()).optional(),
    message: z.string(),
    /** For a held-back side effect: the request that never went live. */
    heldBack: z.object({ method: z.string(), target: z.string(), body: z.unknown().optional() }).strict().optional(),
  })
  .strict();

/** Payloads of the seed's generic events stay open: they carry what the emitter knows. */
const OpenPayload = z.record(z.string(), z.unknown());

export const PAYLOAD_SCHEMAS = {
  'run.started': RunStartedPayloadSchema,
  'step.started': StepStartedPayloadSchema,
  'model.called': ModelCalledPayloadSchema,
  'tool.called': ToolCalledPayloadSchema,
  'http.exchange': HttpExchangePayloadSchema,
  'websocket.exchange': WebSocketExchangePayloadSchema,
  'context.compiled': OpenPayload,
  'fs.changed': FsChangedPayloadSchema,
  'db.changed': DbChangedPayloadSchema,
  'artifact.created': OpenPayload,
  'artifact.modified': OpenPayload,
  'state.changed': OpenPayload,
  nondeterminism: NondeterminismPayloadSchema,
  'validator.called': OpenPayload,
  divergence: DivergencePayloadSchema,
  'step.completed': StepCompletedPayloadSchema,
  'run.completed': RunCompletedPayloadSchema,
} as const;

/** The event envelope (seed 000 §40). Run-level events have stepId 0; steps count from 1. */
export const EventEnvelopeSchema = z
  .object({
    seq: z.number().int().nonnegative(),
    traceId: z.string().min(1),
    stepId: z.number().int().nonnegative(),
    parentStepId: z.number().int().nonnegative().optional(),
    type: EventTypeSchema,
    time: IsoTime,
    payload: z.unknown(),
  })
  .strict();

export const PriceEntrySchema = z
  .object({
    model: z.string(),
    inputPerMillion: z.number().nonnegative(),
    cachedInputPerMillion: z.number().nonnegative(),
    cacheWritePerMillion: z.number().nonnegative().optional(),
    outputPerMillion: z.number().nonnegative(),
    reasoningPerMillion: z.number().nonnegative().optional(),
  })
  .strict();

export const PriceSnapshotSchema = z
  .object({ version: z.string(), currency: z.string(), models: z.array(PriceEntrySchema) })
  .strict();

/**
 * A recording id: one folder name (a replay is written to recordings/<id>.replay-…), so no slash,
 * backslash, control character, `.` or `..`.
 */
export const RecordingIdSchema = z
  .string()
  .min(1)
  .max(200)
  .refine((id) => id !== '.' && id !== '..' && !/[/\\\u0000-\u001f\u007f]/.test(id), {
    message: 'expected a recording id (one folder name: no slash, backslash, control character, "." or "..")',
  });

/**
 * The agent env variable holding an in-process run's input (JSON), which a replay hands back to
 * the command it runs (record()'s `input`, runInput()). Redaction placeholders in it stay: they
 * are what the recorded requests carry.
 */
export const RUN_INPUT_ENV = 'TAPEDECK_RUN_INPUT';

/**
 * Variables that make a program load code, or find its programs and modules elsewhere (preloads,
 * shared libraries, shell start-up files, module paths, PATH), and tapedeck's own: a recording's
 * env is data, so a replay never takes these from it (the user gives them with --env).
 */
const LOADS_CODE =
  /^(?:PATH|NODE_OPTIONS|NODE_PATH|NODE_REPL_EXTERNAL_MODULE|LD_\w+|DYLD_\w+|BASH_ENV|ENV|BASHOPTS|SHELLOPTS|PS4|PROMPT_COMMAND|PYTHON\w*|PERL5?OPT|PERL5?LIB|PERLLIB|RUBYOPT|RUBYLIB|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|CLASSPATH|GCONV_PATH|GIT_\w+|TAPEDECK_\w+)$/;

/** Whether a recorded env variable may not be used by a replay (see LOADS_CODE); the run's input may. */
export function loadsCode(name: string): boolean {
  return name !== RUN_INPUT_ENV && LOADS_CODE.test(name);
}

/** An environment variable name, as a shell would accept it. */
const EnvNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,255}$/, 'expected an environment variable name');

/** The answer chain of a replay, as its manifest keeps it: what could answer a call the recording did not hold. */
export const ReplayChainSchema = z
  .object({
    /** Changes when what answers changes (config, mocks module). */
    fingerprint: z.string(),
    services: z.array(z.object({ name: z.string(), origin: z.string(), kind: z.enum(['command', 'image']) }).strict()),
    mocks: z.string().optional(),
    simulate: z
      .object({
        endpoint: z.string(),
        model: z.string(),
        origins: z.array(z.string()).optional(),
        allowMutating: z.array(z.string()).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/**
 * A connection the run opened that no capture layer records (the recorder records HTTP, and the
 * database it is given): a WebSocket after its upgrade, HTTP/2, a Postgres server not given,
 * anything else over TCP or TLS. Named in the manifest, once per kind and target, with how many
 * there were; a replay refuses them.
 */
export const UnrecordedConnectionSchema = z
  .object({
    kind: z.enum(['upgrade', 'http2', 'postgres', 'tls', 'tcp', 'unix']),
    /** host:port, a Unix socket's path, or an upgrade's URL. */
    target: z.string().min(1).max(2048),
    /** An upgrade's protocol (websocket). */
    protocol: z.string().max(200).optional(),
    /** The package that opened it (node_modules/<name>), when not the agent's own code. */
    by: z.string().max(214).optional(),
    connections: z.number().int().positive(),
  })
  .strict();

export const ManifestSchema = z
  .object({
    format: z.literal(FORMAT),
    id: RecordingIdSchema,
    name: z.string(),
    createdAt: IsoTime,
    /**
     * complete | failed | incomplete (cut short: read to its last whole line) | timed-out (a replay
     * stopped by its watchdog) | interrupted (stopped by a signal to tapedeck): the last two are
     * closed whole, and `stopped` says why and where.
     */
    status: z.enum(['complete', 'incomplete', 'failed', 'timed-out', 'interrupted']),
    stopped: StoppedSchema.optional(),
    agent: z
      .object({
        command: z.array(z.string()),
        cwd: z.string(),
        entry: z.string().optional(),
        /** Environment given to the agent explicitly (not inherited), secrets redacted; replay restores it. */
        env: z.record(EnvNameSchema, z.string()).optional(),
        /**
         * The names (never the values) of the variables the agent inherited, less the terminal
         * session's own: a replay names those not set when it runs.
         */
        envNames: z.array(EnvNameSchema).max(4096).optional(),
      })
      .strict(),
    runtime: z
      .object({
        node: z.string(),
        platform: z.string(),
        sdkVersions: z.record(z.string(), z.string()),
        /** The agent's time zone (IANA): a replay runs the agent in it (TZ). */
        timeZone: z.string().regex(TIME_ZONE, 'expected an IANA time zone name').optional(),
        /** The agent's default locale (BCP 47): a replay gives it to the agent (LC_MESSAGES). */
        locale: z.string().regex(LOCALE, 'expected a BCP 47 locale tag').optional(),
      })
      .strict(),
    prompt: z.object({ hash: z.string().optional(), source: z.string().optional() }).strict().optional(),
    world: z
      .object({
        /** The fs root that was snapshotted (absolute path on the recording machine). */
        fsRoot: z
          .string()
          .refine((p) => p.startsWith('/') && !/[\u0000]/.test(p) && !p.split('/').includes('..'), {
            message: 'expected an absolute path without ".." segments',
          })
          .optional(),
        /** The database URL with credentials removed, and the schemas snapshotted. */
        db: z
          .object({
            url: AbsoluteUrl,
            schemas: z.array(z.string()),
            env: EnvNameSchema.optional(),
            /**
             * snapshot: every row of the schemas, before and after, and every change (test and
             * staging databases). observed: only the rows the run read and wrote through its
             * own clients (production); `unobserved` counts its statements that capture could
             * not follow, by kind.
             */
            mode: z.enum(['snapshot', 'observed']).optional(),
            unobserved: z.record(z.string().max(200), z.number().int().nonnegative()).optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    /** Connections the run opened that no capture layer records (at most 100 kinds and targets). */
    unrecorded: z.array(UnrecordedConnectionSchema).max(100).optional(),
    /** Tags the run was given while it was recorded (record()'s ctx.tag; sampling rules keep by tag). */
    tags: z.array(z.string().max(200)).max(100).optional(),
    replayOf: RecordingIdSchema.optional(),
    replay: z
      .object({
        mode: z.enum(['exact', 'counterfactual']),
        forkAt: z.number().int().optional(),
        until: z.number().int().optional(),
        overrides: z.record(z.string(), z.unknown()),
        /** The isolation the agent's tree ran in (sandbox/os): the OS sandbox, a network namespace alone, or none. */
        isolation: z.enum(['bwrap', 'unshare', 'none']).optional(),
        /** The answer chain that stood behind the recording (the project file's services, mocks, simulator). */
        chain: ReplayChainSchema.optional(),
      })
      .strict()
      .optional(),
    prices: PriceSnapshotSchema.optional(),
    redaction: z.object({ rules: z.array(z.string()), keyId: z.string() }).strict(),
    integrity: z.object({ eventsSha256: Sha256.optional(), events: z.number().int().nonnegative() }).strict(),
    /**
     * This machine's HMAC over the id and the agent's command, cwd and env (src/recording/seal.ts):
     * a replay runs the recorded command only when it verifies with the local key.
     */
    seal: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'expected a seal: 64 lowercase hex digits')
      .optional(),
  })
  .strict();

/** fs.json: path (POSIX, relative to the root) -> entry; contents inline or blobs named by sha256. */
export const FsSnapshotSchema = z.object({ files: z.record(z.string(), FileEntrySchema) }).strict();

/** A Postgres name as the catalog holds it: 1 to 63 bytes, no NUL. Always quoted where it is used. */
export const PgNameSchema = z
  .string()
  .min(1)
  .refine((name) => Buffer.byteLength(name, 'utf8') <= 63 && !name.includes('\u0000'), {
    message: 'expected a Postgres name (1 to 63 bytes, no NUL)',
  });

/**
 * The defaults the database server fills from its own clock. A replay's sandbox evaluates them
 * again, at replay time, so such a column may hold another value than the recorded run's: the
 * state diff marks a row whose only difference is there (`serverClock`) and an exact replay's
 * end-state check shows it without calling it a difference.
 */
export const SERVER_CLOCK_FUNCTIONS = [
  'now',
  'current_timestamp',
  'current_date',
  'current_time',
  'localtimestamp',
  'clock_timestamp',
  'statement_timestamp',
  'transaction_timestamp',
] as const;

/** The column defaults a sandbox recreates; any other default expression is left out of the description. */
export const DEFAULT_FUNCTIONS = [
  ...SERVER_CLOCK_FUNCTIONS,
  'gen_random_uuid',
  'random',
  // uuid-ossp's: rendered only when the sandbox holds the extension (src/postgres/extensions.ts).
  'uuid_generate_v1',
  'uuid_generate_v1mc',
  'uuid_generate_v4',
] as const;

/** A column default as data: the next value of a sequence, a constant, or one of a few built-in functions. */
export const ColumnDefaultSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('sequence'), schema: PgNameSchema, name: PgNameSchema }).strict(),
  z.object({ kind: z.literal('value'), value: z.union([z.string(), z.number(), z.boolean(), z.null()]) }).strict(),
  z.object({ kind: z.literal('function'), name: z.enum(DEFAULT_FUNCTIONS) }).strict(),
]);

/**
 * The operators and functions an expression as data may use (a generated column's, a CHECK's;
 * src/postgres/sql.ts renders them): arithmetic, comparison, LIKE (`~~`) and regex matches, boolean
 * logic, and IS [NOT] NULL.
 */
export const GENERATED_OPERATORS = [
  '+',
  '-',
  '*',
  '/',
  '%',
  '||',
  '=',
  '<>',
  '<',
  '<=',
  '>',
  '>=',
  '~~',
  '!~~',
  '~~*',
  '!~~*',
  '~',
  '~*',
  '!~',
  '!~*',
  'and',
  'or',
  'not',
  'is null',
  'is not null',
] as const;
export const GENERATED_FUNCTIONS = [
  'abs',
  'array_length',
  'btrim',
  'cardinality',
  'ceil',
  'char_length',
  'coalesce',
  'concat',
  'concat_ws',
  'floor',
  'greatest',
  'least',
  'left',
  'length',
  'lower',
  'ltrim',
  'md5',
  'nullif',
  'octet_length',
  'replace',
  'right',
  'round',
  'rtrim',
  'substr',
  'trunc',
  'upper',
] as const;

/**
 * An expression as data: a generated column's (`GENERATED ALWAYS AS (qty * price) STORED`) or a
 * CHECK constraint's (`qty > 0 AND status = ANY (ARRAY['a', 'b'])`): columns of its table,
 * constants, arrays, allow-listed operators, functions and casts. A sandbox composes its SQL from
 * these parts; an expression outside them is not described (a generated column is then a plain
 * one, a check is named in `unbuilt`).
 */
export type GeneratedExpr =
  | { column: string }
  | { value: string | number | boolean | null }
  | { op: (typeof GENERATED_OPERATORS)[number]; args: GeneratedExpr[]; quantified?: 'any' | 'all' }
  | { array: GeneratedExpr[] }
  | { call: (typeof GENERATED_FUNCTIONS)[number]; args: GeneratedExpr[] }
  | { cast: string; arg: GeneratedExpr };

const MAX_GENERATED_DEPTH = 32;
const depthOf = (e: GeneratedExpr): number =>
  'args' in e
    ? 1 + Math.max(0, ...e.args.map(depthOf))
    : 'array' in e
      ? 1 + Math.max(0, ...e.array.map(depthOf))
      : 'arg' in e
        ? 1 + depthOf(e.arg)
        : 1;

export const GeneratedExprSchema: z.ZodType<GeneratedExpr> = z.lazy(() =>
  z.union([
    z.object({ column: PgNameSchema }).strict(),
    z.object({ value: z.union([z.string().max(10_000), z.number(), z.boolean(), z.null()]) }).strict(),
    z
      .object({
        op: z.enum(GENERATED_OPERATORS),
        args: z.array(GeneratedExprSchema).min(1).max(2),
        /** `a = ANY (b)`, `a <> ALL (b)`: the operator against each element of the array b. */
        quantified: z.enum(['any', 'all']).optional(),
      })
      .strict(),
    z.object({ array: z.array(GeneratedExprSchema).max(10_000) }).strict(),
    z.object({ call: z.enum(GENERATED_FUNCTIONS), args: z.array(GeneratedExprSchema).max(16) }).strict(),
    z.object({ cast: z.string().min(1).max(200), arg: GeneratedExprSchema }).strict(),
  ]),
);

/**
 * A type or operator class not built into Postgres, by its qualified name: an enum's, a domain's, or
 * an extension's (`extension` names it). A sandbox names it only when it built it or created the
 * extension; otherwise the column is built from the type's text (src/postgres/sql.ts sqlType).
 */
export const PgObjectRefSchema = z
  .object({ schema: PgNameSchema, name: PgNameSchema, extension: PgNameSchema.optional() })
  .strict();

export const DbColumnSchema = z
  .object({
    name: PgNameSchema,
    /** The type as the catalog prints it (format_type); a sandbox maps it onto an allow-list, else text. */
    type: z.string().min(1).max(200),
    nullable: z.boolean(),
    default: ColumnDefaultSchema.optional(),
    identity: z.enum(['always', 'by default']).optional(),
    /** The enum type of the column (or of its array's elements), when the snapshot describes it in `enums`. */
    enum: z.object({ schema: PgNameSchema, name: PgNameSchema }).strict().optional(),
    /** The type (or its array's element type) when it is not built in: a domain's or an extension's. */
    udt: PgObjectRefSchema.optional(),
    /**
     * A stored generated column: its expression as data, or `null` when the expression is outside
     * what GeneratedExpr describes (the sandbox then holds the column as a plain one).
     */
    generated: GeneratedExprSchema.nullable()
      .refine((e) => e === null || depthOf(e) <= MAX_GENERATED_DEPTH, {
        message: `expected an expression at most ${MAX_GENERATED_DEPTH} deep`,
      })
      .optional(),
  })
  .strict();

const PgColumns = z.array(PgNameSchema).min(1).max(64);
const BoundedExprSchema = GeneratedExprSchema.refine((e) => depthOf(e) <= MAX_GENERATED_DEPTH, {
  message: `expected an expression at most ${MAX_GENERATED_DEPTH} deep`,
});
/** The operators an exclusion constraint may compare with (btree_gist's, ranges', geometry's). */
export const EXCLUSION_OPERATORS = ['=', '<>', '&&', '@>', '<@', '-|-', '~=', '&<', '&>', '<<', '>>'] as const;
/** A partition bound's value: a constant (Postgres converts it to the key's type) or MINVALUE / MAXVALUE. */
const BoundValueSchema = z.union([
  z.string().max(10_000),
  z.number(),
  z.boolean(),
  z.null(),
  z.object({ bound: z.enum(['minvalue', 'maxvalue']) }).strict(),
]);
export const PartitionBoundSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('default') }).strict(),
  z.object({ kind: z.literal('list'), values: z.array(BoundValueSchema).min(1).max(10_000) }).strict(),
  z
    .object({
      kind: z.literal('range'),
      from: z.array(BoundValueSchema).min(1).max(32),
      to: z.array(BoundValueSchema).min(1).max(32),
    })
    .strict(),
  z
    .object({
      kind: z.literal('hash'),
      modulus: z.number().int().min(1).max(1_000_000),
      remainder: z.number().int().min(0).max(1_000_000),
    })
    .strict(),
]);
/** PARTITION BY: the strategy and the key's columns (a key with an expression is not described). */
const PartitionBySchema = z.object({ strategy: z.enum(['range', 'list', 'hash']), columns: PgColumns }).strict();
const FK_ACTIONS = ['no action', 'restrict', 'cascade', 'set null', 'set default'] as const;

export const DbTableSchema = z
  .object({
    schema: PgNameSchema,
    name: PgNameSchema,
    columns: z.array(DbColumnSchema).max(1600),
    primaryKey: z.array(PgNameSchema).max(64),
    /** Unique constraints (the primary key aside). */
    unique: z.array(z.object({ name: PgNameSchema, columns: PgColumns }).strict()).optional(),
    foreignKeys: z
      .array(
        z
          .object({
            name: PgNameSchema,
            columns: PgColumns,
            references: z.object({ schema: PgNameSchema, table: PgNameSchema, columns: PgColumns }).strict(),
            onDelete: z.enum(FK_ACTIONS).optional(),
            onUpdate: z.enum(FK_ACTIONS).optional(),
            /** DEFERRABLE, checked at commit (`deferred`) or at each statement until SET CONSTRAINTS says otherwise. */
            deferrable: z.enum(['deferred', 'immediate']).optional(),
          })
          .strict(),
      )
      .optional(),
    /** Indexes on plain columns that no constraint owns (expression and partial indexes are left out). */
    indexes: z
      .array(
        z
          .object({
            name: PgNameSchema,
            columns: PgColumns,
            unique: z.boolean(),
            /** hnsw and ivfflat: pgvector's, built when the sandbox holds the extension. */
            method: z.enum(['btree', 'hash', 'gin', 'gist', 'brin', 'spgist', 'hnsw', 'ivfflat']),
            /** Each column's operator class when it is not its type's default (`gin_trgm_ops`), else null. */
            opclasses: z.array(PgObjectRefSchema.nullable()).max(64).optional(),
            /** Its storage parameters that shape what an approximate index answers (pgvector's m, ef_construction, lists). */
            options: z
              .object({
                m: z.number().int().min(2).max(1000).optional(),
                ef_construction: z.number().int().min(4).max(10_000).optional(),
                lists: z.number().int().min(1).max(1_000_000).optional(),
              })
              .strict()
              .optional(),
          })
          .strict(),
      )
      .optional(),
    /** The tables it inherits from (INHERITS); each table's rows are its own (read with ONLY). */
    inherits: z
      .array(z.object({ schema: PgNameSchema, name: PgNameSchema }).strict())
      .max(64)
      .optional(),
    /** CHECK constraints of its own (inherited ones come with their parent's), the expression as data. */
    checks: z
      .array(
        z.object({ name: PgNameSchema, expression: BoundedExprSchema, noInherit: z.boolean().optional() }).strict(),
      )
      .max(1000)
      .optional(),
    /** EXCLUDE constraints on plain columns: each column with its operator class (null: the default) and operator. */
    exclusions: z
      .array(
        z
          .object({
            name: PgNameSchema,
            method: z.enum(['gist', 'spgist', 'btree', 'hash']),
            elements: z
              .array(
                z
                  .object({
                    column: PgNameSchema,
                    opclass: PgObjectRefSchema.nullable(),
                    operator: z.enum(EXCLUSION_OPERATORS),
                  })
                  .strict(),
              )
              .min(1)
              .max(32),
            deferrable: z.enum(['deferred', 'immediate']).optional(),
          })
          .strict(),
      )
      .max(1000)
      .optional(),
    /** A partitioned table: its partitioning; its rows are those of every partition. */
    partitionBy: PartitionBySchema.optional(),
    /**
     * Its partitions, each after the one it is a partition of (`of`: this table or one of them, a
     * partition that is itself partitioned having `partitionBy`); their rows are the table's.
     */
    partitions: z
      .array(
        z
          .object({
            schema: PgNameSchema,
            name: PgNameSchema,
            of: z.object({ schema: PgNameSchema, name: PgNameSchema }).strict(),
            bound: PartitionBoundSchema,
            partitionBy: PartitionBySchema.optional(),
          })
          .strict(),
      )
      .max(10_000)
      .optional(),
    /** Rows sorted by primary key, values as JSON (timestamps as ISO strings, bigint/numeric as strings). */
    rows: z.array(RowSchema),
  })
  .strict();

const PgInteger = z.string().regex(/^-?\d{1,19}$/, 'expected an integer as a string');

/** A sequence and its position: exact replay hands out the ids the recorded run got. */
export const DbSequenceSchema = z
  .object({
    schema: PgNameSchema,
    name: PgNameSchema,
    type: z.enum(['smallint', 'integer', 'bigint']),
    start: PgInteger,
    increment: PgInteger,
    min: PgInteger,
    max: PgInteger,
    cycle: z.boolean(),
    /** last_value and is_called, as setval takes them. */
    last: PgInteger,
    called: z.boolean(),
    /** The column that owns it (serial and identity columns). */
    ownedBy: z.object({ table: PgNameSchema, column: PgNameSchema }).strict().optional(),
    /** An identity column's sequence: created with its table, not on its own. */
    identity: z.boolean().optional(),
  })
  .strict();

/**
 * db.json: the schema description (tables, columns, types, keys, indexes, sequences) and the rows
 * of every table. `ddl` is a readable rendering of the same description; it is never executed.
 * A recording made before the description existed has no `sequences`: the reader derives the
 * description from its `ddl` text (parsing, never running it).
 */
/** The kinds of schema object a sandbox does not rebuild: their definitions are SQL, never run from a recording. */
export const UNBUILT_KINDS = [
  'view',
  'materialized view',
  'trigger',
  'check',
  'policy',
  'rule',
  'function',
  'enum',
  'exclusion constraint',
  'partition',
  'default',
] as const;

export const DbSnapshotSchema = z
  .object({
    schemas: z.array(PgNameSchema),
    ddl: z.array(z.string()),
    tables: z.array(DbTableSchema),
    sequences: z.array(DbSequenceSchema).optional(),
    /** The enum types of the captured schemas, their labels in order (a sandbox creates them). */
    enums: z
      .array(
        z
          .object({ schema: PgNameSchema, name: PgNameSchema, labels: z.array(z.string().min(1).max(63)).max(10_000) })
          .strict(),
      )
      .max(10_000)
      .optional(),
    /**
     * The extensions installed in the database (plpgsql aside) and their schemas: a sandbox creates
     * those on its allow-list it can load (src/postgres/extensions.ts), never by running recorded SQL.
     */
    extensions: z
      .array(z.object({ name: PgNameSchema, schema: PgNameSchema }).strict())
      .max(1000)
      .optional(),
    /**
     * The domains of the captured schemas: their base type (as a column's `type` and `udt`) and NOT NULL.
     * A sandbox creates each over its base type; their CHECKs are named in `unbuilt`.
     */
    domains: z
      .array(
        z
          .object({
            schema: PgNameSchema,
            name: PgNameSchema,
            type: z.string().min(1).max(200),
            udt: PgObjectRefSchema.optional(),
            nullable: z.boolean(),
          })
          .strict(),
      )
      .max(10_000)
      .optional(),
    /**
     * The objects of the captured schemas the description leaves out, by name: what a replay says
     * its sandbox lacks.
     */
    unbuilt: z
      .array(
        z
          .object({
            kind: z.enum(UNBUILT_KINDS),
            schema: PgNameSchema,
            name: PgNameSchema,
            /** The table a trigger, check, policy, rule, partition or default belongs to (a domain's check: the domain). */
            table: PgNameSchema.optional(),
          })
          .strict(),
      )
      .max(10_000)
      .optional(),
  })
  .strict();
