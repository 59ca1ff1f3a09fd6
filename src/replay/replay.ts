// One replay, start to end: check the options and read the recording (preflight.ts), set up the
// sandbox and the agent process (setup.ts), let the session answer the agent's calls (session.ts,
// answer.ts), then close the recording, compare its world with the recorded one and report
// (finish.ts). This file is the home of the order in which a replay's parts start and are wired.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { ReplayQuestion } from '../../sandbox/index.js';
import { withKeptEnv } from '../../sandbox/kept-env.js';
import { chooseIsolation, describeIsolation, StaleIsolationError } from '../../sandbox/os/detect.js';
import { sameHost } from '../../sandbox/preload/network-guard.mjs';
import { unhookedPython } from '../../sandbox/preload/shared-python.mjs';
import {
  blobRelativePath,
  createRecordingWriter,
  createRedactor,
  cutAt,
  isInline,
  type RecordingWriter,
  regionOf,
  TapedeckError,
} from '../recording/index.js';
import type { Answerer } from './answer.js';
import { chainSettings, createAnswerChain } from './chain/index.js';
import { finish, orderWarnings } from './finish.js';
import { listenIpc } from './ipc.js';
import type { ReplaySandbox } from './isolate.js';
import { liveModelAnswerer } from './live.js';
import { bodyBytesOf, CallIndex, indexCalls } from './match.js';
import {
  checkOptions,
  checkStepRange,
  loadManifest,
  loadRecording,
  relocator,
  replayId,
  withConfigPolicy,
} from './preflight.js';
import { overrideWarnings, promptOverride } from './prompt.js';
import { redactionKeyDrift, runtimeDrift } from './runtime-drift.js';
import { ReplaySession } from './session.js';
import {
  type AgentHandle,
  agentEnv,
  explicitEnv,
  lackingDatabaseWarning,
  makeTempDir,
  openDatabase,
  readExitDumps,
  recordedEnvWarnings,
  replayRegion,
  runAgent,
  schemaSqlFiles,
  seededWorld,
  seedFileIn,
  Teardown,
  unbuiltDatabaseWarning,
  writePreloadConfig,
} from './setup.js';
import { recordingTrust, untrustedCommandError } from './trust.js';
import type { ReplayOptions, ReplayResult } from './types.js';
import { limitsOf, ReplayGuard } from './watchdog.js';

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
  // The user's tool rules, read before anything starts: a bad file is a one-line error at once.
  const rules =
    typeof options.rules === 'string'
      ? (await import('../record/rules-file.js')).loadToolRules(options.rules)
      : (options.rules ?? []);
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
  // Reading the events holds this thread, so the replay waits until the launcher is spawned
  // (the CA made, ~40 ms here): bubblewrap and its init (a Node process, ~50 ms) then start on
  // another core while the events are read, instead of after. Whatever happens next, it is closed.
  let launched = () => {};
  const launch = new Promise<void>((resolve) => {
    launched = resolve;
  });
  const starting =
    isolation.level !== 'none' &&
    command.length > 0 &&
    (trusted || options.command) &&
    (!options.requireIsolation || isolation.level === 'bwrap')
      ? // The OS sandbox's code (bubblewrap, the proxy, the doors) loads only for a replay that uses it.
        import('./isolate.js').then(({ startReplaySandbox }) =>
          startReplaySandbox({
            isolation,
            manifest,
            tmp,
            cwd,
            command,
            // What finds programs is never taken from the recording (loadsCode): ours, then --env.
            env: { ...process.env, ...options.env },
            onLaunch: launched,
          }),
        )
      : undefined;
  if (starting) {
    starting.then(launched, launched);
    teardown.add(async () => {
      const started = await starting.catch(() => undefined);
      await started?.box.close();
    });
  }
  if (starting) await launch;
  const recording = await loadRecording(options.recording, manifest);
  checkStepRange(options, recording);
  // A recording its recorder never closed (killed) knows the run up to its last step only: an exact
  // replay stops there, as --until would (the agent's next call past it is never asked), and its end
  // state is compared with the world the recording knows there (finish).
  const cut = options.mode === 'exact' && options.until === undefined ? cutAt(recording) : undefined;
  const given = options;
  if (cut !== undefined) options = { ...options, until: cut };
  const { http: calls, inProcess: toolCalls } = indexCalls(recording);
  // Fail on missing blobs now, before any sandbox is used (inline bodies need no reading).
  for (const c of calls) {
    const body = c.exchange?.response?.body;
    if (body?.blob !== undefined && body.text === undefined && body.base64 === undefined) bodyBytesOf(recording, body);
  }
  if (command.length === 0)
    throw new TapedeckError('NO_COMMAND', 'The recording has no agent command; give one after --.');
  if (!trusted && !options.command) throw untrustedCommandError(options.recording, trust, command, cwd);
  const redactor = createRedactor();
  const warnings: string[] = [...recording.warnings];
  const startEnv = explicitEnv(recording, options, relocate, trusted);
  // The agent's env's secrets, known by value as the recorder knew its own (a prompt quoting one
  // was recorded with its placeholder): the live requests then redact to the same text.
  redactor.learnEnv(startEnv);
  warnings.push(...recordedEnvWarnings(recording, options, trusted, startEnv));
  const region = replayRegion(recording, options, startEnv);
  warnings.push(...region.warnings);
  const drift = runtimeDrift(recording, manifest.agent.entry && relocate(manifest.agent.entry), cwd);
  warnings.push(...drift.warnings);
  // With the user's own schema SQL, what it built is known once the sandbox is open.
  const schemaSql = schemaSqlFiles(options);
  const ownSchemaSql = schemaSql.length > 0;
  const unbuilt = ownSchemaSql ? undefined : unbuiltDatabaseWarning(recording);
  if (unbuilt !== undefined) warnings.push(unbuilt);
  const keyDrift = redactionKeyDrift(redactor.keyId, manifest.redaction.keyId);
  if (keyDrift !== undefined) warnings.push(keyDrift);
  const { override, promptForEnv, recorded: recordedPrompt } = promptOverride(options, calls);
  warnings.push(...overrideWarnings(override, recordedPrompt));
  const fsRoot = manifest.world?.fsRoot;
  if (options.requireIsolation && isolation.level !== 'bwrap') {
    throw new TapedeckError(
      'NO_ISOLATION',
      `--require-isolation: this machine has no OS sandbox (${isolation.notes.join('; ')}); install bubblewrap and allow user namespaces, or drop --require-isolation.`,
    );
  }
  // A named snapshot to seed the database from, read and laid under the run's rows before anything starts.
  const seeded = await seededWorld(recording, options);
  if (ownSchemaSql && recording.pre.db === undefined && seeded === undefined)
    warnings.push(
      '--schema-sql: this recording has no database (recorded without --db, or in-process with no world): the SQL is not run',
    );
  options.onIsolation?.(describeIsolation(isolation));
  // What is known before the agent runs (an env left out, a different redaction key) is said now,
  // before the agent's own output; every warning is in the result too.
  for (const w of warnings) options.onWarning?.(w);

  const database = await openDatabase(recording, options, teardown, seeded, schemaSql);
  const { db, tracker } = database;
  const lacking = lackingDatabaseWarning(db);
  if (lacking !== undefined) {
    warnings.push(lacking);
    options.onWarning?.(lacking);
  }
  const stillUnbuilt = ownSchemaSql ? unbuiltDatabaseWarning(recording, database.built) : undefined;
  if (stillUnbuilt !== undefined) {
    warnings.push(stillUnbuilt);
    options.onWarning?.(stillUnbuilt);
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
    // The one that knows the agent's env's secrets: the replay's own recording holds none either.
    redactor,
    ...(manifest.prompt ? { prompt: override ? { source: 'replay override' } : manifest.prompt } : {}),
    ...(manifest.world ? { world: manifest.world } : {}),
    ...(manifest.prices ? { prices: manifest.prices } : {}),
    replayOf: manifest.id,
    replay: {
      mode: options.mode,
      ...(options.forkAt !== undefined ? { forkAt: options.forkAt } : {}),
      ...(given.until !== undefined ? { until: given.until } : {}),
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
    rules,
  });
  // The recorded WebSocket conversations are answered by a server of the replay's own
  // (src/replay/websocket.ts, loaded only for a recording that has one): the agent's connections
  // to their addresses are routed to it.
  const websocket = recording.events.some((e) => e.type === 'websocket.exchange')
    ? await import('./websocket.js')
    : undefined;
  const conversations = websocket?.recordedConversations(recording) ?? [];
  const live0 = session;
  // until K at a WebSocket turn: the agent asked nothing the replayer can answer `stop`, so it is ended.
  let agent: AgentHandle | undefined;
  let stopAgent = () => agent?.stop();
  const timing = options.timing ?? { kind: 'none' };
  const tapes =
    conversations.length === 0 || !websocket
      ? undefined
      : await websocket.startWebSocketTapes(conversations, {
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
  const webSocketRoutes =
    tapes && websocket
      ? websocket.webSocketTargets(conversations).map(({ tls: _tls, ...from }) => ({
          from,
          to: tapes.tlsAddresses.get(`${from.host}:${from.port}`) ?? tapes.address,
        }))
      : [];
  // The OS sandbox (or the network namespace of the fallback): the agent's tree runs inside,
  // its doors (IPC, proxy, database) served from here.
  let box: ReplaySandbox | undefined;
  /** In the OS sandbox, the interpreters whose own sitecustomize is covered (-I/-E hooked there). */
  let pythonsCovered: string[] | undefined;
  // Started above whenever the isolation is not 'none' (what would have stopped it has thrown since).
  if (starting) {
    const started = await starting;
    if (started.worldNote) warnings.push(started.worldNote);
    pythonsCovered = started.pythonsCovered;
    const { openReplaySandbox } = await import('./isolate.js');
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
      // A process's own env (a variable its parent set for it alone): its secrets are known, as recording.
      if (notice.t === 'hello' && notice.env) redactor.learnEnv(notice.env);
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
    ...(chainSession.socketRoutes ? { socketRoutes: chainSession.socketRoutes } : {}),
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
  // The agent's own program may be a Python run without the hook (python -S agent.py): said.
  const unhookedAgent = unhookedPython(command, { covered: pythonsCovered, PATH: env.PATH, cwd });
  if (unhookedAgent) session.unhooked.see(unhookedAgent);

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
  const probes = sandbox?.probesNote();
  if (probes !== undefined) warnings.push(probes);
  const result = await finish(session, { recording, options, out, exit, database, stopped, cut });
  await chainSession.end();
  warnings.push(...chainSession.warnings, ...session.answerFailures, ...session.unhooked.warnings('served'));
  warnings.push(...orderWarnings(dumps, { options, recording, result, drew: session.drew }));
  const sideChannels = session.divergences
    .filter((d) => d.kind === 'side-channel')
    .map((d) => d.actual as { target: string; how: string; process?: string });
  return {
    ...result,
    isolation: { level: isolation.level, summary: describeIsolation(isolation), notes: isolation.notes },
    ...(sideChannels.length > 0 ? { sideChannels } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
    ...(drift.versionChanges.length > 0 ? { versionChanges: drift.versionChanges } : {}),
    ...(session.answerFailures.length > 0 ? { answerFailures: session.answerFailures } : {}),
    ...(stdio === 'pipe' ? { output } : {}),
  };
}
