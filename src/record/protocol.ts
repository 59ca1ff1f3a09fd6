// The messages the capture layer (src/record/preload/record.mjs) sends to the recording session,
// one JSON object per line over IPC (or directly, in-process). Validated with zod on arrival.
// The parts both preloads share (bodies, errors, nondeterminism batches) are in sandbox/protocol.ts.
import * as z from 'zod';
import {
  HeadersSchema as Headers,
  HelloSchema,
  HTTP_REQUEST,
  NdBatchSchema,
  STDIO_RPC,
  UnhookedMessageSchema,
  UnwatchedMessageSchema,
  WireBodySchema,
  WireErrorSchema as WireError,
} from '../../sandbox/protocol.js';
import {
  DbChangedPayloadSchema,
  DrawnAtHeadSchema,
  StateTypeSchema,
  UnrecordedConnectionSchema,
} from '../recording/schema.js';

export { type WireBody, WireBodySchema, wireBytes } from '../../sandbox/protocol.js';

/** `protocol`: HTTP/2 (record-http2.mjs); none: HTTP/1.x. */
const REQUEST = {
  id: z.string(),
  pid: z.number(),
  ts: z.number(),
  ...HTTP_REQUEST,
  protocol: z.enum(['h2', 'h2c']).optional(),
  /** A node:http request's socket was a kept-alive one its agent reused (false: a new one). */
  reusedSocket: z.boolean().optional(),
};
const RESPONSE_HEAD = { ts: z.number(), status: z.number(), statusText: z.string().optional(), headers: Headers };
/** Trailing headers after the body (HTTP/2's: gRPC's status). */
const TRAILERS = { trailers: Headers.optional() };
/**
 * A file under the fs root as the agent's process read it at a step boundary or right after its
 * own file call (record-quiet.mjs): gone, or its mode, stat key and bytes (base64). The session
 * applies these instead of draining (src/record/world/fs.ts, apply).
 */
export const FileLookSchema = z.union([
  z.object({ path: z.string(), gone: z.literal(true) }),
  z.object({ path: z.string(), mode: z.number().int().min(0).max(0o7777), key: z.string(), data: z.string() }),
]);
export type FileLook = z.infer<typeof FileLookSchema>;

/**
 * On the message that ends a call or a tool: `quiet`: the agent saw nothing under the fs root
 * change since its last step boundary (but `files`, which it read itself) and went on without
 * waiting (src/record/preload/record-quiet.mjs), so the session must not drain the world for it
 * (what it would find now came later). `files` are applied first in either case.
 */
const QUIET = { quiet: z.boolean().optional(), files: z.array(FileLookSchema).optional() };
/**
 * On a step barrier and a message whose handling drains the world: the files under the fs root
 * (relative paths) that file calls of the agent's process still in flight are changing. The drain
 * leaves them to those calls' own messages (src/record/world/fs.ts), so calls that overlap each
 * keep their own changes.
 */
const BUSY = { busy: z.array(z.string()).optional() };
/**
 * On the message with a response's head (a streamed `res`, an `xchg`): the values the calling
 * process had drawn when the head reached it, counted as it came (the message itself is sent once
 * the body has ended). Written to the exchange as `drawn` (HttpExchangePayloadSchema).
 */
const DRAWN = { drawn: DrawnAtHeadSchema.optional() };

/**
 * One WebSocket message as the recorder read it off the connection (record-websocket.mjs): its
 * type, its ms offset from its turn's start, its bytes (none for a close), a close's code and
 * reason, and for a server's message the values the agent's process had drawn when it came.
 */
export const WireWsFrameSchema = z.object({
  type: z.enum(['text', 'binary', 'close', 'ping', 'pong']),
  off: z.number(),
  data: WireBodySchema.optional(),
  code: z.number().int().optional(),
  reason: z.string().optional(),
  ...DRAWN,
});
export type WireWsFrame = z.infer<typeof WireWsFrameSchema>;

export const CaptureMessageSchema = z.discriminatedUnion('t', [
  HelloSchema,
  z.object({ t: z.literal('req'), ...REQUEST }),
  z.object({
    t: z.literal('res'),
    id: z.string(),
    ...RESPONSE_HEAD,
    /** Streamed responses: chunks and an `end` message follow. */
    stream: z.boolean().optional(),
    body: WireBodySchema.optional(),
    /** Time the whole body was read (non-streamed responses). */
    end: z.number().optional(),
    error: WireError.optional(),
    ...QUIET,
    ...BUSY,
    ...DRAWN,
  }),
  /** `encoding: 'base64'`: the chunk's bytes are not text and `data` is their base64. */
  z.object({
    t: z.literal('chunk'),
    id: z.string(),
    off: z.number(),
    data: z.string(),
    encoding: z.literal('base64').optional(),
  }),
  /** A whole non-streamed exchange in one message (request, response, end). */
  z.object({
    t: z.literal('xchg'),
    ...REQUEST,
    res: z.object({ ...RESPONSE_HEAD, body: WireBodySchema.optional(), ...TRAILERS }).optional(),
    end: z.number(),
    error: WireError.optional(),
    ...QUIET,
    ...BUSY,
    ...DRAWN,
  }),
  z.object({
    t: z.literal('end'),
    id: z.string(),
    ts: z.number(),
    error: WireError.optional(),
    ...TRAILERS,
    ...BUSY,
  }),
  z.object({
    t: z.literal('tool'),
    id: z.string(),
    pid: z.number(),
    name: z.string(),
    ts: z.number(),
    end: z.number(),
    args: z.unknown(),
    result: z.unknown().optional(),
    error: WireError.optional(),
    stateType: StateTypeSchema.optional(),
    mutating: z.boolean().optional(),
    /** Row changes the tool's own database statements committed (observed world capture): its effects. */
    db: z.array(DbChangedPayloadSchema).optional(),
    ...QUIET,
    ...BUSY,
  }),
  /** A connection no capture layer records (record-sockets.mjs): another upgrade, HTTP/2, Redis, a database not given, a WebSocket not followed to its end. */
  z.object({
    t: z.literal('socket'),
    pid: z.number(),
    ts: z.number(),
    ...UnrecordedConnectionSchema.omit({ connections: true }).shape,
  }),
  UnhookedMessageSchema,
  UnwatchedMessageSchema,
  /**
   * One turn of a WebSocket conversation (record-websocket.mjs): the open (`request`, `response`)
   * or a message the agent sent (`sent`), with the server's messages until its next one (`received`);
   * `closed`: the connection ended in this turn.
   */
  z.object({
    t: z.literal('ws'),
    id: z.string(),
    conn: z.string(),
    pid: z.number(),
    turn: z.number().int().nonnegative(),
    url: z.string(),
    kind: z.enum(['open', 'message', 'close', 'push']),
    ts: z.number(),
    end: z.number(),
    request: z.object({ method: z.string(), url: z.string(), headers: Headers }).optional(),
    response: z.object(RESPONSE_HEAD).optional(),
    sent: WireWsFrameSchema.optional(),
    received: z.array(WireWsFrameSchema),
    closed: z.boolean().optional(),
  }),
  /** A request over a child's stdio and its answer (MCP over stdio). */
  z.object({ t: z.literal('rpc'), id: z.string(), pid: z.number(), ...STDIO_RPC, ...BUSY }),
  z.object({
    t: z.literal('nd'),
    pid: z.number(),
    ts: z.number(),
    batches: NdBatchSchema,
  }),
  /**
   * A step barrier before (`req`) or after (`res`) a call; `start`: the agent's first process
   * waits, before its own code runs, until the world's first snapshot is taken.
   */
  z.object({
    t: z.literal('sync'),
    n: z.number(),
    reason: z.enum(['req', 'res', 'start']),
    id: z.string().optional(),
    ...BUSY,
  }),
  /** What changed under the fs root before a call, read by the agent's process at the boundary (it did not wait). */
  z.object({ t: z.literal('files'), ts: z.number(), files: z.array(FileLookSchema), quiet: z.boolean().optional() }),
  /** Row changes the run's own database statements committed (observed world capture), in order. */
  z.object({ t: z.literal('db'), ts: z.number(), changes: z.array(DbChangedPayloadSchema) }),
]);
export type CaptureMessage = z.infer<typeof CaptureMessageSchema>;
export type MessageOf<T extends CaptureMessage['t']> = Extract<CaptureMessage, { t: T }>;
