// The project file's types (`tapedeck.config.ts|js|json|yaml`), exported to users as `tapedeck/config`.
// The answer chain for calls a replay's recording cannot serve is configured here.
import type { RequestHandler } from 'msw';

/** What an unmatched call gets when nothing answers it: a network error, or an HTTP 503 the agent sees. */
export type MissPolicy = 'fail' | 'error-response';

/**
 * Strings in a service's `origin`, `command`, `cwd`, `ready` and `env` may hold placeholders,
 * filled in when the service starts:
 * - `${sandbox.db}`: the sandbox database's URL (the replay's, never the real one)
 * - `${sandbox.files}`: the recorded file-system root (the service sees the sandbox's copy of it)
 * - `${port}`: a free port on 127.0.0.1 chosen for this service
 * - `${env.NAME}`: the agent's environment variable NAME in this replay (the recorded env, then `--env`)
 */
interface ServiceBase {
  /** A name for messages and the TUI (default: the origin). */
  name?: string;
  /**
   * The origin the agent calls (`http://127.0.0.1:8787`, or `${env.TRAVEL_API_URL}`): a call to it that
   * the recording cannot serve goes to the sandboxed instance.
   */
  origin: string;
  /** Environment of the service (placeholders allowed). */
  env?: Record<string, string>;
  /** A path answered with 2xx once the service is up (e.g. `/health`); default: the port accepts connections. */
  ready?: string;
  /** How long to wait for it to be ready (default 30 000 ms). */
  readyTimeoutMs?: number;
}

/** A service started from a command on this machine, inside the replay's sandbox. */
export interface CommandServiceConfig extends ServiceBase {
  /** `node api.js` (run by `sh -c`) or `['node', 'api.js']`. */
  command: string | string[];
  /** Working directory (default: the config file's folder). */
  cwd?: string;
}

/** A service run from a container image through testcontainers (needs a Docker engine). */
export interface ImageServiceConfig extends ServiceBase {
  image: string;
  /** The port the service listens on inside the container. */
  port: number;
}

export type ServiceConfig = CommandServiceConfig | ImageServiceConfig;

/** A model writes the answer of a call from the recorded answers of the same endpoint (off unless set). */
export interface SimulateConfig {
  /** An OpenAI-compatible base URL (`…/v1`); the simulator posts to `<endpoint>/chat/completions`. */
  endpoint: string;
  /** Default `gpt-4.1-mini`. */
  model?: string;
  /** The environment variable holding the endpoint's API key (default OPENAI_API_KEY); keys never go in the file. */
  apiKeyEnv?: string;
  /** Only calls to these origins are simulated (default: any origin no service or mock answers). */
  origins?: string[];
  /**
   * A mutating call (POST, PUT, PATCH, DELETE, or a tool recorded as mutating) is never simulated
   * unless its origin (`http://host:port`), its tool name or `METHOD /path` is listed here.
   */
  allowMutating?: string[];
  /** How many recorded exchanges of the endpoint the model is shown (default 8). */
  examples?: number;
}

export interface TapedeckConfig {
  /** The user's own services, re-hosted in the sandbox against the sandbox database and files. */
  services?: ServiceConfig[];
  /**
   * A module (`./mocks.ts`) whose default export (or `handlers` export) is an array of msw request
   * handlers, or a function `(ctx: MockContext) => handlers`, for third-party APIs you cannot re-host.
   */
  mocks?: string;
  /** Off by default. */
  simulate?: SimulateConfig;
  /** What a call no answerer takes gets (default: fail in exact mode, error-response in counterfactual). */
  onMiss?: MissPolicy;
  /** The policy per tool name or `METHOD /path` (overrides onMiss). */
  onMissByTool?: Record<string, MissPolicy>;
  /**
   * A named development snapshot (`tapedeck snapshot save NAME --db URL`) every replay's database
   * sandbox is seeded from, with the recorded run's rows laid over it (`--seed-snapshot` wins).
   */
  seedSnapshot?: string;
  /**
   * Where named snapshots live, relative to this file (default: `.tapedeck/snapshots` beside it;
   * $TAPEDECK_SNAPSHOTS_DIR wins). Loaded through `--config`, a project's snapshots are found
   * whatever folder the command runs in.
   */
  snapshotsDir?: string;
  /**
   * SQL files of your own (relative to this file), run in every replay's sandbox database once it
   * holds the recorded description and rows, before the agent starts: the functions, triggers and
   * defaults calling them that a recording describes but never carries as code (`unbuilt`), from
   * your migrations, which you trust. `--schema-sql FILE` (repeatable) wins.
   */
  schemaSql?: string[];
  /**
   * A replay stops when its agent makes no progress (no call, step, output or exit) for this long;
   * time spent answering it (a live model, a sandbox service) does not count. `90s`, `5m`, a number
   * of seconds, or `0` / `none` for never (default 5m). `--timeout` wins.
   */
  timeout?: string | number;
  /** A replay stops after this long in all, progress or not (default none). `--wall-timeout` wins. */
  wallTimeout?: string | number;
}

/** One recorded HTTP exchange, as a mock handler sees it. */
export interface RecordedExchange {
  step: number;
  method: string;
  url: string;
  /** Path and query, without the origin. */
  path: string;
  requestBody?: unknown;
  status?: number;
  headers?: Record<string, string>;
  /** The response body: parsed JSON when it is JSON, else text (a stream's as streamed); a Buffer when its bytes are not UTF-8 text. */
  body?: unknown;
}

/** What a mock handler can use besides the request: the recording and the sandbox database. */
export interface MockContext {
  /**
   * The recorded exchanges of an endpoint, in recorded order: `method` and `path` (an msw-style
   * pattern such as `/passengers/:id`, or a RegExp over the path) narrow them; `origin` too.
   */
  recorded(filter?: { method?: string; path?: string | RegExp; origin?: string }): RecordedExchange[];
  /** Runs SQL on the sandbox database (what it writes is recorded as the step's db.changed). */
  query(sql: string, params?: unknown[]): Promise<Array<Record<string, unknown>>>;
  /** The replay's step number the call will be. */
  readonly step: number;
}

/** What a mocks module may export (as default or as `handlers`). */
export type MocksExport = RequestHandler[] | ((ctx: MockContext) => RequestHandler[] | Promise<RequestHandler[]>);

/** A config file's content with its origin: relative paths in it are taken from `dir`. */
export interface LoadedConfig {
  config: TapedeckConfig;
  /** The file it came from (absent when no file was found). */
  file?: string;
  /** The folder relative paths are resolved against (the file's folder, or the cwd). */
  dir: string;
}
