// record(options, fn): records whatever fn does in this process (production handlers, tests),
// with the same capture layer the child preload uses, wired straight to a session per run. Any
// number of record() calls may run at once: each run is its own async context (AsyncLocalStorage
// in the capture layer), so every call, tool() and clock/random draw goes to the run that
// started it, and work outside any run passes through unrecorded. The capture layer is installed
// while at least one run is active and removed with the last one: between runs the process sees
// its own Date, Math.random, fetch, dispatcher and diagnostics channels.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { monotonicNow, nowMs } from '../../sandbox/preload/shared-clock.mjs';
import {
  type DbChangedPayload,
  type Manifest,
  RUN_INPUT_ENV,
  type RunResponse,
  regionOf,
  TapedeckError,
  whyNotJson,
} from '../recording/index.js';
import { type ChildRun, closeChildDoor, openChildRun } from './child-door.js';
import { RECORD_PRELOAD } from './command.js';
import {
  type ActiveRecording,
  type FinishOutcome,
  newRecordingId,
  type ObservedWorldRecord,
  openRecording,
  prepareOutputDir,
  type RecordOptions,
  sharedRedactor,
  shipRecording,
} from './recorder.js';
import { type Sampling, samplingOf } from './sampling.js';
import { findSdkVersions } from './sdk-versions.js';
import { openThreadRecording } from './session-thread.js';
import { RECORDER_KEY, tool } from './tool.js';
import { installPgObserver, ObservedRun, type PgObserver } from './world/observed.js';

/** One run in the capture layer (src/record/preload/record.mjs createRun); opaque here but for its context. */
type CaptureRun = { readonly closed: boolean; context?: RecordContext; observed?: ObservedRun; children?: ChildRun };
interface CaptureSink {
  lazy?: boolean;
  send(message: unknown): void;
  sync(message: Record<string, unknown>): Promise<unknown>;
}
interface RunOptions {
  maxBody?: number;
  syncWorld?: boolean;
  nondeterminism?: boolean;
}
interface SharedCapture {
  open(sink: CaptureSink, options: RunOptions): CaptureRun;
  within<T>(run: CaptureRun, fn: () => T): T;
  current(): CaptureRun | undefined;
  outside<T>(fn: () => T): T;
  bind<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
  currentTool(): { run: CaptureRun; db: DbChangedPayload[] } | undefined;
  close(run: CaptureRun): void;
  dispose(): void;
}
interface CaptureModule {
  loadCaptureLayers(options: { capture?: 'fast' | 'interceptors' }): Promise<void>;
  installSharedCapture(options: {
    capture?: 'fast' | 'interceptors';
    fsRoot?: string;
    childEnv?: (run: CaptureRun, env: Record<string, string | undefined>) => Record<string, string> | undefined;
  }): SharedCapture;
}

export interface RecordContext {
  /** The recording's id ('' when this run is not recorded). */
  id: string;
  /** The recording folder ('' when this run is not recorded). */
  dir: string;
  /** tool(name, fn) bound to this recording (the module-level tool() works too). */
  tool: typeof tool;
  /** Tags this run; a sampling rule `tags` keeps runs that carry one of its tags. */
  tag(name: string): void;
  /** Marks the run failed without throwing (a server's 5xx answer): run.completed says so, and `errors` sampling keeps it. */
  fail(): void;
  /** Sets the run's input (JSON) for replay, once it is known (a request body read by the handler). */
  setInput(input: unknown): void;
  /**
   * Says how the run's HTTP answer went, for run.completed's `response` (the server adapters call
   * it): the status sent (none when the client was sent nothing), and whether the client left first.
   */
  setResponse(response: RunResponse): void;
  /**
   * Work the run leaves going after its answer (saving the conversation, a summary, a webhook):
   * the run lasts until the promise settles too, so its calls are in the recording (a replay runs
   * them again). A rejection marks the run failed. As a platform's waitUntil() or Next.js's after().
   */
  waitUntil(work: Promise<unknown>): void;
}

export interface RecordResult<T> {
  /** Where the recording is ('' when none was kept): a folder, or the store URL it was shipped to. */
  dir: string;
  id: string;
  result: T;
  /** Whether a recording was kept (sampled in, and kept by the sampling rules). */
  recorded: boolean;
  steps: number;
}

/** The layer and how many runs use it; an exclusive run (world snapshot, fs root) has it alone. */
let layer: { capture: SharedCapture; pg: PgObserver; users: number; exclusive: boolean } | undefined;
let capturePromise: Promise<CaptureModule> | undefined;
let installing: Promise<void> | undefined;

async function acquire(
  exclusive: boolean,
  fsRoot: string | undefined,
  cwd: string,
): Promise<{ capture: SharedCapture; pg: PgObserver }> {
  capturePromise ??= import(pathToFileURL(RECORD_PRELOAD).href) as Promise<CaptureModule>;
  const mod = await capturePromise;
  // Runs that start together install the layer once.
  while (installing !== undefined) await installing;
  if (layer !== undefined && (exclusive || layer.exclusive)) {
    throw new TapedeckError(
      'RECORD_BUSY',
      exclusive
        ? 'record(): a run with world capture of the whole database (world: "snapshot") or of a folder (fsRoot) needs the process to itself, and other runs are being recorded. Use world: "observed" for concurrent runs.'
        : 'record(): a run with world: "snapshot" or fsRoot is being recorded and has the process to itself; record this run after it, or use world: "observed" for both.',
    );
  }
  if (layer === undefined) {
    let done!: () => void;
    installing = new Promise((resolve) => (done = resolve));
    try {
      const options = exclusive ? { capture: 'interceptors' as const, ...(fsRoot ? { fsRoot } : {}) } : {};
      await mod.loadCaptureLayers(options);
      // The Node processes a run starts record into its recording (child-door.ts).
      const capture = mod.installSharedCapture({ ...options, childEnv: (run, env) => run.children?.env(env) });
      let pg: PgObserver;
      try {
        pg = await installPgObserver({
          cwd,
          runOf: () => {
            const run = capture.current();
            return run === undefined || run.closed ? undefined : run.observed;
          },
          outside: (fn) => capture.outside(fn),
          bind: (fn) => capture.bind(fn),
        });
      } catch (error) {
        capture.dispose();
        throw error;
      }
      layer = { capture, pg, users: 0, exclusive };
    } finally {
      installing = undefined;
      done();
    }
  }
  layer.users++;
  return { capture: layer.capture, pg: layer.pg };
}

function release(): void {
  if (layer === undefined) return;
  if (--layer.users > 0) return;
  layer.capture.dispose();
  layer.pg.dispose();
  layer = undefined;
  closeChildDoor();
}

/**
 * The recorded run the caller is part of (its async context), or undefined: tag it, mark it
 * failed, or log its id from anywhere in the code it runs.
 *
 * @example
 * currentRecording()?.tag('refund');
 */
export function currentRecording(): RecordContext | undefined {
  const run = layer?.capture.current();
  return run === undefined || run.closed ? undefined : run.context;
}

/** How many record() runs are active in this process now. */
export function activeRuns(): number {
  return layer?.users ?? 0;
}

const sdkVersionsByCwd = new Map<string, Record<string, string>>();

/**
 * Records fn's HTTP/LLM calls, tool() calls, clock/random values and database traffic into a
 * recording. Runs may overlap freely (`world: 'observed'`, the default); a run that snapshots a
 * whole database (`world: 'snapshot'`) or a folder (`fsRoot`) needs the process to itself. If fn
 * throws, the recording is closed `incomplete` with every finished step, and the error is rethrown.
 * Called inside a recorded run, fn is part of that run (given its context) and makes no recording
 * of its own (`recorded: false`).
 *
 * @example
 * const { id } = await record({ name: 'support-ticket-42' }, () => runAgent(ticket));
 */
export async function record<T>(
  options: RecordOptions,
  fn: (ctx: RecordContext) => Promise<T> | T,
): Promise<RecordResult<T>> {
  const tags = new Set<string>();
  let markedFailed = false;
  let input: { value: unknown } | undefined;
  let response: RunResponse | undefined;
  const background: Array<Promise<unknown>> = [];
  const base = {
    tool,
    tag: (name: string) => void tags.add(name),
    fail: () => {
      markedFailed = true;
    },
    setInput: (value: unknown) => {
      input = { value };
    },
    setResponse: (value: RunResponse) => {
      response = value;
    },
    waitUntil: (work: Promise<unknown>) => void background.push(work),
  };
  // The work given to waitUntil(), and any it gives in turn; sampled in or out, the run waits for it.
  const settleBackground = async () => {
    for (let i = 0; i < background.length; i++) {
      await Promise.resolve(background[i]).catch(() => {
        markedFailed = true;
      });
    }
  };
  const unrecorded = async (): Promise<RecordResult<T>> => {
    try {
      return { dir: '', id: '', result: await fn({ id: '', dir: '', ...base }), recorded: false, steps: 0 };
    } finally {
      await settleBackground();
    }
  };
  const sampling: Sampling = samplingOf(options.sample);
  // Under `tapedeck replay` the replay preload answers every call: recording again would fight it.
  // The command's run starts here, as at runInput().
  if (process.env.TAPEDECK_REPLAY_CONFIG !== undefined) {
    markRunStart();
    return unrecorded();
  }
  // Inside a recorded run (an agent library's own record() under a server adapter's), fn is part
  // of that run: its calls are the session's, and a replay of the session runs them again. A
  // recording of its own would leave them out of the session's, whose replay would then diverge.
  const around = layer?.capture.current();
  if (around?.context !== undefined && !around.closed) {
    return { dir: '', id: '', result: await fn(around.context), recorded: false, steps: 0 };
  }
  if (!sampling.start()) return unrecorded();
  let opened: { capture: SharedCapture; pg: PgObserver; recording: RunRecording };
  try {
    opened = await openRun(options);
  } catch (error) {
    if (options.onRecorderError === undefined) throw error;
    options.onRecorderError(error);
    return unrecorded();
  }
  const { capture, pg, recording } = opened;
  let nextSync = 1;
  const run = capture.open(
    {
      lazy: true,
      send: (message) => recording.send(message),
      sync: (message) => recording.sync({ ...message, t: 'sync', n: nextSync++ }),
    },
    {
      maxBody: options.maxBodyBytes ?? -1,
      syncWorld: recording.syncWorld,
      nondeterminism: options.nondeterminism ?? true,
    },
  );
  const context: RecordContext = { id: recording.id, dir: recording.dir, ...base };
  run.context = context;
  run.children = openChildRun(
    { send: (message) => recording.send(message), sync: (message) => recording.sync(message) },
    { maxBody: options.maxBodyBytes ?? -1, nondeterminism: options.nondeterminism ?? true },
  );
  const world = options.world ?? 'observed';
  if (world === 'observed') {
    run.observed = new ObservedRun(
      (changes) => {
        // Committed inside a tool() call of this run: the tool's effects (a replay serves the call
        // without running it, and applies them). Elsewhere the agent's own: a replay runs them again.
        const inTool = capture.currentTool();
        if (inTool?.run === run) inTool.db.push(...changes);
        else recording.send({ t: 'db', ts: nowMs(), changes: changes.map((c) => ({ ...c, own: true as const })) });
      },
      options.maxObservedRows === undefined ? {} : { maxRows: options.maxObservedRows },
    );
  }
  const started = monotonicNow();
  let result: T;
  let failure: { error: unknown } | undefined;
  try {
    result = await capture.within(run, () => fn(context));
  } catch (error) {
    failure = { error };
    result = undefined as T;
  } finally {
    await settleBackground();
    await run.children.close();
    capture.close(run);
    release();
  }
  // The run's async context outlives it in what it created and the process keeps (a pool's
  // connection, a kept-alive socket, a timer): the closed run keeps no more than its flag there,
  // not the rows its world read.
  const observed = run.observed;
  run.observed = undefined;
  run.children = undefined;
  run.context = undefined;
  const failed = failure !== undefined || markedFailed;
  const keep = sampling.keep({ failed, durationMs: monotonicNow() - started, tags });
  let where = '';
  let steps = 0;
  try {
    if (keep) {
      // What the run's end adds to the manifest goes into its final write, not a write of its own.
      const manifest: Partial<Manifest> = {};
      if (tags.size > 0) manifest.tags = [...tags].sort();
      if (input !== undefined) {
        const env = { ...recording.agent.env, [RUN_INPUT_ENV]: JSON.stringify(input.value ?? null) };
        manifest.agent = { ...recording.agent, env };
      }
      // A world that cannot be read leaves the recording closed, as incomplete, and says why.
      let observedWorld: ObservedWorldRecord | undefined;
      let worldError: { error: unknown } | undefined;
      if (observed !== undefined) {
        try {
          observedWorld = await observedWorldOf(observed, pg, options);
        } catch (error) {
          worldError = { error };
        }
      }
      if (worldError !== undefined) {
        await recording.finish({
          status: 'incomplete',
          exitCode: failed ? 1 : 0,
          manifest,
          ...(response === undefined ? {} : { response }),
        });
        throw worldError.error;
      }
      const finished = await recording.finish({
        status: failure === undefined ? 'complete' : 'incomplete',
        exitCode: failed ? 1 : 0,
        manifest,
        ...(response === undefined ? {} : { response }),
        ...(observedWorld === undefined ? {} : { world: observedWorld }),
      });
      where = finished.dir;
      steps = finished.steps;
      if (options.store !== undefined) {
        // Not shipped: the recording stays in its folder, for `tapedeck push` later.
        const local = where;
        where = await shipRecording(local, options.store).catch((error: unknown) => {
          if (options.onRecorderError === undefined) throw error;
          options.onRecorderError(error);
          return local;
        });
      }
    } else await recording.discard();
  } catch (error) {
    if (options.onRecorderError === undefined) throw failure?.error ?? error;
    options.onRecorderError(error);
    where = '';
  }
  if (where !== '' && options.onKept !== undefined) {
    try {
      options.onKept({ id: recording.id, dir: where, steps });
    } catch (error) {
      if (options.onRecorderError === undefined) throw failure?.error ?? error;
      options.onRecorderError(error);
    }
  }
  if (failure !== undefined) throw failure.error;
  return { dir: where, id: where === '' ? '' : recording.id, result, recorded: where !== '', steps };
}

/** The database world the run observed (pre and post snapshots) and the manifest's account of it. */
async function observedWorldOf(
  observed: ObservedRun,
  pg: PgObserver,
  options: RecordOptions,
): Promise<ObservedWorldRecord | undefined> {
  const world = await pg.finish(observed);
  const unobserved = Object.fromEntries(observed.unobserved);
  if (world === undefined) return undefined;
  return {
    facts: world.facts,
    db: {
      url: world.url,
      schemas: world.schemas,
      env: options.dbEnv ?? 'DATABASE_URL',
      mode: 'observed',
      ...(Object.keys(unobserved).length > 0 ? { unobserved } : {}),
    },
  };
}

/**
 * A run's recording as record() uses it, wherever its session and writer live: in the recording
 * thread (session-thread.ts; runs that share the process), or in this thread (a run with the
 * process to itself, whose world capture holds the agent at step barriers, or one given
 * functions the thread cannot take: a redactor object, onEvent).
 */
interface RunRecording {
  id: string;
  dir: string;
  agent: Manifest['agent'];
  syncWorld: boolean;
  send(message: unknown): void;
  sync(message: Record<string, unknown>): Promise<unknown>;
  finish(outcome: FinishOutcome): Promise<{ dir: string; steps: number }>;
  discard(): Promise<void>;
}

function inThisThread(recording: ActiveRecording, agent: Manifest['agent']): RunRecording {
  const { session, writer } = recording;
  return {
    id: writer.id,
    dir: writer.dir,
    agent,
    syncWorld: recording.syncWorld,
    send: (message) => session.accept(message),
    sync: (message) => new Promise((resolve) => session.accept(message, resolve)),
    finish: async (outcome) => ({ dir: await recording.finish(outcome), steps: session.steps }),
    discard: () => recording.discard(),
  };
}

/** Installs (or joins) the capture layer and opens the run's recording, with run.started written. */
async function openRun(
  options: RecordOptions,
): Promise<{ capture: SharedCapture; pg: PgObserver; recording: RunRecording }> {
  const world = options.world ?? 'observed';
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const exclusive = options.fsRoot !== undefined || (options.dbUrl !== undefined && world === 'snapshot');
  const { capture, pg } = await acquire(exclusive, options.fsRoot && path.resolve(cwd, options.fsRoot), cwd);
  const command = options.command ?? [process.argv0, ...process.argv.slice(1)];
  try {
    let sdkVersions = sdkVersionsByCwd.get(cwd);
    if (sdkVersions === undefined) {
      sdkVersions = findSdkVersions([cwd]);
      sdkVersionsByCwd.set(cwd, sdkVersions);
    }
    const agent: Manifest['agent'] = {
      command,
      cwd,
      inProcess: true,
      ...(options.command ? {} : process.argv[1] ? { entry: process.argv[1] } : {}),
      ...(options.input === undefined ? {} : { env: { [RUN_INPUT_ENV]: JSON.stringify(options.input) } }),
    };
    const name = options.name ?? 'in-process';
    const started = { command, cwd, pid: process.pid };
    // The server's time zone and locale are the agent's: a replay gives them back.
    const runtime = { sdkVersions, ...regionOf() };
    if (!exclusive && options.redactor === undefined && options.onEvent === undefined && recordingThreadWanted()) {
      // The folder is chosen (and checked) here, so that its id is known at once and a bad
      // folder is this call's error; the recording thread makes it.
      const out = path.resolve(cwd, options.out ?? path.join(options.folder ?? 'recordings', newRecordingId(name)));
      prepareOutputDir(out);
      // What the thread needs, as data: sampling, the input and the callbacks stay here.
      const { onRecorderError: _e, input: _i, sample: _s, ...rest } = options;
      const sendable = Object.fromEntries(Object.entries(rest).filter(([, v]) => typeof v !== 'function'));
      // A run given onRecorderError (a server's: recordHandler) goes on whatever the recorder
      // does, so it does not wait for the thread to open its recording; one without must fail
      // before it starts when its recording cannot be opened.
      const threaded = await openThreadRecording({ ...sendable, cwd, name, world, out }, agent, runtime, started, {
        wait: options.onRecorderError === undefined,
      });
      return { capture, pg, recording: { ...threaded, agent, syncWorld: false } };
    }
    const redactor = sharedRedactor(options);
    const recording = await openRecording(
      { ...options, cwd, name, world, ...(redactor ? { redactor } : {}) },
      agent,
      runtime,
    );
    recording.writer.append({ type: 'run.started', stepId: 0, payload: started });
    return { capture, pg, recording: inThisThread(recording, agent) };
  } catch (error) {
    release();
    throw error;
  }
}

/** TAPEDECK_RECORD_THREAD=0 keeps every in-process recording in the request thread (to compare, or debug). */
function recordingThreadWanted(): boolean {
  return process.env.TAPEDECK_RECORD_THREAD !== '0';
}

/**
 * Tells the replay preload (when a replay runs this process) that the recorded run starts here:
 * its clock and random values are handed out from now on, what the command drew before was its own.
 */
function markRunStart(): void {
  const hook = (globalThis as Record<symbol, unknown>)[RECORDER_KEY] as { runStarts?: () => void } | undefined;
  hook?.runStarts?.();
}

/**
 * The `input` a run was recorded with, in the process `tapedeck replay` runs for it: a replay
 * entry point calls the same agent function with it. It also marks where the run starts in the
 * command: the run's recorded clock and random values are handed out from here, so call it right
 * before the agent function (what the command draws before, loading its modules, is its own).
 *
 * @example
 * // replay-session.mjs — record({ input: ticket, command: ['node', 'replay-session.mjs'] }, () => agent(ticket))
 * import { runInput } from 'tapedeck';
 * await agent(runInput());
 */
export function runInput<T = unknown>(): T {
  markRunStart();
  const raw = process.env[RUN_INPUT_ENV];
  if (raw === undefined) {
    throw new TapedeckError(
      'NO_RUN_INPUT',
      `${RUN_INPUT_ENV} is not set: runInput() reads the input of a recorded run when \`tapedeck replay\` runs its command.`,
    );
  }
  try {
    return JSON.parse(raw) as T;
  } catch (cause) {
    throw new TapedeckError('NO_RUN_INPUT', `${RUN_INPUT_ENV} is not JSON: ${whyNotJson(cause)}`, { cause });
  }
}
