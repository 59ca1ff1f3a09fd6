// The Recording contract: zod schemas for the manifest, the event envelope, every event
// payload and the world snapshots. Every module reads and writes recordings through these.
import { z } from 'zod';

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

/** The seed's event categories (000 §40) plus http.exchange, fs/db changes, nondeterminism and divergence. */
export const EVENT_TYPES = [
  'run.started',
  'step.started',
  'model.called',
  'tool.called',
  'http.exchange',
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
const IsoTime = z.string().min(1);
const Headers = z.record(z.string(), z.string());

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

/** One server-sent chunk of a streamed response: its raw bytes (utf8) and ms offset from the response start. */
export const StreamChunkSchema = z.object({ offsetMs: z.number().nonnegative(), data: z.string() }).strict();

export const HttpRequestSchema = z
  .object({ method: z.string().min(1), url: z.string().min(1), headers: Headers, body: BodySchema.optional() })
  .strict();

export const HttpResponseSchema = z
  .object({
    status: z.number().int(),
    statusText: z.string().optional(),
    headers: Headers,
    body: BodySchema.optional(),
    /** Present for streamed (SSE) responses; the concatenation of chunk data is the body. */
    chunks: z.array(StreamChunkSchema).optional(),
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
     * In a replay: how this exchange was answered (its provenance): `recording` (served from the
     * recording), `sandbox` (a sandboxed service), `mock` (an msw handler), `simulated` (written by a
     * model), `live` (a model call sent to the model endpoint), `blocked` (held back, never sent).
     * Recordings made before sandbox/mock/simulated existed use the first three names only.
     */
    servedFrom: z.enum(SERVED_FROM).optional(),
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
    output: z.object({ text: z.string().optional(), toolCalls: z.array(ToolCallSchema) }).strict(),
    stopReason: z.string().optional(),
    usage: UsageSchema.optional(),
    latencyMs: z.number().nonnegative(),
    ttftMs: z.number().nonnegative().optional(),
  })
  .strict();

export const ToolCalledPayloadSchema = z
  .object({
    exchangeId: z.string().optional(),
    /** http | mcp | in-process | db */
    kind: z.enum(['http', 'mcp', 'in-process', 'db']),
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

/** One file's entry in a snapshot or a change. Content in `blob` (sha256 of the bytes). */
export const FileEntrySchema = z
  .object({ mode: z.number().int(), size: z.number().int().nonnegative(), sha256: Sha256 })
  .strict();

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
  })
  .strict();

export const NondeterminismPayloadSchema = z
  .object({
    kind: z.enum(['clock', 'random', 'uuid', 'randomBytes', 'hrtime']),
    /** The sequence of values handed to the agent since the previous nondeterminism event of this kind. */
    values: z.array(z.union([z.number(), z.string()])),
  })
  .strict();

export const StepStartedPayloadSchema = z
  .object({ stateType: StateTypeSchema, name: z.string(), agentId: z.string().optional() })
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

export const RunCompletedPayloadSchema = z
  .object({
    status: z.enum(['complete', 'failed']),
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable().optional(),
    /** The agent's final answer text, when known (last model output). */
    finalOutput: z.string().optional(),
  })
  .strict();

export const DivergencePayloadSchema = z
  .object({
    kind: z.enum(['unmatched-request', 'different-request', 'extra-call', 'missing-call', 'blocked-connection']),
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

export const ManifestSchema = z
  .object({
    format: z.literal(FORMAT),
    id: z.string().min(1),
    name: z.string(),
    createdAt: IsoTime,
    status: z.enum(['complete', 'incomplete', 'failed']),
    agent: z
      .object({
        command: z.array(z.string()),
        cwd: z.string(),
        entry: z.string().optional(),
        /** Environment given to the agent explicitly (not inherited), secrets redacted; replay restores it. */
        env: z.record(z.string(), z.string()).optional(),
      })
      .strict(),
    runtime: z
      .object({ node: z.string(), platform: z.string(), sdkVersions: z.record(z.string(), z.string()) })
      .strict(),
    prompt: z.object({ hash: z.string().optional(), source: z.string().optional() }).strict().optional(),
    world: z
      .object({
        /** The fs root that was snapshotted (absolute path on the recording machine). */
        fsRoot: z.string().optional(),
        /** The database URL with credentials removed, and the schemas snapshotted. */
        db: z
          .object({ url: z.string(), schemas: z.array(z.string()), env: z.string().optional() })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    /** Tags the run was given while it was recorded (record()'s ctx.tag; sampling rules keep by tag). */
    tags: z.array(z.string().max(200)).max(100).optional(),
    replayOf: z.string().optional(),
    replay: z
      .object({
        mode: z.enum(['exact', 'counterfactual']),
        forkAt: z.number().int().optional(),
        until: z.number().int().optional(),
        overrides: z.record(z.string(), z.unknown()),
      })
      .strict()
      .optional(),
    prices: PriceSnapshotSchema.optional(),
    redaction: z.object({ rules: z.array(z.string()), keyId: z.string() }).strict(),
    integrity: z.object({ eventsSha256: Sha256.optional(), events: z.number().int().nonnegative() }).strict(),
  })
  .strict();

/** fs.json: path (POSIX, relative to the root) -> entry; contents are blobs named by sha256. */
export const FsSnapshotSchema = z.object({ files: z.record(z.string(), FileEntrySchema) }).strict();

export const DbTableSchema = z
  .object({
    schema: z.string(),
    name: z.string(),
    columns: z.array(z.object({ name: z.string(), type: z.string(), nullable: z.boolean() }).strict()),
    primaryKey: z.array(z.string()),
    /** Rows sorted by primary key, values as JSON (timestamps as ISO strings, bigint/numeric as strings). */
    rows: z.array(RowSchema),
  })
  .strict();

/** db.json: the DDL to recreate the schemas, and the rows of every table. */
export const DbSnapshotSchema = z
  .object({ schemas: z.array(z.string()), ddl: z.array(z.string()), tables: z.array(DbTableSchema) })
  .strict();
