// The state of one replay while the agent runs: which recorded calls were served, the step
// numbering (aligned with the recording's), the changes the agent made since the last step, and
// the counts and divergences the result reports. Every step is written through the format's
// one step writer (stepEvents). The decisions (serve, go to an answerer, hold back) live in
// answer.ts; this file keeps the books they write to and takes the preload's messages in order.
import {
  type DbSandbox,
  type FileCall,
  type FsReport,
  ND_KINDS,
  type NdBatch,
  type ReplayNotice,
  type ReplayQuestion,
  type ReplayReply,
  type StdioRpc,
} from '../../sandbox/index.js';
import { loadStretch } from '../../sandbox/preload/shared-clock.mjs';
import { type PriceTable, recordingPrices } from '../ledger/index.js';
import { ConversationCalls, carriedToolCalls } from '../providers/index.js';
import type { createDbTracker } from '../record/index.js';
import { agentToolCall, stdioRpcCall, stepOfTurn, type Turn, websocketStep } from '../record/index.js';
import {
  agentToolStep,
  type DbChangedPayload,
  type DivergencePayload,
  emptyProvenanceCounts,
  type Recording,
  type RecordingWriter,
  type Redactor,
  type StepEvent,
  StepNamer,
  type StepRecord,
  stepEvents,
  type ToolCalledPayload,
  type Usage,
} from '../recording/index.js';
import { type Answerer, answerHttp, answerTool, serveReported } from './answer.js';
import { ReplayFiles } from './files.js';
import { type CallIndex, LocalSteps, type RecordedCall, RpcSteps, SelfBegunSteps } from './match.js';
import { type LiveRequest, summaryOf } from './normalize.js';
import type { PromptOverride } from './prompt.js';
import type { HeldBack, ReplayOptions, ReplayProgress, ReplayResult } from './types.js';
import type { RecordedTurn } from './websocket.js';

export type DbTracker = Awaited<ReturnType<typeof createDbTracker>>;

/** What a session is made of: the recording, its indexes, the sandbox and the output. */
export interface SessionParts {
  recording: Recording;
  /** The recorded HTTP calls (model and tool calls). */
  index: CallIndex;
  /** In-process tool() calls, served by name and arguments when the agent makes them. */
  tools: CallIndex;
  writer: RecordingWriter;
  redactor: Redactor;
  options: ReplayOptions;
  fsRoot: string | undefined;
  db: DbSandbox | undefined;
  tracker: DbTracker | undefined;
  override: PromptOverride | undefined;
  /** Tried in order for an HTTP call the recording cannot serve, before it is held back (answer.ts). */
  answerers: readonly Answerer[];
}

export class ReplaySession {
  readonly divergences: ReplayResult['divergences'] = [];
  readonly heldBack: HeldBack[] = [];
  readonly served = emptyProvenanceCounts();
  readonly savedCost = { calls: 0, usage: zeroUsage(), usd: 0 as number | undefined };
  readonly blockedConnections: string[] = [];
  /** Answerers that could not answer (a live model endpoint down, a service failing): said in the summary. */
  readonly answerFailures: string[] = [];
  readonly files: ReplayFiles;
  lastStep = 0;
  stopped = false;
  finalOutput: string | undefined;
  /**
   * Tool-call ids a live model minted for a decision it made as recorded -> the recorded ids: the
   * agent echoes them in its next request, which is the recorded one but for them (answer.ts).
   */
  readonly toolCallAliases = new Map<string, string>();
  private exchangeSeq = 0;
  /** The recorded local steps, indexed on the first gap. */
  private localSteps: LocalSteps | undefined;
  /** The recorded requests over a child's stdio, indexed at the first the replay's agent makes. */
  private rpcSteps: RpcSteps | undefined;
  /** until K: the recorded steps the agent begins without asking (the preload's budget counts them). */
  private selfBegun: SelfBegunSteps | undefined;
  /** Recorded step -> the replay's step, for parent ids. */
  private readonly stepMap = new Map<number, number>();
  /** The step numbers the replay has used (a step written out of order must take a free one). */
  private readonly used = new Set<number>();
  /** The last step number given past the recording's (asideStep). */
  private spare: number | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * Whether the agent's file steps are written as the preload reports them (fileStep) rather than
   * copied from the recording (fillGap): from the start in counterfactual mode past any prefix,
   * else from the answer that leaves the prefix or follows a divergence. The preload is told with
   * that answer (`fileSteps`), so both sides change at the same point of the run.
   */
  private ownFileSteps: boolean;
  /** Names the replay's steps as the recorder names its own (src/recording/tool-links.ts). */
  private readonly namer = new StepNamer(carriedToolCalls);
  /** The model calls of the agent's WebSocket conversations, decoded turn by turn as the recorder does. */
  private readonly conversations = new ConversationCalls();
  /** Changes the agent made since the last step began: attributed when the next step begins. */
  private pending: { fs: FsReport[]; db: DbChangedPayload[]; nd: NdBatch[] } = { fs: [], db: [], nd: [] };

  /** The prices the ledger costs this recording at (for the cost a counterfactual replay saves). */
  readonly prices: PriceTable;

  constructor(readonly parts: SessionParts) {
    this.files = new ReplayFiles(parts.writer, parts.fsRoot, parts.recording.pre.fs);
    this.prices = recordingPrices(parts.recording.manifest).table;
    this.ownFileSteps = !this.isPrefix();
  }

  get recording(): Recording {
    return this.parts.recording;
  }
  get index(): CallIndex {
    return this.parts.index;
  }
  get options(): ReplayOptions {
    return this.parts.options;
  }
  get writer(): RecordingWriter {
    return this.parts.writer;
  }

  // ------------------------------------------------------------ the preload's messages, in order

  /** Questions are answered one at a time, in arrival order, so step numbers are deterministic. */
  answer(message: ReplayQuestion): Promise<ReplayReply> {
    // `cursor` tells the preload which recorded call comes next, for its local fast path.
    return this.enqueue(async () => {
      const reply = await this.handle(message);
      this.wakeTurns();
      const budget = this.untilBudget();
      // Past the prefix or a divergence the recorded steps no longer say what the agent does.
      if (!this.ownFileSteps && (!this.isPrefix() || this.divergences.length > 0)) this.ownFileSteps = true;
      return {
        ...reply,
        cursor: this.index.nextExpected()?.index ?? -1,
        ...(budget === undefined ? {} : { budget }),
        ...(this.ownFileSteps ? { fileSteps: true as const } : {}),
      };
    });
  }

  /**
   * until K: how many recorded steps the agent begins without asking (file reads and writes, requests
   * over a child's stdio) lie after the last step and up to K. The preload stops the agent before
   * one more (sandbox/preload/replay.mjs): such steps are no questions to stop at.
   */
  untilBudget(): number | undefined {
    const until = this.options.until;
    if (until === undefined) return undefined;
    this.selfBegun ??= new SelfBegunSteps(this.recording);
    return this.selfBegun.count(this.lastStep, until);
  }

  notice(message: ReplayNotice): void {
    if (message.t === 'served') {
      // The preload answered a call itself from the fast index (exact mode): record it as served.
      void this.enqueue(async () => {
        if (this.stopped) return;
        await this.collect(message.fs ?? [], message.nd);
        await serveReported(this, message);
        this.wakeTurns();
        this.flushPending(this.lastStep);
      }).catch((error: unknown) => {
        // Not lost without a word: the call was answered, but its step is not in the replay.
        this.answerFailures.push(
          `a call the agent's process answered from the recording (recorded call ${message.i + 1}) could not be written: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
      return;
    }
    if (message.t === 'values') {
      // Values handed out in a turn that asked nothing: the next step's changes, as a question's are.
      void this.enqueue(async () => {
        if (!this.stopped) await this.collect(message.fs ?? [], message.nd);
      }).catch(() => undefined);
      return;
    }
    if (message.t === 'begin') {
      // until K: the agent begins a step without asking; what it changed before is the last step's.
      void this.enqueue(async () => {
        if (this.stopped) return;
        await this.collect(message.fs ?? [], message.nd);
        this.flushPending(this.lastStep);
        if (message.stop) this.stop(this.nextStep());
        else if (message.what === 'file' && !this.ownFileSteps) this.beginFileStep();
      }).catch(() => undefined);
      return;
    }
    if (message.t === 'file') {
      // A file step of the agent's, done (reported where the replay writes them itself).
      void this.enqueue(async () => {
        if (this.stopped) return;
        const { t: _t, fs, nd, pid: _pid, ...call } = message;
        if (this.ownFileSteps) await this.writeFileStep(call, fs ?? [], nd);
        else await this.collect(fs ?? [], nd);
      }).catch(() => undefined);
      return;
    }
    if (message.t === 'rpc') {
      // A request over a child's stdio and its answer (MCP over stdio): the server ran again.
      void this.enqueue(async () => {
        if (this.stopped) return;
        await this.collect(message.fs ?? [], message.nd);
        this.writeRpc(message);
      }).catch(() => undefined);
      return;
    }
    if (message.t === 'side-channel') {
      // The preload refused a way out (a program it cannot contain, a worker, UDP, DNS, a raw binding, a signal, a file).
      const how: Record<string, string> = {
        process: 'a program that is not Node (refused: without the OS sandbox it could not be contained)',
        fs: 'a write to a real file',
        udp: 'UDP',
        dns: 'a DNS query',
        binding: 'a raw Node binding',
        signal: 'a signal to another process',
      };
      this.sideChannel({
        target: message.target,
        how: how[message.what] ?? message.what,
        ...(message.pid !== undefined ? { process: `pid ${message.pid} (node)` } : {}),
      });
      return;
    }
    if (message.t === 'blocked') {
      const target = message.target;
      this.blockedConnections.push(target);
      const upgrade = message.upgrade;
      const event = this.diverge(this.lastStep, {
        kind: 'blocked-connection',
        actual: upgrade === undefined ? { target } : { target, upgrade },
        message:
          upgrade === undefined
            ? `The agent tried to connect to ${target}; the network guard blocked it (only the sandbox database is reachable).`
            : upgrade === 'websocket'
              ? `The agent opened a WebSocket at ${target}, which the recording does not have; it was refused (no network in a replay).`
              : `The agent opened an HTTP upgrade to ${upgrade} at ${target}; tapedeck records and replays HTTP and WebSocket conversations, not what goes over another upgraded connection, so it was refused.`,
      });
      this.writer.append({ ...event, stepId: this.lastStep });
    }
  }

  /**
   * A way out the agent tried that was refused below the process (a connect, a write, a signal
   * seen by strace), at the proxy (a tunnel that is not HTTP), or a program the fallback could not
   * contain: a divergence, so a replay that used a side channel is never reported clean.
   */
  sideChannel(channel: { target: string; how: string; process?: string }): void {
    const who = channel.process ? ` by ${channel.process}` : '';
    const event = this.diverge(this.lastStep, {
      kind: 'side-channel',
      actual: channel,
      message: `A way out of the sandbox was tried${who}: ${channel.how} to ${channel.target}.`,
    });
    this.writer.append({ ...event, stepId: this.lastStep });
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async handle(message: ReplayQuestion): Promise<ReplayReply> {
    if (this.stopped) return { stop: true };
    await this.collect(message.fs ?? [], message.nd);
    if (message.kind === 'noop') return {};
    this.writeOwnChanges();
    const reply = message.kind === 'tool' ? await answerTool(this, message) : await answerHttp(this, message);
    this.flushPending(this.lastStep);
    return reply;
  }

  /**
   * Takes the agent's file writes (reported by the preload) and row changes (the sandbox's
   * triggers): the agent's own, as the recorder marks them (a served call's effects are drained
   * where they are applied, serveRecorded).
   */
  async collect(fs: FsReport[], nd?: NdBatch): Promise<void> {
    this.pending.fs.push(...fs);
    if (nd) this.pending.nd.push(nd);
    if (this.parts.tracker)
      for (const change of await this.parts.tracker.drain()) this.pending.db.push({ ...change, own: true });
  }

  /**
   * The agent's own database writes since the last step (a psql, a pg client between two calls),
   * as a step of their own before the next call, as the recorder writes them (drainBetweenSteps):
   * never on the model step before them. Past the prefix only: within it the recorded local steps
   * are copied (fillGap) and carry them.
   */
  writeOwnChanges(): void {
    if (this.isPrefix() || this.pending.db.length === 0) return;
    const events = this.pending.db.map((payload): StepEvent => ({ type: 'db.changed', payload }));
    this.pending.db = [];
    const step = this.nextStep();
    this.beginStep(step, undefined);
    const now = Date.now();
    this.writeStep(
      {
        stepId: step,
        ...this.parentOfOwn(false),
        stateType: 'DB_QUERY',
        name: 'database changes',
        start: now,
        end: now,
        events,
        status: 'success',
      },
      () => this.flushPending(step),
    );
  }

  /** Writes the changes and values collected since the last step as events of `step`. */
  flushPending(step: number): void {
    const { fs, db, nd } = this.pending;
    this.pending = { fs: [], db: [], nd: [] };
    // Clock, random and uuid values handed to the agent, as the recorder logs them.
    for (const batch of nd) {
      for (const kind of ND_KINDS) {
        const values = batch[kind];
        if (values && values.length > 0) {
          this.writer.append({
            type: 'nondeterminism',
            stepId: step,
            payload: { kind, values, ...(batch.process !== undefined ? { process: batch.process } : {}) },
          });
        }
      }
    }
    this.files.takeReport(fs, step);
    for (const change of db) this.writer.append({ type: 'db.changed', stepId: step, payload: change });
  }

  // ------------------------------------------------------------ steps

  /** Before fork-at K (or always, in exact mode) every call must come from the recording. */
  isPrefix(): boolean {
    if (this.options.mode === 'exact') return true;
    const forkAt = this.options.forkAt;
    if (forkAt === undefined) return false;
    const next = this.index.nextExpected();
    return next !== undefined && next.step < forkAt;
  }

  /** The replay's step for a call: the recorded call's own when it is ahead, else the next one. */
  stepFor(call: RecordedCall | undefined): number {
    if (call && call.step > this.lastStep && !this.used.has(call.step)) return call.step;
    return this.nextStep();
  }

  /**
   * The step of a call written aside (the agent's telemetry): its recorded step while free, else
   * one past every step the recording and the replay have used, so no step of the run moves.
   */
  asideStep(call: RecordedCall | undefined): number {
    if (call !== undefined && !this.used.has(call.step)) return call.step;
    this.spare ??= this.recording.events.reduce((max, e) => Math.max(max, e.stepId), 0);
    do this.spare++;
    while (this.used.has(this.spare));
    return this.spare;
  }

  /** The first step number after the last one that no step written out of order has taken. */
  nextStep(): number {
    let step = this.lastStep + 1;
    while (this.used.has(step)) step++;
    return step;
  }

  /** until K: a call that would be step K+1 stops the agent. */
  shouldStop(step: number): boolean {
    return this.options.until !== undefined && step > this.options.until;
  }

  stop(step: number): ReplayReply {
    this.stopped = true;
    this.progress(step, 'stopped', `until ${this.options.until}: stopped before step ${step}`);
    return { stop: true };
  }

  /** Whether serving `call` now keeps the recorded order. */
  inOrder(call: RecordedCall): boolean {
    const next = this.index.nextExpected();
    if (!next || next.index === call.index) return true;
    // Parallel calls requested by the same step may come in any order.
    if (next.parentStepId !== undefined && next.parentStepId === call.parentStepId) return true;
    return issuedEarly(call, next);
  }

  /** Starts step `step`: the recorded local steps skipped before it are copied, pending changes flushed. */
  beginStep(step: number, recordedStep: number | undefined): void {
    if (recordedStep !== undefined && step > this.lastStep + 1) this.fillGap(step);
    else this.flushPending(this.lastStep);
    this.lastStep = step;
    this.used.add(step);
    if (recordedStep !== undefined) this.stepMap.set(recordedStep, step);
  }

  /**
   * until K: the agent begins a file read or write, the recorded file step after the last step (and
   * the local steps before it) is written now, so that what the agent writes in it is its own, not
   * lumped into the last step before the next call. Not past the next recorded call: a write the
   * agent makes early leaves the numbering to that call.
   */
  private beginFileStep(): void {
    this.selfBegun ??= new SelfBegunSteps(this.recording);
    const step = this.selfBegun.nextFile(this.lastStep);
    const next = this.index.nextExpected();
    if (step === undefined || (next !== undefined && next.step < step) || this.used.has(step)) return;
    this.fillGap(step + 1);
  }

  /** A call issued early keeps its recorded step without moving the replay on. */
  mapStep(recordedStep: number, step: number): void {
    this.stepMap.set(recordedStep, step);
    this.used.add(step);
  }

  /** The replay's parent step of a recorded call. */
  parentOf(call: RecordedCall | undefined): number | undefined {
    if (!call || call.parentStepId === undefined) return undefined;
    return this.stepMap.get(call.parentStepId) ?? call.parentStepId;
  }

  /**
   * Emits the recorded local steps (files, pg) skipped between the last step and `step`; the
   * changes the agent made meanwhile are attributed to the last of them.
   */
  fillGap(step: number): void {
    // Local steps ran for real in the sandbox; their structure is copied so step numbers align.
    this.localSteps ??= new LocalSteps(this.recording, this.index.calls);
    // Once the agent's own file steps are written as they happen, the recorded ones are not copied.
    const gap = this.localSteps.between(this.lastStep, step, { files: !this.ownFileSteps });
    const lastGap = gap.reduce((max, e) => Math.max(max, e.stepId), 0);
    if (lastGap === 0) {
      this.flushPending(this.lastStep);
      return;
    }
    for (const e of gap) {
      if (e.type === 'step.completed' && e.stepId === lastGap) this.flushPending(lastGap);
      this.writer.append({
        type: e.type,
        stepId: e.stepId,
        ...(e.parentStepId !== undefined ? { parentStepId: this.stepMap.get(e.parentStepId) ?? e.parentStepId } : {}),
        payload: e.payload,
      } as Parameters<RecordingWriter['append']>[0]);
      this.stepMap.set(e.stepId, e.stepId);
      this.used.add(e.stepId);
    }
    this.flushPending(lastGap);
    this.lastStep = Math.max(this.lastStep, lastGap);
  }

  /**
   * A file read or write of the agent's as its own step, as the recorder writes it (the same tool
   * call and step, shared-file-ops.mjs's message of it): at the next step, with the changes it made.
   */
  private async writeFileStep(call: FileCall, fs: FsReport[], nd: NdBatch | undefined): Promise<void> {
    const step = this.nextStep();
    this.beginStep(step, undefined);
    await this.collect([], nd);
    const payload = agentToolCall(call, (json) => this.writer.body(json, 'application/json'));
    const changes = this.files.changes(fs).map((change): StepEvent => ({ type: 'fs.changed', payload: change }));
    this.writeStep({ stepId: step, ...this.parentOfOwn(false), ...agentToolStep(payload, call, changes) }, () =>
      this.flushPending(step),
    );
  }

  /**
   * A request over a child's stdio and its answer as a step: at the recorded step of the same
   * request (its number and link kept), else the next free step. The recorded order of such a step
   * and the server's own calls is the order their messages reached the recorder (a race), so its
   * step may be behind the replay or ahead of a recorded call still to come: it is then written
   * out of order, at its own number, and the other steps keep theirs. Not a call the recording
   * serves: the server answered again, so no divergence either way.
   */
  private writeRpc(rpc: StdioRpc): void {
    const payload = stdioRpcCall(rpc, [], (json) => this.writer.body(json, 'application/json'));
    this.rpcSteps ??= new RpcSteps(this.recording);
    // Compared as the recording keeps it: redacted.
    const kept = this.parts.redactor.payload('tool.called', payload) as ToolCalledPayload;
    const recorded = this.rpcSteps.take(kept);
    const { step, parent } = this.placeRecorded(recorded);
    this.writeStep({
      stepId: step,
      ...(parent === undefined ? {} : { parentStepId: parent }),
      stateType: payload.stateType,
      name: payload.name,
      ...(recorded?.toolCallId === undefined ? {} : { toolCallId: recorded.toolCallId }),
      ...(recorded?.route === undefined ? {} : { route: recorded.route }),
      start: rpc.ts,
      end: rpc.end,
      events: [{ type: 'tool.called', payload }],
      status: payload.error === undefined ? 'success' : 'error',
      errorType: payload.error?.code,
    });
  }

  /**
   * The step of something the agent did again that the recording has a step of (a request over a
   * child's stdio, a WebSocket turn): the recorded step's number and parent when it is ahead of the
   * replay and of the next recorded call, else the next free step; behind the replay, or ahead of a
   * recorded call still to come, it keeps its recorded number, written out of order.
   */
  private placeRecorded(recorded: { step: number; parentStepId?: number } | undefined): {
    step: number;
    parent: number | undefined;
  } {
    let step: number;
    const next = this.index.nextExpected();
    if (recorded === undefined || this.used.has(recorded.step)) {
      step = this.nextStep();
      this.beginStep(step, recorded?.step);
    } else if (recorded.step > this.lastStep && (next === undefined || next.step > recorded.step)) {
      step = recorded.step;
      this.beginStep(step, recorded.step);
    } else {
      step = recorded.step;
      this.flushPending(this.lastStep);
      this.mapStep(recorded.step, step);
    }
    const parent =
      recorded?.parentStepId === undefined
        ? undefined
        : (this.stepMap.get(recorded.parentStepId) ?? recorded.parentStepId);
    return { step, parent };
  }

  /** The answerer's pushes waiting for the recorded calls before them (reachedStep). */
  private readonly turnWaiters = new Set<{ step: number; wake: () => void; again: () => void }>();

  /**
   * Resolves once every recorded call before recorded step `step` has been served (or the replay
   * stopped): a WebSocket push the server sent after the agent's other calls is delivered after
   * them again, not before. Bounded by `boundMs` without progress (no call served meanwhile; each
   * one served starts it again, so a loaded machine's slow answers do not let the push overtake
   * them): an agent that no longer makes those calls still gets it. The bound is stretched by the
   * machine's load (`loadStretch`): on a starved machine the agent takes longer to make its next
   * call, and the push must not overtake it for that.
   */
  reachedStep(step: number, baseMs = 2000): Promise<void> {
    if (this.hasReached(step)) return Promise.resolve();
    const boundMs = baseMs * loadStretch();
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout>;
      const waiter = {
        step,
        wake: () => {
          clearTimeout(timer);
          this.turnWaiters.delete(waiter);
          resolve();
        },
        again: () => {
          clearTimeout(timer);
          timer = setTimeout(waiter.wake, boundMs);
        },
      };
      timer = setTimeout(waiter.wake, boundMs);
      this.turnWaiters.add(waiter);
    });
  }

  private hasReached(step: number): boolean {
    const next = this.index.nextExpected();
    return this.stopped || next === undefined || next.step > step;
  }

  /** A call was served: pushes waiting for it go, the others' bound starts again. */
  private wakeTurns(): void {
    for (const waiter of [...this.turnWaiters]) {
      if (this.hasReached(waiter.step)) waiter.wake();
      else waiter.again();
    }
  }

  /**
   * A turn of a WebSocket conversation the replay's answerer served (src/replay/websocket.ts), as a
   * step: at the recorded turn's step (see placeRecorded), with its divergence when the agent's
   * message was not the recorded one (held back: the turn's `servedFrom` is `blocked`).
   */
  webSocketTurn(turn: Turn, recorded: RecordedTurn | undefined, divergence?: DivergencePayload): void {
    void this.enqueue(async () => {
      if (this.stopped) return;
      const made = websocketStep(
        turn,
        (data) => this.writer.body(typeof data === 'string' ? data : Buffer.from(data)),
        [],
        this.conversations,
      );
      const { exchange, failed } = made;
      const written = stepOfTurn(made);
      if (written.answer !== undefined) this.finalOutput = written.answer;
      const { step, parent } = this.placeRecorded(divergence === undefined ? recorded : undefined);
      this.served[exchange.servedFrom ?? 'recording']++;
      const events: StepEvent[] = [
        ...written.events,
        ...(divergence === undefined ? [] : [this.diverge(step, divergence)]),
      ];
      this.writeStep({
        stepId: step,
        ...(parent === undefined ? this.parentOfOwn(written.isModel) : { parentStepId: parent }),
        stateType: written.stateType,
        name: written.name,
        ...(recorded?.toolCallId === undefined || divergence !== undefined ? {} : { toolCallId: recorded.toolCallId }),
        ...(recorded?.route === undefined || divergence !== undefined ? {} : { route: recorded.route }),
        start: turn.ts,
        end: turn.end,
        events,
        status: failed ? 'error' : 'success',
        errorType: made.tool.error?.code,
      });
    }).catch(() => undefined);
  }

  /**
   * Writes one step (step.started, its events, step.completed) with the format's step writer,
   * named as the recorder names its steps (a step that carries out a decided tool call after the tool);
   * `beforeEnd` writes what else belongs inside it.
   */
  writeStep(step: StepRecord, beforeEnd?: () => void): void {
    const events = stepEvents(this.namer.name(step));
    for (const [i, event] of events.entries()) {
      // The step's world changes and values (written by flushPending) go inside it.
      if (i === events.length - 1) beforeEnd?.();
      this.writer.append(event);
    }
  }

  /**
   * The parent of a step the replay answers itself (live, by an answerer, held back), as the
   * recorder gives one: a tool step's is the last model step that decided tool calls, so that it
   * is named after the call it carries out; a model step has none.
   */
  parentOfOwn(isModel: boolean): { parentStepId?: number } {
    const parent = isModel ? undefined : this.namer.lastThink;
    return parent === undefined ? {} : { parentStepId: parent };
  }

  nextExchangeId(): string {
    return `r${++this.exchangeSeq}`;
  }

  /** Counts a divergence at `step` and returns its event, for the step that shows it. */
  diverge(step: number, payload: DivergencePayload): StepEvent & { type: 'divergence'; payload: DivergencePayload } {
    this.divergences.push({ ...payload, step });
    this.progress(step, 'divergence', payload.message);
    return { type: 'divergence', payload };
  }

  progress(step: number, action: ReplayProgress['action'], detail: string): void {
    this.options.onProgress?.({ step, action, detail });
  }

  /** The request with its secrets redacted, as the recording stores requests (what matching compares). */
  redacted(req: LiveRequest): LiveRequest {
    const redactor = this.parts.redactor;
    return {
      method: req.method,
      url: redactor.url(req.url),
      headers: redactor.headers(req.headers),
      ...(req.bodyText !== undefined ? { bodyText: redactor.text(req.bodyText) } : {}),
    };
  }

  /** Adds a model call served from the recording in counterfactual mode to the cost not paid again. */
  addSaved(usage: Usage | undefined, usd: number | undefined): void {
    this.savedCost.calls++;
    if (usage) for (const k of Object.keys(usage) as Array<keyof Usage>) this.savedCost.usage[k] += usage[k];
    this.savedCost.usd = usd === undefined || this.savedCost.usd === undefined ? undefined : this.savedCost.usd + usd;
  }

  /** Exact mode, at the end: every recorded call the agent never made is a divergence. */
  reportMissingCalls(): void {
    for (const c of this.index.unused()) {
      const expected = { step: c.step, request: summaryOf(c.view) };
      this.writer.append({
        type: 'divergence',
        stepId: this.lastStep,
        payload: {
          kind: 'missing-call',
          expected,
          message: `Recorded step ${c.step} (${c.stateType} ${c.stepName || c.request.url}) was never requested in the replay.`,
        },
      });
      this.divergences.push({
        kind: 'missing-call',
        step: this.lastStep,
        expected,
        message: `Recorded step ${c.step} was never requested in the replay.`,
      });
    }
  }
}

/**
 * Steps are numbered by completion, so a call issued before `next` but completed after it (a
 * long-lived stream, such as the MCP server-notification GET) has a later step than its place in
 * request order: requested now, it is in order.
 */
export function issuedEarly(call: RecordedCall, next: RecordedCall): boolean {
  if (!call.exchange || !next.exchange) return false;
  if (call.step <= next.step) return false;
  // In flight together when recorded: `call` was sent before `next` was answered, so the agent did
  // not wait for `next`'s answer to send it — the two may arrive in either order (a set, not a list).
  const nextStart = Date.parse(next.exchange.startedAt);
  return Date.parse(call.exchange.startedAt) <= nextStart + next.exchange.durationMs;
}

/**
 * The step after which a stream issued early ends in the replay: the step before its own, or,
 * when requests were already on their way as the server ended the stream (an MCP session DELETE
 * that made the server close its notification stream), the last of those — the stream then
 * ends once their answers are on their way, as it did, and not while they are still being
 * answered (a client that sees its stream end with nothing else pending reconnects).
 * Only a request sent a whole millisecond before the stream ended counts (recorded start times
 * are whole milliseconds), so a request sent because the stream ended is never waited for.
 */
export function closesAfter(call: RecordedCall, calls: readonly RecordedCall[]): number {
  let after = call.step - 1;
  const x = call.exchange;
  if (!x) return after;
  const ended = Date.parse(x.startedAt) + x.durationMs;
  for (const c of calls) {
    if (c.step <= call.step || !c.exchange || c.step <= after) continue;
    if (Date.parse(c.exchange.startedAt) + 1 <= ended) after = c.step;
  }
  return after;
}

function zeroUsage(): Usage {
  return { inputUncached: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
}
