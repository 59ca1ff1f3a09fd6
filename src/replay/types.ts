// The replayer's public options and results.

import type { DbSandboxKind, Timing } from '../../sandbox/index.js';
import type { TapedeckConfig } from '../config/index.js';
import type { ToolRule } from '../record/classify.js';
import type { DivergencePayload, ProvenanceCounts, ServedFrom, Stopped, Usage } from '../recording/index.js';
import type { Answerer } from './answer.js';
import type { AnswerChain } from './chain/index.js';
import type { VersionChange } from './version-changes.js';

export type ReplayMode = 'exact' | 'counterfactual';
/** Who answered a call (written on its http.exchange): the recording, an answerer (live, sandbox, …), or nobody (blocked: held back). */
export type { ServedFrom };
export type MissPolicy = 'fail' | 'error-response';
/** Streamed responses' chunk timing in a replay (declared with the preload protocol). */
export type { Timing };

export interface ReplayProgress {
  step: number;
  /** What happened at this step. */
  action: 'served' | 'live' | 'held-back' | 'divergence' | 'stopped';
  detail: string;
}

export interface ReplayOptions {
  /** The recording's directory. */
  recording: string;
  mode: ReplayMode;
  /**
   * A new system prompt (text) for the agent's model requests: in a run of several agents, the
   * requests of one agent only (promptFor; default the run's own, the first recorded prompt).
   */
  systemPrompt?: string;
  /** A unified diff applied to one agent's system prompt (promptFor; default the first recorded prompt it applies to). */
  promptPatch?: string;
  /** Which agent's prompt an override changes: the one whose recorded system prompt contains this text. */
  promptFor?: string;
  /** Steps before K come wholly from the recording, then the counterfactual rules apply. */
  forkAt?: number;
  /** Stop at step K and materialise the world of step K. */
  until?: number;
  /** Where live model calls go (default: the host the request names). */
  modelEndpoint?: string;
  /**
   * The agent command (default: the recorded one, which runs only when this machine sealed the
   * recording or `trustRecording` is set; otherwise the replay is refused before anything starts).
   */
  command?: string[];
  /**
   * Run the recorded command and apply the recorded env of a recording this machine did not seal
   * (made elsewhere, pulled, imported): CLI --trust-recording. Code-loading variables are never
   * taken from a recording either way.
   */
  trustRecording?: boolean;
  /** Working directory of the agent (default: the recorded one when it exists, else the current one). */
  cwd?: string;
  /** Extra environment for the agent. */
  env?: Record<string, string>;
  /** Output directory of the replay recording (default: recordings/<id> under the current directory). */
  out?: string;
  /** What an unmatched non-model call gets: a network error (fail) or an error response. Default: fail in exact mode, error-response in counterfactual. */
  onMiss?: MissPolicy;
  /** Policy per tool name or `METHOD /path` (overrides onMiss). */
  onMissByTool?: Record<string, MissPolicy>;
  /** Streamed responses: chunk timing. Default none. */
  timing?: Timing;
  /** The database sandbox: PGlite (default), a template clone on the server at `db`, or testcontainers. */
  dbSandbox?: DbSandboxKind;
  /**
   * Hand the database's replies to the agent in their recorded order (the recording's `dbReply`
   * values), each once its process has drawn the values it had drawn when that reply came:
   * concurrent tasks that read and then draw take their own recorded values. Default: on in exact
   * mode, off in counterfactual mode, where the agent's queries change with its prompt and each
   * process would wait once for replies that never come (docs/replay.md; `dbOrderOf`).
   */
  dbOrder?: boolean;
  /**
   * The user's tool classification rules (a JSON/YAML file, as `record --rules`, or the rules): the
   * calls the recording does not serve (HTTP, MCP over stdio, WebSocket turns) are classified with
   * them first, as the recorder classified the recorded ones. Default: none (the built-in rules).
   */
  rules?: string | readonly ToolRule[];
  /** Server URL for the template sandbox (setting it implies dbSandbox 'template'). */
  db?: string;
  /**
   * A named development snapshot (`tapedeck snapshot save NAME`) the database sandbox is seeded
   * from, with the recording's pre-world rows laid over it by primary key (the run's rows win):
   * reads the run never made find the snapshot's rows. Default: the config's `seedSnapshot`.
   */
  seedSnapshot?: string;
  /** Where named snapshots live (default: $TAPEDECK_SNAPSHOTS_DIR, else .tapedeck/snapshots in the project folder). */
  snapshotsDir?: string;
  /**
   * SQL files of your own (your migrations' functions, triggers, defaults that call them), run in
   * the sandbox database once it holds the recorded description and rows, before the agent starts:
   * what a recording names in `unbuilt` and never carries as code. Default: the config's `schemaSql`.
   */
  schemaSql?: string[];
  /**
   * Stop the agent after this many ms without progress (no call asked or served, no tool or file
   * step, no output seen, no exit), time spent answering it not counted; 0 never. Default: the
   * project config's `timeout`, else 5 minutes (DEFAULT_IDLE_MS).
   */
  idleTimeoutMs?: number;
  /** Stop the agent after this many ms in all; 0 never. Default: the config's `wallTimeout`, else never. */
  wallTimeoutMs?: number;
  /** The wall limit's older name (wallTimeoutMs wins). */
  timeoutMs?: number;
  /**
   * SIGINT, SIGTERM and SIGHUP to this process stop the agent's tree and end the replay as
   * `interrupted` (the CLI sets it; a library caller keeps its own signal handling).
   */
  stopOnSignals?: boolean;
  /** Where the agent's stdout/stderr go (default: inherited). */
  stdio?: 'inherit' | 'pipe' | 'ignore';
  onProgress?: (progress: ReplayProgress) => void;
  /**
   * Where the agent's tree runs: 'auto' (default; TAPEDECK_ISOLATION overrides) takes the best
   * this machine has — 'bwrap' (the OS sandbox), 'unshare' (a network namespace alone), 'none'
   * (the in-process preload alone).
   */
  isolation?: 'auto' | 'bwrap' | 'unshare' | 'none';
  /** Refuse to run without the OS sandbox (bubblewrap). */
  requireIsolation?: boolean;
  /** Told the isolation's one-line summary once the options and the recording are checked, before the agent runs. */
  onIsolation?: (summary: string) => void;
  /**
   * Told each warning known before the agent runs (the recording's env not applied, a variable
   * missing, another redaction key), right after onIsolation; all are in `ReplayResult.warnings` too.
   */
  onWarning?: (warning: string) => void;
  /**
   * Extra sources of answers for HTTP calls the recording cannot serve, tried in order before
   * the built-in live model answerer (counterfactual) and before holding the call back.
   */
  answerers?: readonly Answerer[];
  /**
   * The project config (`tapedeck.config.*`, see src/config): its sandbox services, mocks and
   * simulator answer calls the recording cannot serve (after `answerers`, before the live model
   * answerer); its onMiss and onMissByTool apply where these options leave them unset. Paths in it
   * must be absolute (`withOverrides` makes them so).
   */
  config?: TapedeckConfig;
  /** A chain kept across replays (bisect-prompt: its services outlive each probe); wins over `config`. */
  chain?: AnswerChain;
}

export interface HeldBack {
  step: number;
  method: string;
  target: string;
  body?: unknown;
  /** A side effect (not GET/HEAD/OPTIONS, or a tool recorded as mutating) rather than a read. */
  mutating: boolean;
}

export interface ReplayResult {
  /** The replay recording. */
  dir: string;
  id: string;
  /** timed-out: stopped by the watchdog; interrupted: by a signal (stopOnSignals). `stopped` says where. */
  status: 'complete' | 'failed' | 'timed-out' | 'interrupted';
  /** Why and where the replay was stopped (status timed-out or interrupted), and its one-line account. */
  stopped?: Stopped & { message: string };
  exitCode: number | null;
  divergences: Array<DivergencePayload & { step: number }>;
  firstDivergentStep?: number;
  heldBack: HeldBack[];
  /** How the agent's calls were answered (and its file steps the recording did not hold: `sandbox`). */
  served: ProvenanceCounts;
  /** Model calls served from the recording in counterfactual mode: cost not paid again. */
  savedCost: { calls: number; usage: Usage; usd?: number };
  /** Connections the network guard refused. */
  blockedConnections: string[];
  /**
   * The recording's last step when its recorder never closed it (killed): the recording knows the
   * run up to there only, so the exact replay stopped there, and its end state was compared with the
   * world the recording knows at that step (the pre snapshot plus the recorded changes).
   */
  cutAt?: number;
  /** The replay's post-world compared with the recorded one (exact mode; undefined when stopped early). */
  worldMatches?: boolean;
  worldDiff?: string[];
  /**
   * Rows of the end state that differ only in columns the database server fills from its clock
   * (DEFAULT now() …): evaluated again in the sandbox, they are not counted in worldMatches.
   */
  worldServerClock?: string[];
  /** until K: where the world of step K was materialised (fs/ and db.json). */
  worldDir?: string;
  /** until K with a template database: the kept clone holding the database of step K (drop it when done). */
  worldDb?: string;
  /** The isolation the agent ran in: its level, a one-line summary (printed first) and findings. */
  isolation?: { level: 'bwrap' | 'unshare' | 'none'; summary: string; notes: string[] };
  /** Ways out the agent tried that were refused (below the process, at the proxy, or unguarded). */
  sideChannels?: Array<{ target: string; how: string; process?: string }>;
  /** Things the user should know (a different redaction key, an incomplete recording). */
  warnings?: string[];
  /**
   * The packages the recording names (its LLM SDKs, database drivers, ORMs, HTTP clients) that the
   * agent loads at another version here, or no more (`now` null); also one of the warnings. Absent
   * when none changed, and for a recording that names none.
   */
  versionChanges?: VersionChange[];
  /** Answers that failed (a live model endpoint down, a sandbox service erroring), also in warnings. */
  answerFailures?: string[];
  /** stdout/stderr of the agent when stdio was 'pipe'. */
  output?: { stdout: string; stderr: string };
}
