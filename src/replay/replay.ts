// One replay, start to end: check the options, read the recording, set up the sandbox and the
// agent process (setup.ts), let the session answer the agent's calls (session.ts, answer.ts),
// then close the recording, compare its world with the recorded one (src/diff) and report.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ReplayQuestion } from '../../sandbox/index.js';
import { withKeptEnv } from '../../sandbox/kept-env.js';
import { chooseIsolation, describeIsolation, StaleIsolationError } from '../../sandbox/os/detect.js';
import { sameHost } from '../../sandbox/preload/network-guard.mjs';
import { compareWorlds } from '../diff/index.js';
import { systemPromptOf } from '../providers/index.js';
import {
  blobRelativePath,
  createRecordingWriter,
  createRedactor,
  type DbSnapshot,
  describeStop,
  type FsSnapshot,
  isInline,
  type Manifest,
  type Recording,
  type RecordingWriter,
  readManifest,
  readRecording,
  regionOf,
  type Stopped,
  TapedeckError,
} from '../recording/index.js';
import type { Answerer } from './answer.js';
import { chainSettings, createAnswerChain } from './chain/index.js';
import { concurrentDatabaseWork } from './drawn.js';
import { listenIpc } from './ipc.js';
import { openReplaySandbox, type ReplaySandbox, startReplaySandbox } from './isolate.js';
import { liveModelAnswerer } from './live.js';
import { bodyBytesOf, CallIndex, indexCalls, type RecordedCall } from './match.js';
import { parseJson } from './normalize.js';
import { applyOverride, type PromptOverride, patchFits, promptTarget } from './prompt.js';
import { ReplaySession } from './session.js';
import {
  type AgentExit,
  type AgentHandle,
  agentEnv,
  dbOrderOf,
  explicitEnv,
  ignoredRecordedEnv,
  lackingDatabaseWarning,
  makeTempDir,
  missingRecordedEnv,
  openDatabase,
  type ReplayDatabase,
  readExitDumps,
  replayRegion,
  runAgent,
  runtimeDrift,
  seededWorld,
  seedFileIn,
  Teardown,
  unbuiltDatabaseWarning,
  untrustedRecordedEnv,
  writePreloadConfig,
} from './setup.js';
import { recordingTrust, untrustedCommandError } from './trust.js';
import type { ReplayOptions, ReplayResult } from './types.js';
import { limitsOf, ReplayGuard } from './watchdog.js';
import { recordedConversations, startWebSocketTapes, webSocketTargets } from './websocket.js';
import { writeWorld } from './world.js';

/**
 * Replays a recording: the agent runs again in the sandbox and every call it makes is answered
 * from the recording (exact) or, for model calls that differ, live (counterfactual).
 * @example const r = await replay({ recording: 'recordings/examples/openai-baseline', mode: 'exact' });
 */
export async function replay(given: ReplayOptions): Promise<ReplayResult> {
  try {
    return await replayOnce(given);
  } catch (error) {
    // The OS sandbox did not start with the isolation an earlier process found (kept in the state
    // folder): the machine changed since, so the replay starts over with a fresh probe, which
    // gives the sandbox that works now (or none, said as the first line), never a silent downgrade.
    // (A sandbox service's box too: its error carries the sandbox's as its cause.)
    if (!staleIsolation(error)) throw error;
    given.onWarning?.(`${(error as Error).message}; probing the machine again and starting over`);
    return replayOnce(given);
  }
}

/** The error, or one of its causes, is a sandbox that did not start with a kept probe's isolation. */
function staleIsolation(error: unknown, depth = 0): boolean {
  if (error instanceof StaleIsolationError) return true;
  return depth < 8 && error instanceof Error && error.cause !== undefined && staleIsolation(error.cause, depth + 1);
}

async function replayOnce(given: ReplayOptions): Promise<ReplayResult> {
  const options = withConfigPolicy(given);
  checkOptions(options);
  const teardown = new Teardown();
  let writer: RecordingWriter | undefined;
  let agent: AgentHandle | undefined;
  try {
    return await replayIn(options, teardown, {
      opened: (w) => {
        writer = w;
      },
      spawned: (handle) => {
        agent = handle;
      },
    });
  } catch (error) {
    agent?.stop();
    if (writer) {
      await writer.close('failed').catch(() => undefined);
      await rm(writer.dir, { recursive: true, force: true }).catch(() => undefined);
    }
    throw error;
  } finally {
    await teardown.close();
  }
}

/** The replay itself; replayOnce closes what it opened (teardown) and removes a failed replay's recording. */
async function replayIn(
  options: ReplayOptions,
  teardown: Teardown,
  on: { opened: (writer: RecordingWriter) => void; spawned: (agent: AgentHandle) => void },
): Promise<ReplayResult> {
  const manifest = await loadManifest(options.recording);
  const cwd = options.cwd ?? (existsSync(manifest.agent.cwd) ? manifest.agent.cwd : process.cwd());
  const relocate = relocator(manifest.agent.cwd, cwd);
  const command = options.command ?? manifest.agent.command.map(relocate);
  // A recording is data: its command runs only when this machine sealed it or the caller trusts it.
  const trust = recordingTrust(manifest, options);
  const trusted = trust.trusted;
  const isolation = chooseIsolation(options.isolation ?? 'auto');
  const tmp = await makeTempDir(teardown);
  // The OS sandbox needs only the manifest: it starts (the run's CA, bubblewrap and its init)
  // while the recording's events are read and indexed, when nothing known yet stops the replay.
  // Whatever happens next, it is closed.
  const starting =
    isolation.level !== 'none' &&
    command.length > 0 &&
    (trusted || options.command) &&
    (!options.requireIsolation || isolation.level === 'bwrap')
      ? startReplaySandbox({ isolation, manifest, tmp, cwd, command })
      : undefined;
  if (starting) {
    starting.catch(() => undefined);
    teardown.add(async () => {
      const started = await starting.catch(() => undefined);
      await started?.box.close();
    });
  }
  const recording = await loadRecording(options.recording, manifest);
  checkStepRange(options, recording);
  const { http: calls, inProcess: toolCalls } = indexCalls(recording);
  // Fail on missing blobs now, before any sandbox is used.
  for (const c of calls) bodyBytesOf(recording, c.exchange?.response?.body);
  if (command.length === 0)
    throw new TapedeckError('NO_COMMAND', 'The recording has no agent command; give one after --.');
  if (!trusted && !options.command) throw untrustedCommandError(options.recording, trust, command, cwd);
  const redactor = createRedactor();
  const warnings: string[] = [...recording.warnings];
  const notApplied = trusted ? [] : untrustedRecordedEnv(recording, options);
  if (notApplied.length > 0) {
    const names =
      notApplied.length > 8
        ? `${notApplied.slice(0, 8).join(', ')} and ${notApplied.length - 8} more`
        : notApplied.join(', ');
    warnings.push(
      `the recording's env (${names}) not applied: it was not made on this machine; pass --trust-recording to apply it, or give --env NAME=VALUE`,
    );
  }
  const ignored = ignoredRecordedEnv(recording);
  if (ignored.length > 0) {
    warnings.push(
      `the recording's ${ignored.join(', ')} not used: variables that load code or choose programs are never taken from a recording (give them with --env)`,
    );
  }
  const startEnv = explicitEnv(recording, options, relocate, trusted);
  const missing = missingRecordedEnv(recording, startEnv);
  if (missing.length > 0) {
    const shown =
      missing.length > 8 ? `${missing.slice(0, 8).join(', ')} and ${missing.length - 8} more` : missing.join(', ');
    warnings.push(
      `the agent was recorded with ${shown} set, not set now: export ${missing.length > 1 ? 'them' : 'it'} or give --env NAME=VALUE (without ${missing.length > 1 ? 'them' : 'it'} the agent may take another path)`,
    );
  }
  const region = replayRegion(recording, options, startEnv);
  warnings.push(...region.warnings);
  const drift = runtimeDrift(recording, manifest.agent.entry && relocate(manifest.agent.entry), cwd);
  warnings.push(...drift.warnings);
  const unbuilt = unbuiltDatabaseWarning(recording);
  if (unbuilt !== undefined) warnings.push(unbuilt);
  if (redactor.keyId !== manifest.redaction.keyId) {
    warnings.push(
      `the redaction key (${redactor.keyId}) is not the one the recording was made with (${manifest.redaction.keyId}): requests carrying secrets will not match; set TAPEDECK_REDACTION_KEY to the recording's key`,
    );
  }
  const { override, promptForEnv, recorded: recordedPrompt } = promptOverride(options, calls);
  if (
    override?.kind === 'replace' &&
    recordedPrompt !== undefined &&
    override.text !== recordedPrompt &&
    override.text.trim() === recordedPrompt.trim()
  ) {
    warnings.push(
      "the new system prompt is the recorded one but for whitespace at its ends (a file's trailing newline?): model requests carry it as given, so none matches a recorded one and every model call goes live",
    );
  }
  if (override?.kind === 'replace' && recordedPrompt === undefined) {
    warnings.push(
      'no recorded model call has a system prompt: the new one is given to the agent (SYSTEM_PROMPT) but added to no model request (a prompt override replaces a prompt, it never adds one)',
    );
  }
  const fsRoot = manifest.world?.fsRoot;
  if (options.requireIsolation && isolation.level !== 'bwrap') {
    throw new TapedeckError(
      'NO_ISOLATION',
      `--require-isolation: this machine has no OS sandbox (${isolation.notes.join('; ')}); install bubblewrap and allow user namespaces, or drop --require-isolation.`,
    );
  }
  // A named snapshot to seed the database from, read and laid under the run's rows before anything starts.
  const seeded = await seededWorld(recording, options);
  options.onIsolation?.(describeIsolation(isolation));
  // What is known before the agent runs (an env left out, a different redaction key) is said now,
  // before the agent's own output; every warning is in the result too.
  for (const w of warnings) options.onWarning?.(w);

  const database = await openDatabase(recording, options, teardown, seeded);
  const { db, tracker } = database;
  const lacking = lackingDatabaseWarning(db);
  if (lacking !== undefined) {
    warnings.push(lacking);
    options.onWarning?.(lacking);
  }
  const out = path.resolve(options.out ?? path.resolve('recordings', replayId(manifest.id)));
  const w = await createRecordingWriter(out, {
    id: path.basename(out),
    name: `${manifest.name} (replay, ${options.mode})`,
    agent: { command, cwd, ...(manifest.agent.entry ? { entry: manifest.agent.entry } : {}) },
    // The SDKs the agent resolves here, and the region it runs in: the recorded one, --env's, or
    // (neither) this machine's.
    runtime: { sdkVersions: drift.sdkVersions, ...regionOf({ ...startEnv, ...region.env }) },
    // This machine ran it (a command the user gave, or one they trusted): it may be replayed here.
    seal: true,
    ...(manifest.prompt ? { prompt: override ? { source: 'replay override' } : manifest.prompt } : {}),
    ...(manifest.world ? { world: manifest.world } : {}),
    ...(manifest.prices ? { prices: manifest.prices } : {}),
    replayOf: manifest.id,
    replay: {
      mode: options.mode,
      ...(options.forkAt !== undefined ? { forkAt: options.forkAt } : {}),
      ...(options.until !== undefined ? { until: options.until } : {}),
      overrides: {
        ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
        ...(options.promptPatch !== undefined ? { promptPatch: options.promptPatch } : {}),
        ...(options.modelEndpoint ? { modelEndpoint: options.modelEndpoint } : {}),
        ...(options.command ? { command: options.command } : {}),
        timing: options.timing ?? { kind: 'none' },
        onMiss: options.onMiss ?? (options.mode === 'exact' ? 'fail' : 'error-response'),
        ...(db ? { dbSandbox: db.kind } : {}),
        ...(seeded ? { seedSnapshot: seeded.snapshot } : {}),
      },
    },
  });
  on.opened(w);
  // The pre-world's blobs: read (and so verified) from the recording, linked into the replay's.
  // Inline contents travel in the snapshot itself.
  for (const entry of Object.values(recording.pre.fs?.files ?? {})) {
    if (isInline(entry)) continue;
    w.putBlob(recording.readBlob(entry.sha256), path.join(recording.dir, blobRelativePath(entry.sha256)));
  }
  // A sandbox seeded from a named snapshot starts from that world: the replay's pre-world says so.
  w.writeSnapshot('pre', seeded ? { ...recording.pre, db: seeded.pre } : recording.pre);

  // The answer chain (sandbox services, mocks, simulator) from the project config, or one kept
  // across replays by the caller (bisect-prompt); it also routes the agent's database by address.
  const chain = options.chain ?? createAnswerChain(options.config ?? {});
  if (!options.chain) teardown.add(() => chain.close());
  let session: ReplaySession | undefined;
  // The env the agent starts from is what `${env.NAME}` in the project config reads.
  const chainSession = await chain.open({
    recording,
    ...(db ? { db } : {}),
    ...(fsRoot ? { fsRoot, seedFile: seedFileIn(tmp) } : {}),
    env: startEnv,
    step: () => (session?.lastStep ?? 0) + 1,
    isolation,
  });
  teardown.add(() => chainSession.end());
  // The replay says what could answer beside the recording, and how its agent was held in.
  if (w.manifest.replay)
    w.setManifest({
      replay: { ...w.manifest.replay, isolation: isolation.level, chain: chainSettings(chain, startEnv) },
    });
  const answerers: Answerer[] = [...(options.answerers ?? []), ...chainSession.answerers];
  if (options.mode === 'counterfactual') answerers.push(liveModelAnswerer(options.modelEndpoint));
  session = new ReplaySession({
    recording,
    index: new CallIndex(calls),
    tools: new CallIndex(toolCalls),
    writer: w,
    redactor,
    options,
    fsRoot,
    db,
    tracker,
    override,
    answerers,
  });
  // The recorded WebSocket conversations are answered by a server of the replay's own
  // (src/replay/websocket.ts): the agent's connections to their addresses are routed to it.
  const conversations = recordedConversations(recording);
  const live0 = session;
  // until K at a WebSocket turn: the agent asked nothing the replayer can answer `stop`, so it is ended.
  let agent: AgentHandle | undefined;
  let stopAgent = () => agent?.stop();
  const timing = options.timing ?? { kind: 'none' };
  const tapes =
    conversations.length === 0
      ? undefined
      : await startWebSocketTapes(conversations, {
          stored: (data) => w.body(typeof data === 'string' ? data : Buffer.from(data)),
          readBlob: (sha256) => recording.readBlob(sha256),
          turn: (turn, recorded, divergence) => live0.webSocketTurn(turn, recorded, divergence),
          reached: (step) => live0.reachedStep(step),
          stops: (step) => {
            if (live0.stopped) return true;
            if (!live0.shouldStop(step)) return false;
            live0.stop(step);
            stopAgent();
            return true;
          },
          pace: timing.kind === 'none' ? 0 : timing.kind === 'scaled' ? timing.factor : 1,
        });
  if (tapes) teardown.add(() => tapes.close());
  const webSocketRoutes = tapes
    ? webSocketTargets(conversations).map(({ tls: _tls, ...from }) => ({
        from,
        to: tapes.tlsAddresses.get(`${from.host}:${from.port}`) ?? tapes.address,
      }))
    : [];
  // The OS sandbox (or the network namespace of the fallback): the agent's tree runs inside,
  // its doors (IPC, proxy, database) served from here.
  let box: ReplaySandbox | undefined;
  // Started above whenever the isolation is not 'none' (what would have stopped it has thrown since).
  if (starting) {
    const started = await starting;
    if (started.worldNote) warnings.push(started.worldNote);
    box = await openReplaySandbox({
      started,
      recording,
      fsRoot,
      db,
      timing: options.timing ?? { kind: 'none' },
      teardown,
      ...(tapes ? { upgrade: async () => tapes.connect() } : {}),
      urls: calls.flatMap((c) => (c.exchange ? [c.exchange.request.url] : [])),
    });
    warnings.push(...box.notes);
  }
  const sandbox = box;
  if (sandbox) stopAgent = () => sandbox.stopAgent();
  const live = session;
  // The chain's routes (the recorded database's address to its relay) lead out of the sandbox too.
  for (const route of sandbox ? chainSession.routes : []) await sandbox?.expose(route.to.port, route.to);
  // The WebSocket answerer inside: at its own port (the preload's routes lead there), and at a
  // recorded loopback address too, for a client that is not Node (no preload to route it).
  if (sandbox && tapes) {
    for (const to of [tapes.address, ...tapes.tlsAddresses.values()]) await sandbox.expose(to.port, to);
    for (const { from, to } of webSocketRoutes)
      if (sameHost(from.host, '127.0.0.1')) await sandbox.expose(from.port, to).catch(() => undefined);
  }
  // The watchdog: no progress for the idle limit (time spent answering not counted), or the wall
  // limit, stops the agent's whole tree; the replay is then written as far as it got.
  const guard = new ReplayGuard(limitsOf(options), live, options.stopOnSignals === true);
  teardown.add(async () => guard.end());
  const answer = sandbox
    ? async (question: ReplayQuestion) => sandbox.settle(await live.answer(await sandbox.withWorld(question)))
    : (question: ReplayQuestion) => live.answer(question);
  const ask = async (question: ReplayQuestion) => {
    const done = guard.asked(question);
    try {
      return await answer(question);
    } finally {
      done();
    }
  };
  sandbox?.answerWith(ask);
  const socket = sandbox ? sandbox.ipcAddress : path.join(tmp, 'ipc.sock');
  const ipc = await listenIpc(
    sandbox ? sandbox.ipcListener : socket,
    (question) => ask(question),
    // Notices (calls the preload served itself) carry its own reading of the disk, taken at the
    // call: a scan here would see writes made after it.
    (notice) => {
      guard.noticed(notice);
      return live.notice(notice);
    },
  );
  teardown.add(() => ipc.close());
  const timingNone = (options.timing ?? { kind: 'none' }).kind === 'none';
  const configFile = await writePreloadConfig({
    recording,
    calls,
    options,
    tmp,
    socket,
    fsRoot,
    db,
    fast: options.mode === 'exact' && !override && options.until === undefined && timingNone,
    routes: [...chainSession.routes, ...webSocketRoutes.map((r) => ({ ...r, websocket: true as const }))],
    ...(tapes?.caPem ? { webSocketCa: tapes.caPem } : {}),
    ...(sandbox?.world ? { fsOnDisk: true } : {}),
    ...(sandbox ? { allow: sandbox.allow } : {}),
    ...(isolation.level === 'bwrap' ? { os: true } : {}),
    ...(sandbox && isolation.level === 'bwrap'
      ? { privateDirs: sandbox.box.privateDirs, hostDirs: sandbox.box.hostDirs }
      : {}),
  });
  const baseEnv = await agentEnv({
    recording,
    options,
    configFile,
    db,
    relocate,
    trusted,
    region: region.env,
    ...(promptForEnv !== undefined
      ? { prompt: { text: promptForEnv, file: path.join(tmp, 'system-prompt.txt') } }
      : {}),
  });
  // Processes the agent starts with an env of their own keep the preload's config and the sandbox's proxy.
  const env = withKeptEnv(baseEnv, sandbox ? sandbox.env(baseEnv) : baseEnv, ['TAPEDECK_REPLAY_CONFIG']);

  w.append({ type: 'run.started', stepId: 0, payload: { command, cwd } });
  const stdio = options.stdio ?? 'inherit';
  const output = { stdout: '', stderr: '' };
  const runOptions = { cwd, env, stdio, detached: options.stopOnSignals === true };
  const watch = guard.watch((handle) => {
    agent = handle;
    on.spawned(handle);
  });
  const exit = sandbox
    ? await sandbox.run(command, runOptions, output, watch)
    : await runAgent(command, runOptions, output, watch);
  const stopped = await guard.ended();
  // The agent's last messages may still be in the socket when it exits: read them first, then
  // let answers still in flight settle and take what the agent wrote last.
  await ipc.drained(2000);
  const dumps = await readExitDumps(tmp);
  for (const notice of dumps.pending) session.notice(notice);
  await session.answer({ kind: 'noop' }).catch(() => undefined);
  await session.collect([...dumps.fs, ...(sandbox?.world?.takeAll() ?? [])]);
  for (const batch of dumps.nd) await session.collect([], batch);
  // Ways out refused below the process or at the proxy: divergences, never a clean replay.
  for (const channel of sandbox?.sideChannels() ?? []) session.sideChannel(channel);
  const result = await finish(session, { recording, options, out, exit, database, stopped });
  await chainSession.end();
  warnings.push(...chainSession.warnings, ...session.answerFailures);
  // The agent no longer draws before these answers what it drew when recorded (see docs/replay.md
  // "Values and answers in the recorded order"): each waited out the bound.
  if (dumps.unheld > 0)
    warnings.push(
      `${dumps.unheld} recorded answer${dumps.unheld === 1 ? '' : 's'} went to the agent at the bound (100 ms to 2 s) before its process had drawn the clock and random values it had drawn when recorded: the agent draws them differently now`,
    );
  // Tasks waiting on the database resumed in another order than recorded (docs/replay.md
  // "Database replies in the recorded order"): the values they drew may be each other's.
  if (dumps.dbLate > 0)
    warnings.push(
      `${dumps.dbLate} database repl${dumps.dbLate === 1 ? 'y' : 'ies'} went to the agent as ${dumps.dbLate === 1 ? 'it' : 'they'} came, not in the recorded order (each waits 2 s at most): the agent queries differently now, or its concurrent transactions met in another order${options.dbSandbox === 'template' || options.dbSandbox === 'testcontainers' ? '' : ' (the embedded PGlite sandbox runs one transaction at a time; --db <url> --db-sandbox template runs them at once, as recorded)'}`,
    );
  // Tasks that read the database at once may have taken each other's values (docs/replay.md).
  if (!dbOrderOf(options) && result.worldMatches === false && concurrentDatabaseWork(recording.events))
    warnings.push(
      "the agent's tasks read the database over several connections at once and drew clock and random values after its replies: a replay's database answers in its own order, so they may have taken each other's recorded values; --db-order hands the replies over in their recorded order",
    );
  const sideChannels = session.divergences
    .filter((d) => d.kind === 'side-channel')
    .map((d) => d.actual as { target: string; how: string; process?: string });
  return {
    ...result,
    isolation: { level: isolation.level, summary: describeIsolation(isolation), notes: isolation.notes },
    ...(sideChannels.length > 0 ? { sideChannels } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(session.answerFailures.length > 0 ? { answerFailures: session.answerFailures } : {}),
    ...(stdio === 'pipe' ? { output } : {}),
  };
}

/** The project config's miss policy where the options leave it unset (the options win). */
function withConfigPolicy(options: ReplayOptions): ReplayOptions {
  const config = options.chain?.config ?? options.config;
  if (!config) return options;
  return {
    ...options,
    ...(options.onMiss === undefined && config.onMiss ? { onMiss: config.onMiss } : {}),
    ...(config.onMissByTool ? { onMissByTool: { ...config.onMissByTool, ...options.onMissByTool } } : {}),
  };
}

/** After the agent exited: the last steps and divergences, the post-world, the result. */
async function finish(
  session: ReplaySession,
  run: {
    recording: Recording;
    options: ReplayOptions;
    out: string;
    exit: AgentExit;
    database: ReplayDatabase;
    /** Why the watchdog or a signal stopped the agent, when one did. */
    stopped: Stopped | undefined;
  },
): Promise<Omit<ReplayResult, 'warnings' | 'output'>> {
  const { recording, options, out, exit, stopped } = run;
  const { db, tracker, seeded } = run.database;
  const w = session.writer;
  const stoppedEarly = session.stopped;
  if (stopped) {
    // Stopped from outside: what it did until then is written; nothing it never reached is
    // copied from the recording or called missing.
    session.flushPending(session.lastStep);
  } else if (options.mode === 'exact' && !stoppedEarly) {
    session.fillGap(Number.POSITIVE_INFINITY);
    session.reportMissingCalls();
  } else if (stoppedEarly && options.until !== undefined) {
    // Stopped after step K: the local steps up to K the agent made since it last asked are written.
    session.fillGap(options.until + 1);
  } else {
    // What the agent wrote after its last call (counterfactual): a step of its own, as recorded.
    session.writeOwnChanges();
    session.flushPending(session.lastStep);
  }
  const post: { fs?: FsSnapshot; db?: DbSnapshot } = {};
  if (session.files.root) post.fs = session.files.snapshot();
  if (tracker) post.db = await tracker.snapshot();
  w.writeSnapshot('post', post);
  let worldDir: string | undefined;
  let worldDb: string | undefined;
  if (stoppedEarly || options.until !== undefined) {
    worldDir = path.join(out, 'world');
    const readBlob = (sha: string) => {
      try {
        return recording.readBlob(sha);
      } catch {
        // Blobs the replay itself stored (files the agent wrote) live in the new recording.
        return readFileSync(path.join(out, blobRelativePath(sha)));
      }
    };
    await writeWorld(worldDir, post.fs ?? { files: {} }, readBlob, post.db);
    // The database of step K stays inspectable: a kept clone on the server, or PGlite's data dir.
    if (db) {
      await tracker?.close();
      const kept = await db.keep();
      if (kept.dataDir) await writeFile(path.join(worldDir, 'pglite-datadir.tar'), kept.dataDir);
      if (kept.url) worldDb = kept.url;
    }
  }
  const failed = !stoppedEarly && exit.code !== 0;
  const status: ReplayResult['status'] = stopped
    ? stopped.reason === 'interrupted'
      ? 'interrupted'
      : 'timed-out'
    : failed
      ? 'failed'
      : 'complete';
  w.append({
    type: 'run.completed',
    stepId: 0,
    payload: {
      status,
      exitCode: stoppedEarly ? null : exit.code,
      ...(exit.signal ? { signal: exit.signal } : {}),
      ...(session.finalOutput !== undefined ? { finalOutput: session.finalOutput } : {}),
    },
  });
  await w.close(status, stopped ? { stopped } : undefined);
  const worldDiff =
    options.mode === 'exact' && !stoppedEarly && !stopped && options.forkAt === undefined
      ? // Seeded from a named snapshot: the recorded end state laid over that snapshot.
        compareWorlds(
          seeded ? { ...recording.post, ...(seeded.post ? { db: seeded.post } : {}) } : recording.post,
          post,
        )
      : undefined;
  const first = session.divergences.reduce<number | undefined>(
    (min, d) => (min === undefined || d.step < min ? d.step : min),
    undefined,
  );
  const saved = session.savedCost;
  return {
    dir: out,
    id: w.id,
    status,
    ...(stopped ? { stopped: { ...stopped, message: describeStop(stopped) } } : {}),
    exitCode: exit.code,
    divergences: session.divergences,
    ...(first !== undefined ? { firstDivergentStep: first } : {}),
    heldBack: session.heldBack,
    served: session.served,
    savedCost: {
      calls: saved.calls,
      usage: saved.usage,
      ...(saved.usd !== undefined && saved.calls > 0 ? { usd: saved.usd } : {}),
    },
    blockedConnections: session.blockedConnections,
    ...(worldDiff
      ? {
          worldMatches: worldDiff.differences.length === 0,
          worldDiff: worldDiff.differences,
          ...(worldDiff.serverClock.length > 0 ? { worldServerClock: worldDiff.serverClock } : {}),
        }
      : {}),
    ...(worldDir ? { worldDir } : {}),
    ...(worldDb ? { worldDb } : {}),
  };
}

function checkOptions(options: ReplayOptions): void {
  if (options.systemPrompt !== undefined && options.promptPatch !== undefined) {
    throw new TapedeckError('BAD_OPTIONS', 'Give either a new system prompt or a prompt patch, not both.');
  }
  for (const [name, v] of [
    ['forkAt', options.forkAt],
    ['until', options.until],
  ] as const) {
    if (v !== undefined && (!Number.isInteger(v) || v < 1)) {
      throw new TapedeckError('BAD_OPTIONS', `${name} must be a step number (1 or more), got ${v}.`);
    }
  }
  if (options.timing?.kind === 'scaled' && !(options.timing.factor >= 0)) {
    throw new TapedeckError('BAD_OPTIONS', 'timing scaled:X needs a factor of 0 or more.');
  }
}

function checkStepRange(options: ReplayOptions, recording: Recording): void {
  const lastStep = recording.events.reduce((max, e) => (e.stepId > max ? e.stepId : max), 0);
  for (const [flag, v] of [
    ['--fork-at', options.forkAt],
    ['--until', options.until],
  ] as const) {
    if (v !== undefined && v > lastStep) {
      throw new TapedeckError(
        'BAD_OPTIONS',
        `${flag} ${v} is past the recording's last step (${lastStep}); give a step from 1 to ${lastStep}.`,
      );
    }
  }
}

/** Reads a recording's manifest for replay, turning every problem into a TapedeckError. */
async function loadManifest(dir: string): Promise<Manifest> {
  if (!existsSync(dir)) throw new TapedeckError('NO_RECORDING', `No recording at ${dir}.`);
  try {
    return await readManifest(dir);
  } catch (error) {
    if (error instanceof TapedeckError) throw error;
    throw new TapedeckError('BAD_RECORDING', `Cannot read the recording at ${dir}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Reads a recording (its manifest already read) for replay, turning every problem into a TapedeckError. */
async function loadRecording(dir: string, manifest: Manifest): Promise<Recording> {
  try {
    return await readRecording(dir, { verifyBlobs: false, manifest });
  } catch (error) {
    if (error instanceof TapedeckError) throw error;
    throw new TapedeckError('BAD_RECORDING', `Cannot read the recording at ${dir}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * The prompt override, and the prompt an agent that reads its own prompt gets (the new one, or the
 * recorded one patched). The override changes one agent's prompt (see PromptTarget): the one whose
 * recorded prompt contains `promptFor`, else, for a patch, the first the patch applies to, else the
 * run's own (the first model call that has one: a call inside a tool may come first, with none).
 */
function promptOverride(
  options: ReplayOptions,
  calls: readonly RecordedCall[],
): { override?: PromptOverride; promptForEnv?: string; recorded?: string } {
  const override: PromptOverride | undefined =
    options.systemPrompt !== undefined
      ? { kind: 'replace', text: options.systemPrompt }
      : options.promptPatch !== undefined
        ? { kind: 'patch', patch: options.promptPatch }
        : undefined;
  if (!override) return {};
  const prompts = calls.map(systemPromptOfCall).filter((system) => system !== undefined);
  const recorded = targetPrompt(override, prompts, options.promptFor);
  if (recorded === undefined && override.kind === 'patch') {
    throw new TapedeckError(
      'PROMPT_PATCH_FAILED',
      'No recorded model call has a system prompt, so there is nothing to patch; give the new prompt with --system-prompt, or replay another recording.',
    );
  }
  const promptForEnv = applyOverride(recorded, override, 'the recorded system prompt');
  if (override.kind === 'patch') override.result = promptForEnv;
  if (recorded !== undefined) override.target = promptTarget(recorded, prompts);
  return { override, promptForEnv, ...(recorded !== undefined ? { recorded } : {}) };
}

/** The recorded prompt an override changes (see promptOverride). */
function targetPrompt(override: PromptOverride, prompts: readonly string[], promptFor?: string): string | undefined {
  if (promptFor !== undefined) {
    const found = prompts.find((p) => p.includes(promptFor));
    if (found !== undefined) return found;
    const agents = [...new Set(prompts)].map((p) => JSON.stringify(p.split('\n')[0]?.slice(0, 60)));
    throw new TapedeckError(
      'PROMPT_TARGET_NOT_FOUND',
      `No recorded system prompt contains ${JSON.stringify(promptFor)}; the recorded prompts begin ${agents.join(', ') || '(none: no model call has one)'}.`,
    );
  }
  if (override.kind === 'patch') {
    const fits = prompts.find((p) => patchFits(p, override.patch));
    if (fits !== undefined) return fits;
  }
  return prompts[0];
}

/** The system prompt of a recorded model call, if it had one. */
function systemPromptOfCall(call: RecordedCall): string | undefined {
  if (call.kind !== 'model') return undefined;
  if (call.model?.system !== undefined) return call.model.system;
  const body = parseJson(call.request.bodyText);
  return systemPromptOf(call.view.api, body.ok ? body.value : {});
}

function replayId(originalId: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').replace('T', '-');
  return `${originalId}.replay-${stamp}-${randomBytes(2).toString('hex')}`;
}

/**
 * A recording made in one checkout and replayed in another (a clone, a CI machine): a recorded
 * path under the recorded cwd that is missing here is taken relative to the replay's cwd, when
 * the file exists there. Anything else is left as recorded.
 */
function relocator(recordedCwd: string, cwd: string): (value: string) => string {
  const from = path.resolve(recordedCwd);
  const to = path.resolve(cwd);
  if (from === to) return (value) => value;
  return (value) => {
    if (!value.startsWith(`${from}${path.sep}`) || existsSync(value)) return value;
    const moved = path.join(to, value.slice(from.length + 1));
    return existsSync(moved) ? moved : value;
  };
}
