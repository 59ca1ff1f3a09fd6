// The state of one replay while the agent runs: which recorded calls were served, the changes the
// agent made since the last step, and the counts and divergences the result reports. The step
// numbering (aligned with the recording's) and the writing of steps live in session-steps.ts, which
// this builds on. The decisions (serve, go to an answerer, hold back) live in answer.ts; this file
// keeps the books they write to and takes the preload's messages (and the WebSocket turns) in order.
import type {
  FileCall,
  FsReport,
  NdBatch,
  ReplayNotice,
  ReplayQuestion,
  ReplayReply,
  StdioRpc,
} from '../../sandbox/index.js';
import { loadStretch } from '../../sandbox/preload/shared-clock.mjs';
import { type PriceTable, recordingPrices } from '../ledger/prices.js';
import { ConversationCalls } from '../providers/index.js';
import { agentToolCall, stdioRpcCall } from '../record/classify.js';
import { stepOfTurn, type Turn, websocketStep } from '../record/websocket.js';
import {
  agentToolStep,
  type DivergencePayload,
  emptyProvenanceCounts,
  type StepEvent,
  type ToolCalledPayload,
  UnhookedAccount,
  type Usage,
  type UsageBucket,
} from '../recording/index.js';
import { answerHttp, answerTool, serveReported } from './answer.js';
import { outcomeKey, RecordedFileSteps, RpcSteps, SelfBegunSteps } from './match.js';
import { type LiveRequest, redactLive, summaryOf } from './normalize.js';
import { type SessionParts, SessionSteps } from './session-steps.js';
import type { HeldBack } from './types.js';
import type { RecordedTurn } from './websocket.js';

/** A WebSocket push waiting for the recorded calls before it (ReplaySession.reachedStep). */
interface TurnWaiter {
  step: number;
  /** Its calls are served by answers the replayer sent: it goes when the agent next speaks. */
  armed: boolean;
  wake(): void;
  again(): void;
  arm(): void;
}

export class ReplaySession extends SessionSteps {
  readonly heldBack: HeldBack[] = [];
  readonly served = emptyProvenanceCounts();
  readonly savedCost = { calls: 0, usage: zeroUsage(), usd: 0 as number | undefined };
  readonly blockedConnections: string[] = [];
  /** Answerers that could not answer (a live model endpoint down, a service failing): said in the summary. */
  readonly answerFailures: string[] = [];
  /** Python programs started without tapedeck's hook: handed no recorded values, said in the warnings. */
  readonly unhooked = new UnhookedAccount();
  finalOutput: string | undefined;
  /**
   * Tool-call ids a live model minted for a decision it made as recorded -> the recorded ids: the
   * agent echoes them in its next request, which is the recorded one but for them (answer.ts).
   */
  readonly toolCallAliases = new Map<string, string>();
  private exchangeSeq = 0;
  /** The recorded requests over a child's stdio, indexed at the first the replay's agent makes. */
  private rpcSteps: RpcSteps | undefined;
  private recordedFiles: RecordedFileSteps | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** The model calls of the agent's WebSocket conversations, decoded turn by turn as the recorder does. */
  private readonly conversations = new ConversationCalls();
  /** The prices the ledger costs this recording at (for the cost a counterfactual replay saves). */
  readonly prices: PriceTable;

  constructor(parts: SessionParts) {
    super(parts);
    this.prices = recordingPrices(parts.recording.manifest).table;
  }

  // ------------------------------------------------------------ the preload's messages, in order

  /** Questions are answered one at a time, in arrival order, so step numbers are deterministic. */
  answer(message: ReplayQuestion): Promise<ReplayReply> {
    // `cursor` tells the preload which recorded call comes next, for its local fast path.
    this.agentSpoke();
    return this.enqueue(async () => {
      const reply = await this.handle(message);
      this.wakeTurns(false);
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
    this.agentSpoke();
    if (message.t === 'served') {
      // The preload answered a call itself from the fast index (exact mode): record it as served.
      void this.enqueue(async () => {
        if (this.stopped) return;
        await this.collect(message.fs ?? [], message.nd);
        await serveReported(this, message);
        this.wakeTurns(true);
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
    if (message.t === 'unhooked') {
      const { t: _t, pid: _pid, ...found } = message;
      this.unhooked.see(found);
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
    // Stopped (until K) at this question: what the agent changed since step K stays pending for the
    // finish, which tells step K's from the recording's steps after it (takeRowsPast).
    if (!this.stopped) this.flushPending(this.lastStep);
    return reply;
  }

  /**
   * A file read or write of the agent's as its own step, as the recorder writes it (the same tool
   * call and step, shared-file-ops.mjs's message of it): at the next step, with the changes it made.
   * A call no recorded file step made (a file the recording never read or wrote there, or another
   * outcome) was answered by the sandbox's copy of the workspace: its tool call says so.
   */
  private async writeFileStep(call: FileCall, fs: FsReport[], nd: NdBatch | undefined): Promise<void> {
    const step = this.nextStep();
    this.beginStep(step, undefined);
    await this.collect([], nd);
    const made = agentToolCall(call, (json) => this.writer.body(json, 'application/json'));
    this.recordedFiles ??= new RecordedFileSteps(this.recording);
    // Compared as the recording keeps it: redacted.
    const held = this.recordedFiles.take(this.parts.redactor.payload('tool.called', made) as ToolCalledPayload);
    const payload: ToolCalledPayload = held ? made : { ...made, servedFrom: 'sandbox' };
    // An answer the recording did not give: counted as the sandbox's, as answerProvenance counts it.
    if (!held) this.served.sandbox++;
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
    const payload = stdioRpcCall(rpc, this.parts.rules, (json) => this.writer.body(json, 'application/json'));
    this.rpcSteps ??= new RpcSteps(this.recording);
    // Compared as the recording keeps it: redacted.
    const kept = this.parts.redactor.payload('tool.called', payload) as ToolCalledPayload;
    const recorded = this.rpcSteps.take(kept);
    const { step, parent } = this.placeRecorded(recorded);
    // The server answered again, in the sandbox: an answer the recording did not hold (a request
    // it never saw, or another result) is the sandbox's, as a file step's is (writeFileStep).
    const held = recorded !== undefined && recorded.outcome === outcomeKey(kept);
    this.writeStep({
      stepId: step,
      ...(parent === undefined ? {} : { parentStepId: parent }),
      stateType: payload.stateType,
      name: payload.name,
      ...(recorded?.toolCallId === undefined ? {} : { toolCallId: recorded.toolCallId }),
      ...(recorded?.route === undefined ? {} : { route: recorded.route }),
      start: rpc.ts,
      end: rpc.end,
      events: [{ type: 'tool.called', payload: held ? payload : { ...payload, servedFrom: 'sandbox' } }],
      status: payload.error === undefined ? 'success' : 'error',
      errorType: payload.error?.code,
    });
  }

  /** The answerer's pushes waiting for the recorded calls before them (reachedStep). */
  private readonly turnWaiters = new Set<TurnWaiter>();

  /**
   * Resolves once every recorded call before recorded step `step` has been served (or the replay
   * stopped): a WebSocket push the server sent after the agent's other calls is delivered after
   * them again, not before. Bounded by `boundMs` without progress (no call served meanwhile; each
   * one served starts it again, so a loaded machine's slow answers do not let the push overtake
   * them): an agent that no longer makes those calls still gets it. The bound is stretched by the
   * machine's load (`loadStretch`): on a starved machine the agent takes longer to make its next
   * call, and the push must not overtake it for that.
   *
   * Served is not yet received: the answer the replayer wrote travels to the agent on another
   * connection than the push, and the agent may read the push first. So a push whose calls were
   * served by an answer the replayer sent goes when the agent next speaks (it has its answer and
   * moved on: the recorded order), or after a short grace (`graceMs`, stretched alike) when the
   * agent waits for the push before it says anything more. An answer the agent's process gave
   * itself (exact mode's fast path, a `served` notice) is already there: the push goes at once.
   */
  reachedStep(step: number, baseMs = 2000, graceMs = 100): Promise<void> {
    if (this.hasReached(step)) return Promise.resolve();
    const stretch = loadStretch();
    const boundMs = baseMs * stretch;
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout>;
      const waiter: TurnWaiter = {
        step,
        armed: false,
        wake: () => {
          clearTimeout(timer);
          this.turnWaiters.delete(waiter);
          resolve();
        },
        again: () => {
          if (waiter.armed) return;
          clearTimeout(timer);
          timer = setTimeout(waiter.wake, boundMs);
        },
        arm: () => {
          if (waiter.armed) return;
          waiter.armed = true;
          clearTimeout(timer);
          timer = setTimeout(waiter.wake, graceMs * stretch);
        },
      };
      timer = setTimeout(waiter.wake, boundMs);
      this.turnWaiters.add(waiter);
    });
  }

  /** The agent spoke (a question or a notice): pushes whose calls it has been answered go now. */
  private agentSpoke(): void {
    for (const waiter of [...this.turnWaiters]) if (waiter.armed) waiter.wake();
  }

  private hasReached(step: number): boolean {
    const next = this.index.nextExpected();
    return this.stopped || next === undefined || next.step > step;
  }

  /**
   * A call was served: pushes waiting for it go (`received`: the answer is in the agent's process
   * already) or go once the agent has it (reachedStep); the others' bound starts again.
   */
  private wakeTurns(received: boolean): void {
    for (const waiter of [...this.turnWaiters]) {
      if (!this.hasReached(waiter.step)) waiter.again();
      else if (received) waiter.wake();
      else waiter.arm();
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
        this.parts.rules,
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

  nextExchangeId(): string {
    return `r${++this.exchangeSeq}`;
  }

  /** The request with its secrets redacted, as the recording stores requests (what matching compares). */
  redacted(req: LiveRequest, bytes?: Uint8Array): LiveRequest {
    return redactLive(this.parts.redactor, req, bytes);
  }

  /** Adds a model call served from the recording in counterfactual mode to the cost not paid again. */
  addSaved(usage: Usage | undefined, usd: number | undefined): void {
    this.savedCost.calls++;
    if (usage) for (const k of Object.keys(zeroUsage()) as UsageBucket[]) this.savedCost.usage[k] += usage[k];
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

function zeroUsage(): Usage {
  return { inputUncached: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
}
