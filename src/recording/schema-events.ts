// The recording format's events (src/recording/schema.ts): the seed's state types and event types,
// each event kind's payload (an exchange's: schema-exchange.ts), and the event envelope.
import * as z from 'zod';
import {
  BodySchema,
  HttpExchangePayloadSchema,
  ProcessNameSchema,
  UsageSchema,
  WebSocketExchangePayloadSchema,
} from './schema-exchange.js';
import { IsoTime, RowSchema } from './schema-fields.js';
import { FileEntrySchema } from './schema-files.js';

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
    /**
     * In a replay, a call with no exchange of its own that the recording did not hold: a file step
     * (sandbox/preload/shared-file-ops.mjs) whose call (name, path, result) no recorded file step
     * made, answered by the sandbox's copy of the workspace; or a request over a child's stdio
     * (MCP) whose server, run again in the sandbox, answered otherwise than recorded. Absent: the
     * recording held it, or not a replay (src/recording/provenance.ts reads it).
     */
    servedFrom: z.literal('sandbox').optional(),
  })
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

export const RunResponseSchema = z
  .object({
    status: z.number().int().min(100).max(999).optional(),
    clientLeft: z.boolean(),
  })
  .strict();

export const RunCompletedPayloadSchema = z
  .object({
    status: z.enum(['complete', 'failed', 'timed-out', 'interrupted']),
    exitCode: z.number().int().nullable(),
    signal: z.string().nullable().optional(),
    /** The agent's final answer text, when known (last model output). */
    finalOutput: z.string().optional(),
    /**
     * A server run's answer (the server adapters): the status its client was sent (absent when
     * none was: the client left, or the handler threw, before the headers went out), and whether
     * the client left before the answer's end.
     */
    response: RunResponseSchema.optional(),
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
