// The recording format's calls over the wire (src/recording/schema.ts): bodies, stream chunks, an HTTP
// exchange's request and response, provider usage, the values drawn when an answer came, and a
// WebSocket conversation's turns.
import * as z from 'zod';
import { AbsoluteUrl, Headers, IsoTime, Sha256 } from './schema-fields.js';

/** How a replay's exchange was answered (see HttpExchangePayloadSchema.servedFrom). */
export const SERVED_FROM = ['recording', 'sandbox', 'mock', 'simulated', 'live', 'blocked'] as const;

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
    /**
     * The stream was cut at the recorder's size cap (`maxBodyBytes`, or what one event may hold):
     * `chunks` are its first ones, and `streamedBytes` how many bytes it streamed in all.
     */
    truncated: z.boolean().optional(),
    streamedBytes: z.number().int().nonnegative().optional(),
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
    /** Of cacheWrite, the tokens written to the cache for 1 hour (Anthropic, Bedrock): billed at their own price. */
    cacheWrite1h: z.number().int().nonnegative().optional(),
    /**
     * Tools the provider ran itself inside the call and bills per use, by name: `web_search`: 2 (Anthropic
     * `server_tool_use`, OpenAI Responses `web_search_call` items, Gemini's grounding search queries…).
     */
    serverTools: z.record(z.string().min(1), z.number().int().nonnegative()).optional(),
    /** The service tier the provider says it served (and bills) the call at, when not its standard one: `flex`, `priority`. */
    serviceTier: z.string().min(1).optional(),
    /**
     * The stream ended without the provider's final count of output tokens (the client cut it: an
     * Anthropic stream without its message_delta's usage): the input buckets are the provider's, `output` is
     * only what it had reported so far (message_start's placeholder), not what the call made.
     */
    outputIncomplete: z.literal(true).optional(),
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
     * A node:http request (and what is built on it: axios, got): whether its socket was a
     * kept-alive one its agent reused (true) or a new one that connected (false). A replay's
     * socket does the same, with a new one's 'lookup', 'connect' and 'secureConnect': got times its
     * requests by those events. Left out for other clients, under world capture (the interceptors'
     * sockets are new every time), and by recordings made before it.
     */
    reusedSocket: z.boolean().optional(),
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
