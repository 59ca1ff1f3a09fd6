// The recording format's manifest (src/recording/schema.ts): the format's name, a recording id,
// prices, the agent and its env (and the variables a replay never takes from it), the world, the
// replay's settings and answer chain, and the rest of manifest.json.
import * as z from 'zod';
import { LOCALE, TIME_ZONE } from './region.js';
import { StoppedSchema } from './schema-events.js';
import { AbsoluteUrl, IsoTime, Sha256 } from './schema-fields.js';

export const FORMAT = 'tapedeck.recording/v1';

/** A model's token prices per million tokens, by bucket. */
const tokenPrices = {
  inputPerMillion: z.number().nonnegative(),
  cachedInputPerMillion: z.number().nonnegative(),
  cacheWritePerMillion: z.number().nonnegative().optional(),
  /** Cache writes kept 1 hour (Usage.cacheWrite1h); without it they are billed as other cache writes, with a warning. */
  cacheWrite1hPerMillion: z.number().nonnegative().optional(),
  outputPerMillion: z.number().nonnegative(),
  reasoningPerMillion: z.number().nonnegative().optional(),
};

/** Token prices that replace an entry's own for some calls (a service tier, a long prompt). */
const TokenPricesOverrideSchema = z.object(tokenPrices).partial().strict();

export const PriceEntrySchema = z
  .object({
    model: z.string(),
    ...tokenPrices,
    /**
     * The prices of a call the provider says it served at another tier (Usage.serviceTier: OpenAI's
     * `flex`, `priority`; Anthropic's `priority`), by tier; a tier not here is billed at the standard
     * prices, with a warning.
     */
    serviceTiers: z.record(z.string().min(1), TokenPricesOverrideSchema).optional(),
    /** The prices of a call whose input (cache included) is above `aboveInputTokens`: every bucket of it. */
    longContext: TokenPricesOverrideSchema.extend({ aboveInputTokens: z.number().int().nonnegative() })
      .strict()
      .optional(),
    /** Per-use price of the provider's server-side tools with this model (Usage.serverTools), by tool name. */
    serverToolPerCall: z.record(z.string().min(1), z.number().nonnegative()).optional(),
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
    /** `python`: any connection a Python process opened, recorded without --isolate (sandbox/python). */
    kind: z.enum(['upgrade', 'http2', 'postgres', 'tls', 'tcp', 'unix', 'python']),
    /** host:port, a Unix socket's path, or an upgrade's URL. */
    target: z.string().min(1).max(2048),
    /** An upgrade's protocol (websocket). */
    protocol: z.string().max(200).optional(),
    /** The package that opened it (node_modules/<name>), when not the agent's own code. */
    by: z.string().max(214).optional(),
    connections: z.number().int().positive(),
  })
  .strict();

/**
 * A Python program the run started without tapedeck's hook (sandbox/preload/shared-python.mjs):
 * `-S` (no site), `-I`/`-E` (no PYTHONPATH) outside the OS sandbox, or in it on an interpreter
 * with no sitecustomize of its own to cover (`uncovered`). Its clock and random values are not recorded.
 */
export const UnhookedPythonSchema = z
  .object({
    program: z.string().min(1).max(2048),
    flag: z.enum(['-S', '-I', '-E']),
    uncovered: z.boolean().optional(),
    processes: z.number().int().positive(),
  })
  .strict();

/**
 * A program the run started whose calls no capture layer sees and that reaches a network service
 * (curl, psql, a cloud CLI, a program given a URL: sandbox/preload/shared-commands.mjs): neither Node
 * nor Python. Without --isolate its calls are not in the recording, however many it made.
 */
export const UnwatchedProgramSchema = z
  .object({
    program: z.string().min(1).max(200),
    processes: z.number().int().positive(),
  })
  .strict();

/**
 * An event the recorder cut to fit its size caps: a body past `maxBodyBytes` (`body`), a streamed
 * answer past it or past what one event may hold (`stream`: its first chunks kept), or an event
 * whose line would pass what a reader takes (`line`: its long strings cut). `bytes`: its size before.
 */
export const CutEventSchema = z
  .object({
    seq: z.number().int().nonnegative(),
    type: z.string().max(100),
    why: z.enum(['body', 'stream', 'line']),
    bytes: z.number().int().nonnegative(),
    /** What the event was (`GET https://api.example/x`, `db.changed app.items`). */
    what: z.string().max(500).optional(),
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
        /**
         * Recorded in-process (record()): the run started inside a process that had been running,
         * and a replay hands its values to the command from the run's start there (runInput(),
         * record()), not from the command's own start. Absent: `tapedeck record`'s, and in-process
         * recordings made before this was written, replayed as before.
         */
        inProcess: z.literal(true).optional(),
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
    /** Python programs the run started without tapedeck's hook: their values are not recorded (at most 100). */
    unhooked: z.array(UnhookedPythonSchema).max(100).optional(),
    /** Programs the run started that reach a network service unseen (curl, psql; at most 100): their calls are not recorded. */
    unwatched: z.array(UnwatchedProgramSchema).max(100).optional(),
    /** Events the recorder cut to fit its size caps (the first 100): the run is not whole in the recording. */
    cut: z.array(CutEventSchema).max(100).optional(),
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
