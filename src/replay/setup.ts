// The process and sandbox side of a replay: the temp folder, the database sandbox and its change
// tracker, the replay recording's writer, the config the preload reads (seed files, recorded
// nondeterministic values, the fast index), the agent's environment, the agent process itself,
// and what its preloads leave at exit. No decisions here: those are in answer.ts.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, constants, statSync } from 'node:fs';
import { open, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DbSandbox } from '../../sandbox/db.js';
import { fsSeed } from '../../sandbox/fs.js';
import { makeNotedTempDir } from '../../sandbox/leftovers.js';
import { describeTree, killTree } from '../../sandbox/os/process-tree.mjs';
import {
  ExitDumpSchema,
  type FastEntry,
  type FsReport,
  type NdBatch,
  REPLAY_PRELOAD,
  type ReplayConfig,
  type ReplayNotice,
  ReplayNoticeSchema,
} from '../../sandbox/protocol.js';
import { withPythonHook } from '../../sandbox/python/hook.js';
import type { DbTracker } from '../postgres/capture.js';
import { databaseAddresses } from '../postgres/connect.js';
import {
  type DbSnapshot,
  knownLocale,
  knownTimeZone,
  LOCALE_VARS,
  loadsCode,
  localeOf,
  PLACEHOLDER_PREFIX,
  type Recording,
  RUN_INPUT_ENV,
  TapedeckError,
  timeZoneOf,
} from '../recording/index.js';
import { drawnBeforeFirstStep } from './drawn.js';
import { type RecordedCall, SelfBegunSteps } from './match.js';
import { recordedBody, wireBodyOf } from './recorded-calls.js';
import type { ReplayOptions } from './types.js';

/** Resources opened for one replay, closed in reverse order by close(). */
export class Teardown {
  private readonly steps: Array<() => Promise<void>> = [];

  add(step: () => Promise<void>): void {
    this.steps.push(step);
  }

  async close(): Promise<void> {
    for (const step of this.steps.reverse()) await step().catch(() => undefined);
  }
}

/** A private temp folder for the socket, the preload's config and its exit dumps. */
export async function makeTempDir(teardown: Teardown): Promise<string> {
  // Noted as a leftover: a killed replay's folder (and the socket in it) goes with the next command.
  const tmp = await makeNotedTempDir('tapedeck-replay-');
  teardown.add(tmp.remove);
  return tmp.path;
}

/** A replay's database: the sandbox, its change tracker, and the world it was seeded with. */
export interface ReplayDatabase {
  db?: DbSandbox;
  tracker?: DbTracker;
  /** The world the sandbox was seeded with, when it is not the recording's pre-world (a named snapshot under it). */
  seeded?: {
    snapshot: { name: string; sha256: string };
    pre: DbSnapshot;
    /** The end state an exact replay must reach in that world. */
    post?: DbSnapshot;
  };
  /** What the user's own SQL (`schemaSql`) built of what the recording names in `unbuilt`. */
  built?: (object: NonNullable<DbSnapshot['unbuilt']>[number]) => boolean;
}

/**
 * The world a named development snapshot gives the sandbox (`seedSnapshot`, else the config's):
 * the snapshot read and checked, with the recording's rows laid over it. Undefined without one.
 * Called before anything starts, so a missing or bad snapshot is the only thing said.
 */
export async function seededWorld(recording: Recording, options: ReplayOptions): Promise<ReplayDatabase['seeded']> {
  const config = options.chain?.config ?? options.config;
  const name = options.seedSnapshot ?? config?.seedSnapshot;
  if (name === undefined) return undefined;
  const pre = recording.pre.db;
  if (!pre) {
    throw new TapedeckError(
      'BAD_OPTION',
      `--seed-snapshot ${name}: the recording captured no database (manifest.world.db), so there is no database sandbox to seed`,
    );
  }
  // The snapshot reader and the overlay (src/postgres) load only for a run that seeds a database.
  const [{ readNamedSnapshot, snapshotsDir }, { layWorldOver }] = await Promise.all([
    import('../postgres/named-snapshots.js'),
    import('../postgres/overlay.js'),
  ]);
  const named = await readNamedSnapshot(
    name,
    options.snapshotsDir ?? snapshotsDir(process.cwd(), process.env, config?.snapshotsDir),
  );
  const laid = layWorldOver(
    named.db,
    { pre, ...(recording.post.db ? { post: recording.post.db } : {}) },
    `the snapshot "${name}"`,
  );
  return { snapshot: { name, sha256: named.info.sha256 }, pre: laid.seed, ...(laid.post ? { post: laid.post } : {}) };
}

/**
 * The database sandbox seeded from the recording's pre-snapshot, or from `seeded` (seededWorld:
 * a named snapshot with the pre-snapshot's rows laid over it), and the tracker of its row changes.
 */
export async function openDatabase(
  recording: Recording,
  options: ReplayOptions,
  teardown: Teardown,
  seeded?: ReplayDatabase['seeded'],
  /** The user's own schema SQL, checked readable (schemaSqlFiles). */
  schemaSql: readonly string[] = [],
): Promise<ReplayDatabase> {
  const seed = seeded?.pre ?? recording.pre.db;
  if (!seed) return {};
  const kind = options.dbSandbox ?? (options.db ? 'template' : 'pglite');
  // The sandboxes, PGlite's server and the tracker load only for a run that has a database.
  const [{ openDbSandbox }, { createDbTracker }] = await Promise.all([
    import('../../sandbox/db.js'),
    import('../postgres/capture.js'),
  ]);
  const db = await openDbSandbox(seed, { kind, ...(options.db ? { url: options.db } : {}) });
  teardown.add(() => db.close());
  // The user's own SQL, before the tracker: what it builds is the sandbox's, not the agent's changes.
  // What the recording names (a snapshot laid under its rows may name other objects, or none).
  const named = [...(recording.pre.db?.unbuilt ?? []), ...(seeded ? (seed.unbuilt ?? []) : [])];
  const built = schemaSql.length > 0 ? await runSchemaSql(db.url, schemaSql, named) : undefined;
  const tracker = await createDbTracker(db.url, { schemas: seed.schemas });
  teardown.add(() => tracker.close());
  await tracker.start();
  return { db, tracker, ...(seeded ? { seeded } : {}), ...(built ? { built } : {}) };
}

/**
 * The user's own schema SQL files (`--schema-sql`, else the project file's `schemaSql`), each
 * checked readable now: a misspelt path is a one-line error before anything starts, with or
 * without a database to run it in.
 */
export function schemaSqlFiles(options: ReplayOptions): string[] {
  const files = options.schemaSql ?? (options.chain?.config ?? options.config)?.schemaSql ?? [];
  for (const file of files) {
    try {
      accessSync(file, constants.R_OK);
      if (statSync(file).isDirectory()) throw Object.assign(new Error('a folder'), { code: 'EISDIR' });
    } catch (error) {
      throw new TapedeckError(
        'BAD_OPTION',
        `--schema-sql ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
      );
    }
  }
  return files;
}

type Unbuilt = NonNullable<DbSnapshot['unbuilt']>[number];
const unbuiltKey = (o: Unbuilt) => JSON.stringify([o.kind, o.schema, o.name, o.table ?? null]);

/**
 * Runs the user's own SQL files in the sandbox database (`schemaSql`: their migrations' functions,
 * triggers, defaults that call them; trusted, as the replayed command is, and never the recording's:
 * a recording only names what it lacks). They run after the recorded tables and rows, so a trigger
 * does not fire on the seeded rows. Returns which of the recording's `unbuilt` objects now exist.
 */
async function runSchemaSql(
  url: string,
  files: readonly string[],
  unbuilt: Unbuilt[],
): Promise<(o: Unbuilt) => boolean> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const file of files) {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        throw new TapedeckError(
          'BAD_OPTION',
          `--schema-sql ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
        );
      }
      try {
        await client.query(text);
      } catch (error) {
        throw new TapedeckError(
          'SCHEMA_SQL_FAILED',
          `--schema-sql ${file}: the sandbox database refused it: ${(error as Error).message}. It runs once the recorded tables and rows are built: give it what the recording names as unbuilt (functions, triggers, defaults that call them), not the tables.`,
        );
      }
    }
    const { rows } = await client.query<{ k: string; s: string; n: string; t: string | null }>(BUILT_SQL, [
      unbuilt.map((o) => o.kind),
      unbuilt.map((o) => o.schema),
      unbuilt.map((o) => o.name),
      unbuilt.map((o) => o.table ?? null),
    ]);
    const present = new Set(rows.map((r) => JSON.stringify([r.k, r.s, r.n, r.t])));
    return (o) => present.has(unbuiltKey(o));
  } finally {
    await client.end().catch(() => {});
  }
}

/** Which of the named objects exist in the database (kind, schema, name, table). */
const BUILT_SQL = `SELECT k, s, n, t FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(k, s, n, t)
  WHERE CASE k
    WHEN 'function' THEN EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace ns ON ns.oid = p.pronamespace
      WHERE ns.nspname = s AND p.proname = n)
    WHEN 'trigger' THEN EXISTS (SELECT 1 FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
      JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = s AND c.relname = t AND g.tgname = n)
    WHEN 'view' THEN EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
      WHERE ns.nspname = s AND c.relname = n AND c.relkind = 'v')
    WHEN 'materialized view' THEN EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
      WHERE ns.nspname = s AND c.relname = n AND c.relkind = 'm')
    WHEN 'default' THEN EXISTS (SELECT 1 FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid
      JOIN pg_namespace ns ON ns.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
      WHERE ns.nspname = s AND c.relname = t AND a.attname = n)
    WHEN 'check' THEN EXISTS (SELECT 1 FROM pg_constraint co JOIN pg_namespace ns ON ns.oid = co.connamespace
      WHERE ns.nspname = s AND co.conname = n AND co.contype = 'c')
    WHEN 'policy' THEN EXISTS (SELECT 1 FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
      JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = s AND c.relname = t AND p.polname = n)
    WHEN 'rule' THEN EXISTS (SELECT 1 FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
      JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = s AND c.relname = t AND r.rulename = n)
    ELSE false END`;

export interface PreloadConfigInput {
  recording: Recording;
  calls: readonly RecordedCall[];
  options: ReplayOptions;
  tmp: string;
  socket: string;
  fsRoot: string | undefined;
  db: DbSandbox | undefined;
  /** Exact mode without overrides: the preload may answer byte-identical calls itself. */
  fast: boolean;
  /** Addresses rerouted by the preload's guard (the recorded database's host:port to the sandbox's relay). */
  routes?: Array<{ from: { host: string; port: number }; to: { host: string; port: number }; websocket?: true }>;
  /** Unix socket paths rerouted by the guard (the recorded database's sockets to the relay). */
  socketRoutes?: Array<{ from: string; to: { host: string; port: number } }>;
  /** The CA of the replay's WebSocket answerer (wss:// conversations), trusted for its routes. */
  webSocketCa?: string;
  /** The OS sandbox: the fs root is a copy on disk (not the preload's memfs), more ports are allowed. */
  fsOnDisk?: boolean;
  allow?: Array<{ host: string; port: number }>;
  /** The OS sandbox (bubblewrap) holds the tree: programs that are not Node may run. */
  os?: boolean;
  /** The OS sandbox's private folders and the host folders bound inside them (OsSandbox). */
  privateDirs?: readonly string[];
  hostDirs?: readonly string[];
}

/** Where the replay's fs seed (the preload's format) is written: the sandboxed services read it too. */
export function seedFileIn(tmp: string): string {
  return path.join(tmp, 'seed.json');
}

/** Writes what the replay preload reads at start (sandbox/preload/replay.mjs); returns the config's path. */
export async function writePreloadConfig(input: PreloadConfigInput): Promise<string> {
  const { recording, calls, options, tmp, fsRoot, db } = input;
  const seedFile = seedFileIn(tmp);
  const seed = fsRoot ? fsSeed(recording.pre.fs, recording.readBlob, fsRoot) : undefined;
  await writeFile(seedFile, JSON.stringify(seed ?? { files: [] }));
  // Each process's values in the order it drew them: the agent's own, and the others' by name.
  const nondeterminism: Record<string, Array<number | string>> = {};
  const processes = new Map<string, Record<string, Array<number | string>>>();
  for (const e of recording.events) {
    if (e.type !== 'nondeterminism') continue;
    const { process: name } = e.payload;
    let values = nondeterminism;
    if (name !== undefined) {
      values = processes.get(name) ?? {};
      processes.set(name, values);
    }
    const list = (values[e.payload.kind] ??= []);
    for (const v of e.payload.values) list.push(v);
  }
  const fastIndex = path.join(tmp, 'fast.json');
  if (input.fast) await writeFastIndex(fastIndex, recording, calls);
  const configFile = path.join(tmp, 'config.json');
  const config: ReplayConfig = {
    socket: input.socket,
    // Without a recorded fs root the volume still takes every write, so none reaches the disk.
    fsRoot: fsRoot ?? path.join(tmp, 'no-fs-root'),
    seedFile,
    nondeterminism,
    ...(processes.size > 0 ? { processes: Object.fromEntries(processes) } : {}),
    seed: Number.parseInt(createHash('sha256').update(recording.manifest.id).digest('hex').slice(0, 8), 16),
    // Recorded in-process: the run started inside a process that had been running (docs/recording.md).
    ...(recording.manifest.agent.inProcess === true
      ? { runStart: { skip: drawnBeforeFirstStep(recording.events) } }
      : {}),
    allow: [...(db ? [{ host: db.host, port: db.port }] : []), ...(input.allow ?? [])],
    ...(dbOrderOf(options)
      ? {
          dbOrder: true,
          ...(db?.kind === 'pglite' ? { dbOneBackend: true } : {}),
          ...dbTargetsOf(recording.manifest.world?.db?.url, db?.url),
        }
      : {}),
    routes: input.routes ?? [],
    ...(input.socketRoutes?.length ? { socketRoutes: input.socketRoutes } : {}),
    ...(input.webSocketCa ? { webSocketCa: input.webSocketCa } : {}),
    ...http2Targets(calls),
    ...(input.fsOnDisk ? { fsOnDisk: true } : {}),
    ...(input.os ? { os: true } : {}),
    ...(input.privateDirs ? { privateDirs: [...input.privateDirs], hostDirs: [...(input.hostDirs ?? [])] } : {}),
    dumpPrefix: path.join(tmp, 'dump'),
    ...(input.fast ? { fastIndex } : {}),
    timing: options.timing ?? { kind: 'none' },
    ...(options.until !== undefined ? { untilBudget: new SelfBegunSteps(recording).count(0, options.until) } : {}),
    // Counterfactual: the agent's file steps are reported from the start, the session copying the
    // recorded ones only in a --fork-at prefix; exact mode's from the answer after a divergence.
    ...(options.mode === 'counterfactual' ? { fileSteps: true } : {}),
  };
  await writeFile(configFile, JSON.stringify(config));
  return configFile;
}

/** The host:port of every recorded HTTP/2 exchange (the preload answers connections to them itself). */
function http2Targets(calls: readonly RecordedCall[]): { http2?: Array<{ host: string; port: number }> } {
  const seen = new Map<string, { host: string; port: number }>();
  for (const c of calls) {
    const protocol = c.exchange?.protocol;
    if (protocol === undefined) continue;
    const u = new URL(c.exchange?.request.url ?? c.request.url);
    const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
    const port = Number(u.port || (protocol === 'h2' ? 443 : 80));
    seen.set(`${host}:${port}`, { host, port });
  }
  return seen.size === 0 ? {} : { http2: [...seen.values()] };
}

/** Bytes of the fast index written at a time: the index is never one string (52 MB at 100k steps). */
const FAST_INDEX_CHUNK = 1 << 20;

/**
 * Writes the preload's fast index (one JSON array, read whole by the preload) entry by entry, in
 * chunks: building it as one string held every reply twice more in the replayer at its peak.
 */
async function writeFastIndex(file: string, recording: Recording, calls: readonly RecordedCall[]): Promise<void> {
  const handle = await open(file, 'w');
  try {
    let chunk = '[';
    for (const [n, call] of calls.entries()) {
      chunk += `${n === 0 ? '' : ','}${JSON.stringify(fastEntry(recording, call))}`;
      if (chunk.length >= FAST_INDEX_CHUNK) {
        await handle.write(chunk);
        chunk = '';
      }
    }
    await handle.write(`${chunk}]`);
  } finally {
    await handle.close();
  }
}

/**
 * The preload's fast index entry of a call (exact mode): calls without effects are answered by the
 * preload itself, in recorded order, when the request is byte-for-byte the recorded one (host
 * aside); it reports them after. The rest ask the session.
 */
function fastEntry(recording: Recording, c: RecordedCall): FastEntry {
  const x = c.exchange;
  const r = x?.response;
  // Recorded effects are applied only for tool calls (model steps' changes are the agent's own),
  // and never the agent's own database writes (`own`): those it makes again.
  const effects = c.kind === 'tool' && (c.effects.fs.length > 0 || c.effects.db.some((d) => d.own !== true));
  // Telemetry is answered whatever it carries: the session decides (CallIndex.telemetryFor).
  if (!x || !r || x.error || effects || c.telemetry) return { i: c.index, ask: true };
  const u = new URL(c.request.url);
  return {
    i: c.index,
    method: c.request.method,
    pq: `${u.pathname}${u.search}`,
    body: c.request.bodyText ?? '',
    reply: {
      status: r.status,
      statusText: r.statusText,
      headers: r.headers,
      ...(r.chunks ? { chunks: r.chunks } : { body: r.body ? wireBodyOf(recordedBody(recording, r.body)) : undefined }),
      ...(r.trailers ? { trailers: r.trailers } : {}),
      ...(c.drawn ? { drawn: c.drawn } : {}),
      ...(x.reusedSocket !== undefined ? { reusedSocket: x.reusedSocket } : {}),
    },
  };
}

export interface AgentEnvInput {
  recording: Recording;
  options: ReplayOptions;
  configFile: string;
  db: DbSandbox | undefined;
  relocate: (value: string) => string;
  /** The recording's own env may be applied (its seal verifies here, or the caller trusts it). */
  trusted: boolean;
  /** The prompt an agent that reads its own prompt gets, and the file holding it. */
  prompt?: { text: string; file: string };
  /** The variables that put the agent in its recorded region (replayRegion). */
  region?: Record<string, string>;
}

/**
 * The environment the agent starts from: ours, the recorded explicit env minus redacted secrets
 * (the caller's own values stand) and minus what loads code (`loadsCode`: NODE_OPTIONS, LD_PRELOAD,
 * PATH…), then --env. What `${env.NAME}` in the project config reads. The recorded env is applied
 * only when `trusted` (the seal verifies, or --trust-recording); the run's input always is: it is
 * the recording's data, like its responses.
 */
export function explicitEnv(
  recording: Recording,
  options: ReplayOptions,
  relocate: (value: string) => string,
  trusted: boolean,
): Record<string, string> {
  const recordedEnv = Object.fromEntries(
    Object.entries(recording.manifest.agent.env ?? {})
      .filter(([k]) => (trusted || k === RUN_INPUT_ENV) && !loadsCode(k))
      .filter(([k, v]) => k === RUN_INPUT_ENV || !v.includes(PLACEHOLDER_PREFIX))
      .map(([k, v]) => [k, relocate(v)]),
  );
  return { ...(process.env as Record<string, string>), ...recordedEnv, ...options.env };
}

/** The recorded env a replay that does not trust the recording leaves out (what a warning names). */
export function untrustedRecordedEnv(recording: Recording, options: ReplayOptions): string[] {
  return Object.keys(recording.manifest.agent.env ?? {}).filter(
    (k) => k !== RUN_INPUT_ENV && !loadsCode(k) && options.env?.[k] === undefined,
  );
}

/** The sandbox database's address to the recorded one's, when they differ (ReplayConfig.dbTargets). */
function dbTargetsOf(recorded: string | undefined, sandbox: string | undefined): Pick<ReplayConfig, 'dbTargets'> {
  const [from] = databaseAddresses([sandbox]);
  const [to] = databaseAddresses([recorded]);
  if (from === undefined || to === undefined) return {};
  const name = (a: { host: string; port: number }) => `${a.host}:${a.port}`;
  return name(from) === name(to) ? {} : { dbTargets: { [name(from)]: name(to) } };
}

/** The variable the agent reads its database URL from: the recorded one, unless it loads code. */
function databaseEnvOf(recording: Recording): string {
  const name = recording.manifest.world?.db?.env;
  return name === undefined || loadsCode(name) ? 'DATABASE_URL' : name;
}

/** What a replay does not take from the recording's env (a warning names them). */
export function ignoredRecordedEnv(recording: Recording): string[] {
  const names = Object.keys(recording.manifest.agent.env ?? {}).filter(loadsCode);
  const db = recording.manifest.world?.db?.env;
  if (db !== undefined && loadsCode(db)) names.push(`${db} (world.db.env)`);
  return names;
}

/**
 * What the sandbox database lacks of the recorded one (`unbuilt`: views, triggers, checks,
 * policies, rules, functions, exclusion constraints, partitions, defaults outside the allow-list), said once before the agent runs: their definitions are SQL, never
 * run from a recording, so an agent that reads a view or calls a function fails there, and rows a
 * trigger wrote on the agent's writes are missing from the end state.
 */
export function unbuiltDatabaseWarning(
  recording: Recording,
  built: (o: Unbuilt) => boolean = () => false,
): string | undefined {
  const unbuilt = (recording.pre.db?.unbuilt ?? []).filter((o) => !built(o));
  if (unbuilt.length === 0) return undefined;
  const named = unbuilt.map(
    (o) => `${o.kind} ${o.schema}.${o.name}${o.table !== undefined ? ` on ${o.schema}.${o.table}` : ''}`,
  );
  const shown = listed(named);
  const kinds = new Set(unbuilt.map((o) => o.kind));
  const effects = [
    kinds.has('trigger') ? 'rows its triggers wrote when the agent wrote are missing from the end state' : '',
    kinds.has('view') || kinds.has('materialized view') || kinds.has('function')
      ? 'reading a view or calling a function fails'
      : '',
    kinds.has('check') || kinds.has('policy') || kinds.has('rule') || kinds.has('exclusion constraint')
      ? 'checks, policies, rules and exclusion constraints do not hold'
      : '',
    kinds.has('partition') ? "a partitioned table is one table holding its partitions' rows" : '',
    kinds.has('default') ? 'an insert that omits a column whose default is left out gets NULL there' : '',
  ].filter((e) => e !== '');
  return `the sandbox database is built from the recorded description and lacks ${shown} (their SQL is never run from a recording; --schema-sql runs your own): ${effects.join('; ')}`;
}

/**
 * What the sandbox database could not build for want of an extension (one it may not create, or
 * cannot here: vector on a server without pgvector), said once before the agent runs. The replay
 * proceeds: a column of a missing extension's type holds its values as text, so rows read and
 * written as text agree, and what needs the type's operators fails where the agent uses them.
 */
export function lackingDatabaseWarning(db: DbSandbox | undefined): string | undefined {
  if (db === undefined || db.lacks.length === 0) return undefined;
  return `the sandbox database lacks ${db.lacks.join('; ')} — the replay goes on without them: SQL that needs them fails`;
}

/**
 * The variables the recorded agent inherited (by name) that the replay's agent will not have: a
 * replay run from another shell without them (an API's URL, a workspace) departs for that alone.
 */
export function missingRecordedEnv(recording: Recording, env: Record<string, string>): string[] {
  return (recording.manifest.agent.envNames ?? []).filter((name) => env[name] === undefined && !loadsCode(name));
}

/**
 * What is said of the recorded env before the agent runs: what an untrusted recording's env left
 * out, what is never taken from a recording, and what was set when recorded but is not now.
 */
export function recordedEnvWarnings(
  recording: Recording,
  options: ReplayOptions,
  trusted: boolean,
  startEnv: Record<string, string>,
): string[] {
  const warnings: string[] = [];
  const notApplied = trusted ? [] : untrustedRecordedEnv(recording, options);
  if (notApplied.length > 0) {
    warnings.push(
      `the recording's env (${listed(notApplied)}) not applied: it was not made on this machine; pass --trust-recording to apply it, or give --env NAME=VALUE`,
    );
  }
  const ignored = ignoredRecordedEnv(recording);
  if (ignored.length > 0) {
    warnings.push(
      `the recording's ${ignored.join(', ')} not used: variables that load code or choose programs are never taken from a recording (give them with --env)`,
    );
  }
  const missing = missingRecordedEnv(recording, startEnv);
  if (missing.length > 0) {
    warnings.push(
      `the agent was recorded with ${listed(missing)} set, not set now: export ${missing.length > 1 ? 'them' : 'it'} or give --env NAME=VALUE (without ${missing.length > 1 ? 'them' : 'it'} the agent may take another path)`,
    );
  }
  return warnings;
}

/** Names in a warning: the first eight, and how many more. */
function listed(names: readonly string[]): string {
  return names.length > 8 ? `${names.slice(0, 8).join(', ')} and ${names.length - 8} more` : names.join(', ');
}

/**
 * The variables that put the replayed agent in its recorded region (src/recording/region.ts), and
 * what is said when they cannot: `TZ` for the recorded time zone, `LC_MESSAGES` (where ICU takes
 * Node's default locale from, and no glibc program its formats) for the recorded locale when the
 * agent's env would give another. What --env sets (TZ; LC_ALL, LC_MESSAGES or LANG) stands; a
 * recording made before regions were recorded changes nothing.
 */
export function replayRegion(
  recording: Recording,
  options: ReplayOptions,
  env: Record<string, string>,
): { env: Record<string, string>; warnings: string[] } {
  const { timeZone, locale } = recording.manifest.runtime;
  const out: Record<string, string> = {};
  const warnings: string[] = [];
  if (timeZone !== undefined && options.env?.TZ === undefined) {
    if (knownTimeZone(timeZone)) out.TZ = timeZone;
    else
      warnings.push(
        `the agent's recorded time zone ${timeZone} is not known to this Node: it runs in this machine's (${timeZoneOf(env.TZ) ?? 'unknown'}); give --env TZ=ZONE`,
      );
  }
  const given = LOCALE_VARS.some((name) => options.env?.[name] !== undefined);
  const now = localeOf(env);
  if (locale !== undefined && !given && now !== locale) {
    if (!knownLocale(locale))
      warnings.push(
        `the agent's recorded locale ${locale} is not known to this Node: it runs in ${now ?? "this machine's"}; give --env LC_MESSAGES=LOCALE`,
      );
    else if (env.LC_ALL !== undefined)
      warnings.push(
        `the agent was recorded in locale ${locale}; LC_ALL=${env.LC_ALL} here gives it ${now ?? 'another'} (dates and numbers it formats may differ): unset LC_ALL or give --env LC_ALL=VALUE`,
      );
    else out.LC_MESSAGES = locale;
  }
  return { env: out, warnings };
}

/** The agent's environment: ours, the recorded explicit env, --env, then the preload and the sandbox. */
export async function agentEnv(input: AgentEnvInput): Promise<Record<string, string>> {
  const { recording, db, prompt } = input;
  const env = explicitEnv(recording, input.options, input.relocate, input.trusted);
  delete env.TAPEDECK_RECORD_IPC;
  // The agent's own process is unnamed (sandbox/preload/shared-process.mjs): a name the replayer
  // inherited (a replay run by a recorded agent) is not the agent's.
  delete env.TAPEDECK_PROCESS;
  // The redaction key is the replayer's (it redacts in this process), never the agent's: with it,
  // guesses of a redacted secret could be tested against the recording's placeholders.
  delete env.TAPEDECK_REDACTION_KEY;
  env.TAPEDECK_REPLAY_CONFIG = input.configFile;
  env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --import ${pathToFileURL(REPLAY_PRELOAD).href}`.trim();
  // Python processes of the tree are handed their recorded values too (sandbox/python/hook.ts).
  Object.assign(env, withPythonHook({ PYTHONPATH: env.PYTHONPATH }));
  if (db) env[databaseEnvOf(recording)] = db.url;
  // What it formats from recorded values comes out as it did (a prompt's date, an hour, a price).
  Object.assign(env, input.region);
  if (prompt) {
    await writeFile(prompt.file, prompt.text);
    env.SYSTEM_PROMPT = prompt.text;
    env.TAPEDECK_SYSTEM_PROMPT = prompt.text;
    env.SYSTEM_PROMPT_FILE = prompt.file;
    env.TAPEDECK_SYSTEM_PROMPT_FILE = prompt.file;
  }
  return env;
}

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What the replay's watchdog needs of a running agent: to stop its whole tree, and to say what it is doing. */
export interface AgentHandle {
  /** Kills the agent and everything it started (its process group and descendants). */
  stop(): void;
  /** One line on what the agent's processes are doing now (computing or waiting, and on what). */
  describe(): Promise<string>;
}

/** Told as the agent runs: its handle once started, and each piece of output (progress). */
export interface AgentWatch {
  started(handle: AgentHandle): void;
  output(): void;
}

/**
 * Runs the agent to its exit; output is collected when stdio is 'pipe', read and dropped when
 * 'ignore' (so that output still counts as progress). Stopping it ends every descendant (each
 * round freezes what it finds before killing, so none forks away). With `detached` (the caller
 * handles the terminal's signals: ReplayOptions.stopOnSignals) the agent leads a process group of
 * its own, and the group goes too: a process whose parent died is still in it. Without, the agent
 * stays in the caller's group, so a Ctrl-C the terminal sends reaches it as before.
 */
export function runAgent(
  command: string[],
  options: { cwd: string; env: Record<string, string>; stdio: 'inherit' | 'pipe' | 'ignore'; detached?: boolean },
  output: { stdout: string; stderr: string },
  watch: AgentWatch,
): Promise<AgentExit> {
  const { cwd, env, stdio } = options;
  const group = options.detached === true;
  return new Promise<AgentExit>((resolve, reject) => {
    const piped = stdio === 'inherit' ? 'inherit' : 'pipe';
    const proc = spawn(command[0] as string, command.slice(1), {
      cwd,
      env,
      stdio: ['ignore', piped, piped],
      detached: group,
    });
    const root = proc.pid;
    if (root !== undefined)
      watch.started({
        stop: () => void killTree(root, { group }),
        describe: () => describeTree(root, { group }),
      });
    for (const key of ['stdout', 'stderr'] as const) {
      proc[key]?.on('data', (d: Buffer) => {
        if (stdio === 'pipe') output[key] += d.toString('utf8');
        watch.output();
      });
    }
    proc.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'ENOENT'
          ? new TapedeckError('COMMAND_NOT_FOUND', `Cannot run the agent: "${command[0]}" was not found (cwd ${cwd}).`)
          : new TapedeckError('COMMAND_FAILED', `Cannot run the agent "${command.join(' ')}": ${error.message}`),
      );
    });
    proc.once('exit', (code, signal) => {
      // In a group of its own, what the agent started and left behind (a daemon, a child it never
      // waited for) ends with it; otherwise, as before, it is the caller's to end.
      if (root !== undefined) killTree(root, { group });
      resolve({ code, signal });
    });
  });
}

/** What each agent process's preload wrote at exit: its last file writes, values and unsent notices. */
export interface ExitDumps {
  fs: FsReport[];
  nd: NdBatch[];
  pending: ReplayNotice[];
  /** Recorded answers handed over at the bound, before their process had drawn the values recorded before them. */
  unheld: number;
  /** Database replies that went as they came, not in their recorded order. */
  dbLate: number;
  /** Values of each kind the processes drew past their recorded ones (made up: the clock goes on). */
  pastRecorded: Record<string, number>;
  /**
   * A run recorded in-process: how it started in the replayed command, what the command drew
   * before, and how many processes it started before (the command's, `0.n`).
   */
  runStart?: { by?: 'marker' | 'call'; before: Record<string, number>; processes?: number };
}

export async function readExitDumps(tmp: string): Promise<ExitDumps> {
  const out: ExitDumps = { fs: [], nd: [], pending: [], unheld: 0, dbLate: 0, pastRecorded: {} };
  for (const name of await readdir(tmp)) {
    if (!name.startsWith('dump.')) continue;
    let json: unknown;
    try {
      json = JSON.parse(await readFile(path.join(tmp, name), 'utf8'));
    } catch {
      continue; // cut short by a kill: what it held is lost, as a crashed agent's last turn is
    }
    const parsed = ExitDumpSchema.safeParse(json);
    if (!parsed.success) continue;
    const dump = parsed.data;
    for (const message of dump.pending ?? []) {
      const notice = ReplayNoticeSchema.safeParse(message);
      if (notice.success) out.pending.push(notice.data);
    }
    if (dump.fs) out.fs.push(...dump.fs);
    if (dump.nd) out.nd.push(dump.nd);
    out.unheld += dump.nondeterminism?.unheld ?? 0;
    out.dbLate += dump.nondeterminism?.dbLate ?? 0;
    const runStart = dump.nondeterminism?.runStart;
    if (runStart !== undefined)
      out.runStart = {
        ...(runStart.by ? { by: runStart.by } : {}),
        before: runStart.before,
        ...(runStart.processes ? { processes: runStart.processes } : {}),
      };
    for (const [kind, n] of Object.entries(dump.nondeterminism?.fallback ?? {}))
      if (n > 0) out.pastRecorded[kind] = (out.pastRecorded[kind] ?? 0) + n;
  }
  return out;
}

/** Whether a replay hands the database's replies over in their recorded order (`dbOrder`'s default by mode). */
export function dbOrderOf(options: Pick<ReplayOptions, 'dbOrder' | 'mode'>): boolean {
  return options.dbOrder ?? options.mode === 'exact';
}
