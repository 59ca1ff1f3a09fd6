// The process boundary between the preloads (in the agent's processes) and the sessions (in
// tapedeck's process), declared once: zod schemas, and the types inferred from them. The
// sessions validate what arrives with the schemas; the preloads (plain .mjs, type-checked with
// checkJs, tsconfig.preload.json) build what they send against the types, through JSDoc.
// Record's capture messages are in src/record/protocol.ts, built on the shared parts here; the
// replay's config, questions, notices, replies and exit dumps are here, beside the replay
// preloads (sandbox/preload/replay*.mjs), so neither side imports the other's layer.
import * as z from 'zod';
import { packagePath } from '../src/package.js';
import { isWellFormedText } from '../src/recording/body.js';
import { ProcessNameSchema } from '../src/recording/schema-exchange.js';
import { UnhookedPythonSchema, UnwatchedProgramSchema } from '../src/recording/schema-manifest.js';

// ---------------------------------------------------------------- shared by record and replay

/** A body on the wire: utf8 text or base64, with its size (the recorder may cut it: truncated). */
export const WireBodySchema = z.object({
  size: z.number(),
  text: z.string().optional(),
  b64: z.string().optional(),
  truncated: z.boolean().optional(),
});
export type WireBody = z.infer<typeof WireBodySchema>;

export const WireErrorSchema = z.object({ code: z.string(), message: z.string() });
export type WireError = z.infer<typeof WireErrorSchema>;

export const HeadersSchema = z.record(z.string(), z.string());

/**
 * A JSON-RPC request the agent wrote to a child's stdin (an MCP server over stdio) and the answer
 * it read from the child's stdout (sandbox/preload/shared-mcp-stdio.mjs); no `response`: the
 * child ended first. Sent by both preloads: a step of the recording, and of the replay.
 */
export const STDIO_RPC = {
  ts: z.number(),
  end: z.number(),
  request: z.object({ method: z.string(), params: z.unknown().optional() }),
  response: z
    .object({
      result: z.unknown().optional(),
      error: z.object({ code: z.unknown().optional(), message: z.unknown().optional() }).passthrough().optional(),
    })
    .optional(),
};
export type StdioRpc = z.infer<z.ZodObject<typeof STDIO_RPC>>;

/** Clock, random, uuid, random-bytes and monotonic-clock values handed to the agent since the last report. */
export const NdBatchSchema = z.object({
  clock: z.array(z.number()).optional(),
  /** performance.now() and performance.timeOrigin as read, in order (ms). */
  hrtime: z.array(z.number()).optional(),
  random: z.array(z.number()).optional(),
  uuid: z.array(z.string()).optional(),
  randomBytes: z.array(z.string()).optional(),
  /**
   * Not a value handed to the agent: a reply of one of its Postgres connections and what the
   * process had drawn when it came ("127.0.0.1:5432#0 clock=3 uuid=1", sandbox/preload/shared-pg-replies.mjs).
   */
  dbReply: z.array(z.string().max(2000)).optional(),
  /** The process that drew them (none: the agent's own). */
  process: ProcessNameSchema.optional(),
});
export type NdBatch = z.infer<typeof NdBatchSchema>;
export const ND_KINDS = ['clock', 'random', 'uuid', 'randomBytes', 'hrtime', 'dbReply'] as const;

/** An HTTP request as a preload reports it (the fields of a message). */
export const HTTP_REQUEST = {
  method: z.string(),
  url: z.string(),
  headers: HeadersSchema,
  body: WireBodySchema.optional(),
};

/** The first message of each agent process: who it is. */
export const HelloSchema = z.object({
  t: z.literal('hello'),
  pid: z.number(),
  ppid: z.number().optional(),
  argv: z.array(z.string()),
  cwd: z.string(),
  /**
   * Its environment's variables of 8 characters or more (processEnvForRedaction): the recorder
   * and the replayer learn the values of its secret-named ones, redacted wherever they appear
   * (src/recording/redact-known.ts), such as a variable the agent set for this child only.
   * Recording, it travels over the encrypted spool; replaying, over the socket.
   */
  env: z.record(z.string(), z.string()).optional(),
});

/**
 * A Python program a process started without tapedeck's hook (sandbox/preload/shared-python.mjs,
 * or the Python hook's own child patch): said by the recorder and the replayer.
 */
export const UnhookedMessageSchema = z.object({
  t: z.literal('unhooked'),
  pid: z.number().optional(),
  ...UnhookedPythonSchema.omit({ processes: true }).shape,
});

/**
 * A program a process started that reaches a network service no capture layer sees (curl, psql:
 * sandbox/preload/shared-commands.mjs unwatchedProgram): said by the recorder.
 */
export const UnwatchedMessageSchema = z.object({
  t: z.literal('unwatched'),
  pid: z.number().optional(),
  ...UnwatchedProgramSchema.omit({ processes: true }).shape,
});

/** Bytes of a wire body (an empty buffer when there is none). */
export function wireBytes(body: WireBody | undefined): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  if (body.b64 !== undefined) return Buffer.from(body.b64, 'base64');
  return Buffer.from(body.text ?? '', 'utf8');
}

/** A wire body for bytes: utf8 text when they are text, else base64; undefined when empty. */
export function wireOf(bytes: Buffer | undefined): WireBody | undefined {
  if (!bytes || bytes.length === 0) return undefined;
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes)
    ? { size: bytes.length, text }
    : { size: bytes.length, b64: bytes.toString('base64') };
}

/** wireOf a text's UTF-8 bytes, without encoding and decoding a well-formed text to find it is text. */
export function wireOfText(text: string): WireBody | undefined {
  if (text === '') return undefined;
  return isWellFormedText(text) ? { size: Buffer.byteLength(text, 'utf8'), text } : wireOf(Buffer.from(text, 'utf8'));
}

// ---------------------------------------------------------------- replay: what the preload reads

/** Absolute path of the replay preload, for `node --import`. */
export const REPLAY_PRELOAD = packagePath('sandbox/preload/replay.mjs');

export const HostPortSchema = z.object({ host: z.string(), port: z.number() });
export type HostPort = z.infer<typeof HostPortSchema>;

export const TimingSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('none') }),
  z.object({ kind: z.literal('original') }),
  z.object({ kind: z.literal('scaled'), factor: z.number() }),
]);
export type Timing = z.infer<typeof TimingSchema>;

/** A streamed response's event: its raw text and its offset from the response's start. */
export const WireChunkSchema = z.object({
  offsetMs: z.number(),
  data: z.string(),
  /** 'base64': the chunk's bytes are not text (an HTTP/2 gRPC message), `data` is their base64. */
  encoding: z.literal('base64').optional(),
});

/**
 * How many values each process of the agent's tree had drawn, by kind, when a recorded answer
 * reached it (key: the process's name, "" for the agent's own), and how long the call took then.
 * The replay preload holds the answer until its process has drawn as many, at most about that
 * long (sandbox/preload/replay-nondeterminism.mjs `hold`), so concurrent branches take their
 * values in the recorded order without the recorded latency being waited out.
 */
export const DrawnSchema = z.object({
  counts: z.record(z.string(), z.record(z.string(), z.number())),
  withinMs: z.number(),
});
export type Drawn = z.infer<typeof DrawnSchema>;

/** What the session answers a question with (and, in the fast index, a recorded response). */
export const ReplayReplySchema = z.object({
  /** until K: the agent is stopped here. */
  stop: z.boolean().optional(),
  /** World changes recorded for a served call, for the preload to apply to its fs volume. */
  effects: z.array(z.lazy(() => FsReportSchema)).optional(),
  error: WireErrorSchema.optional(),
  status: z.number().optional(),
  statusText: z.string().optional(),
  headers: HeadersSchema.optional(),
  body: WireBodySchema.optional(),
  chunks: z.array(WireChunkSchema).optional(),
  /** Trailing headers after the body (HTTP/2: a gRPC call's status). */
  trailers: HeadersSchema.optional(),
  /** Keep a re-streamed response open (until the agent aborts it, or until step closeAfterStep is served). */
  open: z.boolean().optional(),
  closeAfterStep: z.number().optional(),
  timing: TimingSchema.optional(),
  /** The step the call was served as. */
  step: z.number().optional(),
  /** An in-process tool's result. */
  result: z.unknown().optional(),
  /** An in-process tool: run it for real (not used by the replayer yet). */
  run: z.boolean().optional(),
  /** The index of the next recorded call the session expects (for the preload's fast path). */
  cursor: z.number().optional(),
  /** until K: how many steps the agent may still begin without asking before step K ends. */
  budget: z.number().optional(),
  /** Values drawn before the recorded answer reached the agent: the answer waits for them. */
  drawn: DrawnSchema.optional(),
  /** A node:http request's socket when recorded: a reused keep-alive one, or a new one (HttpExchangePayloadSchema.reusedSocket). */
  reusedSocket: z.boolean().optional(),
  /** From now on the agent's file steps are reported (`file` notices): the replay no longer copies them. */
  fileSteps: z.literal(true).optional(),
});
export type ReplayReply = z.infer<typeof ReplayReplySchema>;

/** One entry of the fast index (exact mode): a recorded call the preload may answer itself, or must ask about. */
export const FastEntrySchema = z.union([
  z.object({ i: z.number(), ask: z.literal(true) }),
  z.object({
    i: z.number(),
    ask: z.undefined().optional(),
    method: z.string(),
    /** Path and query, the host aside. */
    pq: z.string(),
    body: z.string(),
    reply: ReplayReplySchema,
  }),
]);
export type FastEntry = z.infer<typeof FastEntrySchema>;

/** The seed of the sandboxed fs volume: [absolute path, mode, base64 content] per file. */
export const FsSeedSchema = z.object({ files: z.array(z.tuple([z.string(), z.number(), z.string()])) });
export type FsSeed = z.infer<typeof FsSeedSchema>;

/** The replay preload's config (TAPEDECK_REPLAY_CONFIG names the file). */
export const ReplayConfigSchema = z.object({
  socket: z.string(),
  fsRoot: z.string(),
  seedFile: z.string(),
  /** Recorded values per kind, in order: the agent's own process's. */
  nondeterminism: z.record(z.string(), z.array(z.union([z.number(), z.string()]))),
  /** The other processes' recorded values, by process name (ProcessNameSchema). */
  processes: z.record(ProcessNameSchema, z.record(z.string(), z.array(z.union([z.number(), z.string()])))).optional(),
  /** Seeds the values asked for beyond the recorded ones. */
  seed: z.number(),
  /**
   * A run recorded in-process (record()): its values start at the run's start in the replayed
   * command (runInput(), record(); else its first recorded call, passing over `skip`, the values
   * the run drew before its first step), not at the command's own start.
   */
  runStart: z.object({ skip: z.record(z.string(), z.number().int().nonnegative()) }).optional(),
  /**
   * The sandbox database's address, as the agent's connections name it (host:port), to the
   * recorded database's: the recorded replies of a connection are found by the recorded name
   * (sandbox/preload/replay-pg.mjs).
   */
  dbTargets: z.record(z.string().max(300), z.string().max(300)).optional(),
  /** Hold the database's replies to their recorded order (ReplayOptions.dbOrder; sandbox/preload/replay-pg.mjs). */
  dbOrder: z.boolean().optional(),
  /** The sandbox database runs one transaction at a time (PGlite): replies inside one are not held. */
  dbOneBackend: z.boolean().optional(),
  /** Addresses the network guard lets through (the sandbox database). */
  allow: z.array(HostPortSchema),
  /**
   * Addresses the network guard sends elsewhere (the recorded database to the sandbox's; a recorded
   * WebSocket's to the replay's answerer, `websocket`: the preload lets its upgrade through to it).
   */
  routes: z
    .array(z.object({ from: HostPortSchema, to: HostPortSchema, websocket: z.literal(true).optional() }))
    .optional(),
  /**
   * Unix socket paths the network guard sends to an address: the recorded database's sockets
   * (PGHOST=/var/run/postgresql) to the sandbox's relay, as its host:port is in `routes`.
   */
  socketRoutes: z.array(z.object({ from: z.string().max(4096), to: HostPortSchema })).optional(),
  /**
   * The CA (PEM) of the replay's WebSocket answerer for wss:// conversations: a TLS connection to a
   * routed WebSocket's address trusts it (sandbox/preload/network-guard.mjs, trustRoutedTls).
   */
  webSocketCa: z.string().optional(),
  /**
   * The recorded HTTP/2 addresses (sandbox/preload/replay-http2.mjs): a connection to one (a gRPC
   * client opens its own socket, then speaks HTTP/2 over it) is answered in the agent's process
   * from the recording, never opened.
   */
  http2: z.array(HostPortSchema).optional(),
  /** The OS sandbox: the fs root is a writable copy on disk, not the preload's memfs volume. */
  fsOnDisk: z.boolean().optional(),
  /** The agent runs in the OS sandbox (the preload's own guards step back where the OS holds). */
  os: z.boolean().optional(),
  /**
   * The OS sandbox's private folders (its own /tmp…): every process of the tree shares them, so a
   * Node process's writes there go to disk, where the programs it runs (psql -f, python3) see them.
   */
  privateDirs: z.array(z.string()).optional(),
  /** Host folders bound inside those private folders (the replay's own, the agent's scripts): kept off. */
  hostDirs: z.array(z.string()).optional(),
  /** Each process (and worker thread) writes `${dumpPrefix}.${pid}[w<thread id>].json` at exit (ExitDump). */
  dumpPrefix: z.string(),
  fastIndex: z.string().optional(),
  timing: TimingSchema,
  /**
   * until K: how many steps the agent may begin without asking (file reads and writes under the
   * fs root, requests over a child's stdio) before step K ends; the next one stops it.
   */
  untilBudget: z.number().optional(),
  /** Report the agent's file steps from the start (`file` notices): counterfactual mode. */
  fileSteps: z.boolean().optional(),
});
export type ReplayConfig = z.infer<typeof ReplayConfigSchema>;

// ---------------------------------------------------------------- replay: what the preload sends

/** A file the agent wrote or removed inside the sandboxed root (or a directory it removed). */
export const FsReportSchema = z.object({
  abs: z.string(),
  mode: z.number().optional(),
  b64: z.string().optional(),
  gone: z.boolean().optional(),
  dir: z.boolean().optional(),
});
export type FsReport = z.infer<typeof FsReportSchema>;

/** A file read or write of the agent's under the fs root, as the recorder's message of it says. */
const FILE_CALL = {
  name: z.string(),
  ts: z.number(),
  end: z.number(),
  args: z.object({ path: z.string() }),
  result: z.unknown().optional(),
  error: WireErrorSchema.optional(),
  stateType: z.enum(['FILE_READ', 'FILE_WRITE']),
  mutating: z.boolean(),
};
export type FileCall = z.infer<z.ZodObject<typeof FILE_CALL>>;

/** What every question and `served` notice carries: the changes and values since the last one. */
const SINCE = { fs: z.array(FsReportSchema).optional(), nd: NdBatchSchema.optional(), pid: z.number().optional() };

/** A question the preload waits on (sent as `{t: 'sync', n, ...question}`, answered by `{ack: n, ...reply}`). */
export const ReplayQuestionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('http'), ...HTTP_REQUEST, ...SINCE }),
  z.object({
    kind: z.literal('tool'),
    name: z.string(),
    args: z.unknown(),
    mutating: z.boolean().optional(),
    ...SINCE,
  }),
  /** Nothing to answer: only the changes and values it carries (and the session's queue drained). */
  z.object({ kind: z.literal('noop'), ...SINCE }),
]);
export type ReplayQuestion = z.infer<typeof ReplayQuestionSchema>;
export type QuestionOf<K extends ReplayQuestion['kind']> = Extract<ReplayQuestion, { kind: K }>;

/** A notice: nothing waits for an answer. */
export const ReplayNoticeSchema = z.discriminatedUnion('t', [
  HelloSchema,
  /** A connection the network guard refused; `upgrade`: an HTTP upgrade's protocol (websocket), refused as such. */
  z.object({ t: z.literal('blocked'), target: z.string(), upgrade: z.string().optional() }),
  /** A write outside the sandboxed root (refused). */
  z.object({ t: z.literal('outside-write'), path: z.string() }),
  /** A way out the preload refused (a program it cannot contain, a worker, UDP, DNS, a raw binding, a signal, a file). */
  z.object({ t: z.literal('side-channel'), what: z.string(), target: z.string(), pid: z.number().optional() }),
  UnhookedMessageSchema,
  /** A call the preload answered itself from the fast index: recorded call `i`, as it was asked. */
  z.object({ t: z.literal('served'), i: z.number(), ...HTTP_REQUEST, ...SINCE }),
  /** Values handed to the agent in a turn that asked nothing (reported at its end). */
  z.object({ t: z.literal('values'), ...SINCE }),
  /** A request over a child's stdio and its answer (MCP over stdio): a step, not a call to serve. */
  z.object({ t: z.literal('rpc'), ...STDIO_RPC, ...SINCE }),
  /**
   * until K: the agent begins a step without asking (a file operation, a request over a child's
   * stdio); `stop`: past the budget, it is stopped before it. The changes are the last step's.
   */
  z.object({ t: z.literal('begin'), what: z.enum(['file', 'rpc']), stop: z.boolean().optional(), ...SINCE }),
  /**
   * A file step of the agent's, done: the recorder's message of it (sandbox/preload/shared-file-ops.mjs),
   * with the changes it made. Sent where the replay writes the agent's file steps itself.
   */
  z.object({ t: z.literal('file'), ...FILE_CALL, ...SINCE }),
]);
export type ReplayNotice = z.infer<typeof ReplayNoticeSchema>;

/** What each process's (and worker thread's) replay preload writes at exit (`${dumpPrefix}.${pid}[w<thread id>].json`). */
export const ExitDumpSchema = z.object({
  pid: z.number(),
  /** Notices not yet written to the socket. */
  pending: z.array(z.unknown()).optional(),
  fs: z.array(FsReportSchema).optional(),
  nd: NdBatchSchema.optional(),
  /** How many recorded values were handed out, and how many made up past the recording's end. */
  nondeterminism: z
    .object({
      served: z.record(z.string(), z.number()),
      fallback: z.record(z.string(), z.number()),
      /** Answers handed over at the bound before the process had drawn the values recorded before them. */
      unheld: z.number().optional(),
      /** Database replies that went as they came, not in their recorded order (sandbox/preload/replay-pg.mjs). */
      dbLate: z.number().optional(),
      /**
       * The agent's own process of a run recorded in-process: how its run started (`marker`:
       * runInput() or record(); `call`: its first recorded call; none: it never did) and the values
       * it drew before, by kind (its own, neither served nor reported), and how many processes it
       * started before (the command's, `0.n`, not the run's).
       */
      runStart: z
        .object({
          by: z.enum(['marker', 'call']).optional(),
          before: z.record(z.string(), z.number()),
          processes: z.number().int().nonnegative().optional(),
        })
        .optional(),
    })
    .optional(),
});
export type ExitDump = z.infer<typeof ExitDumpSchema>;
