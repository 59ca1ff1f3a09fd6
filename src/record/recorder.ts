// What recordCommand and record() share: choosing and checking the output folder, opening the
// writer, world capture and session, and closing them in the right order (also on failure).
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { sameHost } from '../../sandbox/preload/network-guard.mjs';
import { databaseAddresses, databaseSockets } from '../postgres/connect.js';
import {
  createRecordingWriter,
  createRedactor,
  type Manifest,
  type RecordingWriter,
  type RedactionOptions,
  type Redactor,
  type RunResponse,
  removeRecordingFolder,
  type SeenConnection,
  sweepStaging,
  TapedeckError,
} from '../recording/index.js';
import type { RecordingStore } from '../store/recordings/types.js';
import type { ToolRule } from './classify.js';
import type { SampleOption } from './sampling.js';
import { type RecordedEvent, RecordSession } from './session.js';
import type { WorldCapture } from './world/index.js';
import { type ObservedWorldFacts, observedSnapshots } from './world/observed-snapshots.js';

export interface RecordOptions {
  /** Filesystem root to snapshot and watch. */
  fsRoot?: string;
  /** postgres:// URL of the database to snapshot and watch (world: 'snapshot'). */
  dbUrl?: string;
  /**
   * How the database world is captured. 'observed' (default in-process): only what the run read
   * and wrote through its own pg clients, no DDL, no full-table read — safe on a production
   * database, and runs may overlap. 'snapshot': whole-schema snapshots and change triggers on
   * `dbUrl` (test and staging databases; the run has the process to itself).
   */
  world?: 'observed' | 'snapshot';
  /** The env variable the replayed agent reads its database URL from (observed world; default DATABASE_URL). */
  dbEnv?: string;
  /** Observed world: rows kept as images at most (default 50 000); past it the manifest says so. */
  maxObservedRows?: number;
  /** Schemas to capture; default all non-system schemas. */
  dbSchemas?: string[];
  /** Recording folder; default <folder>/<id>/. */
  out?: string;
  /** Where recordings go when `out` is not given: each in <folder>/<id>/ (default recordings/ under cwd). */
  folder?: string;
  /**
   * A recording store to ship each finished recording to (`s3://bucket/prefix`, `pg://…`,
   * `file://…`): written in its folder first, pushed when it is finished, then removed from this
   * disk. A recording that cannot be pushed stays in its folder (`tapedeck push` it later).
   */
  store?: string;
  name?: string;
  /** Working directory of the agent (default process.cwd()). */
  cwd?: string;
  /** Extra tool classification rules (tried before the defaults), or a JSON/YAML rules file. */
  rules?: ToolRule[] | string;
  /** Bodies larger than this are cut (and marked truncated). Default: no cap. */
  maxBodyBytes?: number;
  /** Files up to this many bytes are kept inline in their entries (default and most INLINE_FILE_MAX); 0: every file a blob. */
  inlineFileMax?: number;
  /** Fraction of runs to record, 0..1 (default 1), or rules (errors, slow runs, tags; see sampling.ts). A run not sampled just runs. */
  sample?: SampleOption;
  /** In-process: the command that replays this run (default: this process's command line). */
  command?: string[];
  /** In-process: the run's input (JSON), handed to the replayed command (runInput()). */
  input?: unknown;
  /** Capture Date/Math.random/crypto values (default: on). */
  nondeterminism?: boolean;
  redaction?: RedactionOptions;
  /** A redactor to use as it is (shared by many runs: building one reads the key). */
  redactor?: Redactor;
  /**
   * In-process: where failures of the recorder itself go (a full disk, an unreachable store).
   * Given, the run goes on unrecorded instead of failing; the default is to throw.
   */
  onRecorderError?: (error: unknown) => void;
  /**
   * In-process: called once the run's recording is kept (written, or shipped to its store),
   * whether fn returned or threw (a server adapter's onRecorded: a handler that threw is the run
   * the errors rule keeps).
   */
  onKept?: (run: { id: string; dir: string; steps: number }) => void;
  /** Called after each event is written; awaited before the agent passes the next step boundary. */
  onEvent?: (event: RecordedEvent) => void | Promise<void>;
}

/** How a recording ends: its status, and what the run's end adds to it. */
export interface FinishOutcome {
  /** interrupted: a signal to tapedeck was forwarded to the agent (manifest.stopped says which). */
  status: 'complete' | 'incomplete' | 'failed' | 'interrupted';
  exitCode: number | null;
  signal?: string | null;
  /** Merged into the manifest's final write. */
  manifest?: Partial<Manifest>;
  /** A server run's answer (run.completed's `response`). */
  response?: RunResponse;
  /** An observed database world: what its pre and post snapshots are assembled from, and the manifest's account of it. */
  world?: ObservedWorldRecord;
}

export interface ObservedWorldRecord {
  /** Assembled into the snapshots here, where the recording is written (the recording thread, for a server's runs). */
  facts: ObservedWorldFacts;
  db: NonNullable<NonNullable<Manifest['world']>['db']>;
}

export interface ActiveRecording {
  writer: RecordingWriter;
  session: RecordSession;
  world?: WorldCapture;
  syncWorld: boolean;
  /**
   * Drains, writes post snapshots and run.completed, closes everything; returns where the
   * recording is. `manifest`: merged into the manifest's final write.
   */
  finish(outcome: FinishOutcome): Promise<string>;
  /** Drops the recording (a run the sampling rules did not keep): closes everything, deletes the folder. */
  discard(): Promise<void>;
  /**
   * Takes the world's first snapshot, when openRecording was told to leave it for later (the
   * agent's first process starts meanwhile and waits for it); else nothing. On failure the
   * recording is closed as failed.
   */
  startWorld(): Promise<void>;
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40) || 'run';

export function newRecordingId(name: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return `${slug(name)}-${stamp}-${randomBytes(3).toString('hex')}`;
}

/** Parents this process has checked (a server records every run into the same folder). */
const checkedParents = new Set<string>();

/**
 * Checks that the recording folder `dir` can be made, or explains why not: its parent exists (made
 * if missing) and is writable, and `dir`, if it exists, holds no recording. The folder itself is
 * made by the writer, whole (src/recording/staging.ts). The first time a parent is seen, the temp
 * folders killed recorders left in it are swept.
 */
export function prepareOutputDir(dir: string): void {
  const parent = path.dirname(dir);
  if (checkedParents.has(parent)) return;
  const fail = (cause: unknown) => {
    const code = (cause as NodeJS.ErrnoException).code ?? 'EACCES';
    throw new TapedeckError(
      'OUTPUT_NOT_WRITABLE',
      `cannot write the recording to ${dir} (${code}). Choose a writable folder with --out, or fix its permissions.`,
      { cause },
    );
  };
  try {
    // Segment by segment: a recursive mkdir under /proc never returns on Node 20.
    const missing: string[] = [];
    let existing = parent;
    while (!existsSync(existing)) {
      missing.unshift(existing);
      const up = path.dirname(existing);
      if (up === existing) break;
      existing = up;
    }
    if (!statSync(existing).isDirectory()) {
      throw Object.assign(new Error(`${existing} is not a directory`), { code: 'ENOTDIR' });
    }
    for (const segment of missing) mkdirSync(segment);
    accessSync(parent, constants.W_OK);
    if (existsSync(dir)) {
      if (!statSync(dir).isDirectory())
        throw Object.assign(new Error(`${dir} is not a directory`), { code: 'ENOTDIR' });
      accessSync(dir, constants.W_OK);
    }
  } catch (cause) {
    fail(cause);
  }
  if (existsSync(path.join(dir, 'events.jsonl'))) {
    throw new TapedeckError('RECORDING_EXISTS', `${dir} already holds a recording; choose another --out folder.`);
  }
  checkedParents.add(parent);
  void sweepStaging(parent);
}

// One redactor per key source for the process (and one in the recording thread): building one reads the key file.
const redactors = new Map<string, Redactor>();

/** The redactor for `options`: the one given, else the process's for the current key source (undefined: build one from options.redaction). */
export function sharedRedactor(options: RecordOptions): Redactor | undefined {
  if (options.redactor) return options.redactor;
  if (options.redaction !== undefined) return undefined;
  const source = `${process.env.TAPEDECK_REDACTION_KEY ?? ''}\u0000${process.env.XDG_CONFIG_HOME ?? ''}`;
  let redactor = redactors.get(source);
  if (redactor === undefined) {
    redactor = createRedactor();
    redactors.clear();
    redactors.set(source, redactor);
  }
  return redactor;
}

// Stores are opened once per process and URL, and closed after a minute without use.
const openStores = new Map<string, { store: Promise<RecordingStore>; timer?: NodeJS.Timeout; users: number }>();

/**
 * Pushes a finished recording folder to the store at `storeUrl` and removes the folder; returns
 * the recording's URL in the store. On failure the folder stays and the error is thrown.
 */
export async function shipRecording(dir: string, storeUrl: string): Promise<string> {
  const { openStore } = await import('../store/recordings/index.js');
  let entry = openStores.get(storeUrl);
  if (entry === undefined) {
    entry = { store: openStore(storeUrl), users: 0 };
    openStores.set(storeUrl, entry);
    entry.store.catch(() => openStores.delete(storeUrl));
  }
  clearTimeout(entry.timer);
  entry.users++;
  try {
    const put = await (await entry.store).put(dir);
    await removeRecordingFolder(dir);
    return put.url;
  } finally {
    const e = entry;
    if (--e.users === 0) {
      e.timer = setTimeout(() => {
        if (openStores.get(storeUrl) !== e || e.users > 0) return;
        openStores.delete(storeUrl);
        void e.store.then((store) => store.close()).catch(() => {});
      }, 60_000);
      e.timer.unref();
    }
  }
}

export async function openRecording(
  options: RecordOptions,
  agent: Manifest['agent'],
  runtime: Omit<Manifest['runtime'], 'node' | 'platform'>,
  opening: { worldLater?: boolean } = {},
): Promise<ActiveRecording> {
  const cwd = options.cwd ?? process.cwd();
  const name = options.name ?? path.basename(agent.entry ?? agent.command.at(-1) ?? 'run');
  const dir = path.resolve(cwd, options.out ?? path.join(options.folder ?? 'recordings', newRecordingId(name)));
  prepareOutputDir(dir);
  const id = path.basename(dir);
  const rules =
    typeof options.rules === 'string'
      ? (await import('./rules-file.js')).loadToolRules(options.rules)
      : (options.rules ?? []);
  let writer: RecordingWriter;
  try {
    writer = await createRecordingWriter(dir, {
      id,
      name,
      agent,
      runtime,
      // This machine ran the command: a replay here may run it again without being told to trust it.
      seal: true,
      ...(options.redaction ? { redaction: options.redaction } : {}),
      ...(options.redactor ? { redactor: options.redactor } : {}),
      ...(options.inlineFileMax === undefined ? {} : { inlineFileMax: options.inlineFileMax }),
    });
  } catch (cause) {
    if (cause instanceof TapedeckError) throw cause;
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EROFS' || code === 'EPERM' || code === 'ENOSPC') {
      throw new TapedeckError('OUTPUT_NOT_WRITABLE', `cannot write the recording to ${dir} (${code}).`, { cause });
    }
    throw cause;
  }
  let world: WorldCapture | undefined;
  // Observed capture (in-process) never snapshots a database: it follows the run's own clients.
  const dbUrl = options.world === 'observed' ? undefined : options.dbUrl;
  if (options.fsRoot !== undefined || dbUrl !== undefined) {
    try {
      // File and database capture (postgres, the fs tracker) load only for a run that asks for them.
      const { openWorld } = await import('./world/index.js');
      world = await openWorld(
        {
          id,
          exclude: [dir],
          ...(options.fsRoot === undefined ? {} : { fsRoot: path.resolve(cwd, options.fsRoot) }),
          ...(dbUrl === undefined ? {} : { dbUrl }),
          ...(options.dbSchemas === undefined ? {} : { dbSchemas: options.dbSchemas }),
        },
        (bytes) => writer.fileContent(bytes),
      );
      writer.setManifest({ world: world.manifest });
      if (opening.worldLater !== true) await world.start(writer);
    } catch (error) {
      await world?.close().catch(() => {});
      await writer.close('failed');
      throw error;
    }
  }
  const session = new RecordSession(writer, {
    rules,
    recordedConnection: recordedDatabase([dbUrl], options.world === 'observed'),
    ...(options.maxBodyBytes !== undefined && options.maxBodyBytes >= 0
      ? { maxStreamBytes: options.maxBodyBytes }
      : {}),
    ...(world ? { world } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  });
  let finished = false;
  let worldStarted = opening.worldLater !== true;
  return {
    writer,
    session,
    async startWorld() {
      if (world === undefined || worldStarted) return;
      worldStarted = true;
      try {
        await world.start(writer);
      } catch (error) {
        finished = true;
        await world.close().catch(() => {});
        await writer.close('failed');
        throw error;
      }
    },
    ...(world ? { world } : {}),
    syncWorld: world !== undefined,
    async finish(outcome) {
      if (finished) return writer.dir;
      finished = true;
      let status = outcome.status;
      let manifest = outcome.manifest;
      // What the run opened that nothing records, counted once every message is handled.
      const accounted = (): Partial<Manifest> | undefined => {
        const unrecorded = session.connections.list();
        const unhooked = session.unhooked.list();
        const unwatched = session.unwatched.list();
        return unrecorded.length > 0 || unhooked.length > 0 || unwatched.length > 0
          ? {
              ...manifest,
              ...(unrecorded.length > 0 ? { unrecorded } : {}),
              ...(unhooked.length > 0 ? { unhooked } : {}),
              ...(unwatched.length > 0 ? { unwatched } : {}),
            }
          : manifest;
      };
      // A world that cannot be written leaves the recording closed, as incomplete, and says why.
      let worldError: { error: unknown } | undefined;
      if (outcome.world !== undefined) {
        const { facts, db } = outcome.world;
        try {
          const { pre, post } = observedSnapshots(facts);
          await writer.writeSnapshotAsync('pre', { db: pre });
          await writer.writeSnapshotAsync('post', { db: post });
          manifest = { ...manifest, world: { ...writer.manifest.world, db } };
        } catch (error) {
          worldError = { error };
          status = 'incomplete';
        }
      }
      try {
        await session.finish();
        // A world never started (the agent failed to start first) has no first snapshot to pair.
        if (worldStarted) await world?.finish(writer);
        writer.append({
          type: 'run.completed',
          stepId: 0,
          payload: {
            status:
              status === 'interrupted'
                ? 'interrupted'
                : outcome.exitCode === 0 && status === 'complete'
                  ? 'complete'
                  : 'failed',
            exitCode: outcome.exitCode,
            ...(outcome.signal === undefined ? {} : { signal: outcome.signal }),
            ...(session.lastOutput === undefined ? {} : { finalOutput: session.lastOutput }),
            ...(outcome.response === undefined ? {} : { response: outcome.response }),
          },
        });
      } catch (error) {
        status = 'failed';
        await world?.close().catch(() => {});
        await writer.close(status, accounted());
        throw error;
      }
      await world?.close();
      await writer.close(status, accounted());
      if (worldError !== undefined) throw worldError.error;
      return writer.dir;
    },
    async discard() {
      if (finished) return;
      finished = true;
      try {
        await session.idle().catch(() => {});
        await world?.close().catch(() => {});
        await writer.close('incomplete');
      } finally {
        await removeRecordingFolder(writer.dir);
      }
    },
  };
}

/**
 * Whether a connection the socket watcher reported is the run's database after all: one of the
 * databases it was given (snapshot capture), or any made by the `pg` client under observed capture.
 */
function recordedDatabase(urls: Array<string | undefined>, observedPg: boolean): (c: SeenConnection) => boolean {
  const addresses = databaseAddresses(urls);
  const sockets = new Set(databaseSockets(urls));
  return (c) => {
    // A Python process's connection to the given database: the world capture records its effects.
    if (c.kind !== 'postgres' && c.kind !== 'python') return false;
    if (c.kind === 'postgres' && observedPg && c.by === 'pg') return true;
    // Its Unix socket (PGHOST=/var/run/postgresql): the same server as its host and port.
    if (c.target.startsWith('/')) return sockets.has(path.resolve(c.target));
    const at = c.target.lastIndexOf(':');
    const host = c.target.slice(0, at).replace(/^\[|\]$/g, '');
    const port = Number(c.target.slice(at + 1));
    return addresses.some((d) => d.port === port && sameHost(d.host, host));
  };
}
