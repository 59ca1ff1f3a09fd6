// The steps of a replay's session, as it numbers and writes them: which step a call takes (the
// recorded call's own when it is free and ahead, so the replay's numbering stays aligned with the
// recording's; else the next free one, or one past all of them for a call written aside), the
// recorded local steps copied into the gaps, the agent's changes since the last step collected and
// written into the step that shows them, each step written through the format's one step writer
// (stepEvents) and named as the recorder names its steps, and the divergences counted. The session
// (session.ts) builds on it: it takes the preload's messages in order and says what each one makes.

import type { DbSandbox } from '../../sandbox/db.js';
import { type FsReport, ND_KINDS, type NdBatch, type ReplayReply } from '../../sandbox/protocol.js';
import type { DbTracker } from '../postgres/index.js';
import { carriedToolCalls } from '../providers/index.js';
import type { ToolRule } from '../record/classify.js';
import {
  canonicalJson,
  type DbChangedPayload,
  type DivergencePayload,
  type Recording,
  type RecordingWriter,
  type Redactor,
  type StepEvent,
  StepNamer,
  type StepRecord,
  stepEvents,
} from '../recording/index.js';
import type { Answerer } from './answer.js';
import { ReplayFiles } from './files.js';
import { type CallIndex, LocalSteps, type RecordedCall, SelfBegunSteps } from './match.js';
import type { PromptOverride } from './prompt.js';
import { issuedEarly, originOf } from './recorded-calls.js';
import type { ReplayOptions, ReplayProgress, ReplayResult } from './types.js';

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
  /** The user's tool classification rules (`--rules`): a call the recording does not serve is classified as the recorder would. */
  rules: readonly ToolRule[];
}

export abstract class SessionSteps {
  readonly divergences: ReplayResult['divergences'] = [];
  readonly files: ReplayFiles;
  lastStep = 0;
  stopped = false;
  /** The recorded local steps, indexed on the first gap. */
  private localSteps: LocalSteps | undefined;
  /** until K: the recorded steps the agent begins without asking (the preload's budget counts them). */
  protected selfBegun: SelfBegunSteps | undefined;
  /** Recorded step -> the replay's step, for parent ids. */
  private readonly stepMap = new Map<number, number>();
  /** The step numbers the replay has used (a step written out of order must take a free one). */
  private readonly used = new Set<number>();
  /** The last step number given past the recording's (asideStep). */
  private spare: number | undefined;
  /**
   * Whether the agent's file steps are written as the preload reports them (fileStep) rather than
   * copied from the recording (fillGap): from the start in counterfactual mode past any prefix,
   * else from the answer that leaves the prefix or follows a divergence. The preload is told with
   * that answer (`fileSteps`), so both sides change at the same point of the run.
   */
  protected ownFileSteps: boolean;
  /** Names the replay's steps as the recorder names its own (src/recording/tool-links.ts). */
  private readonly namer = new StepNamer(carriedToolCalls);
  /** Changes the agent made since the last step began: attributed when the next step begins. */
  private pending: { fs: FsReport[]; db: DbChangedPayload[]; nd: NdBatch[] } = { fs: [], db: [], nd: [] };
  /** The processes that drew clock or random values in the replay, by name ('' the agent's own). */
  readonly drew = new Set<string>();

  constructor(readonly parts: SessionParts) {
    this.files = new ReplayFiles(parts.writer, parts.fsRoot, parts.recording.pre.fs);
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

  /**
   * Takes the agent's file writes (reported by the preload) and row changes (the sandbox's
   * triggers): the agent's own, as the recorder marks them (a served call's effects are drained
   * where they are applied, serveRecorded).
   */
  async collect(fs: FsReport[], nd?: NdBatch): Promise<void> {
    this.pending.fs.push(...fs);
    if (nd) {
      this.pending.nd.push(nd);
      if (drewValues(nd)) this.drew.add(nd.process ?? '');
    }
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

  /**
   * until K, the agent stopped at its next call: when the recording's step K+1 is a local step (the
   * agent's own database writes after K's call), or the recording stops at K (its recorder killed
   * before it wrote what came next), the row changes the agent made since K's answer are not K's.
   * Taken out of what is pending, for the sandbox to undo: the world of step K is the recorded one.
   */
  async takeRowsPast(until: number): Promise<DbChangedPayload[]> {
    if (this.lastStep !== until) return [];
    await this.collect([]);
    if (this.pending.db.length === 0) return [];
    const past = this.recording.events.some((e) => e.stepId > until);
    this.localSteps ??= new LocalSteps(this.recording, this.index.calls);
    const next = this.localSteps.between(until, until + 2, { files: false });
    if (past && !next.some((e) => e.type === 'step.started' && e.stepId === until + 1)) return [];
    const rows = this.pending.db;
    this.pending.db = [];
    if (past) return rows;
    // Cut at K: the recorder may have logged some of these rows at step K before it was killed
    // (the agent wrote them after K's call, ahead of its next one). Those are K's world, as the
    // recording knows it; only the rest is undone.
    const known = new Map<string, number>();
    for (const e of this.recording.events) {
      if (e.type !== 'db.changed' || e.stepId !== until) continue;
      const id = rowChangeId(e.payload);
      known.set(id, (known.get(id) ?? 0) + 1);
    }
    const undone: DbChangedPayload[] = [];
    for (const row of rows) {
      const id = rowChangeId(row);
      const left = known.get(id) ?? 0;
      if (left > 0) {
        known.set(id, left - 1);
        this.pending.db.push(row);
      } else undone.push(row);
    }
    return undone;
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
    return together(call, next) || this.ownOrder(call, next);
  }

  /**
   * Whether `call`, made by another thread or process (a worker thread, a child process) than
   * `next`, the first recorded call not yet served, keeps the order of its own thread's calls: the
   * order between threads that run at once is the scheduler's, not the agent's.
   */
  ownOrder(call: RecordedCall, next: RecordedCall): boolean {
    const origin = originOf(call);
    if (origin === undefined || originOf(next) === undefined || origin === originOf(next)) return false;
    const own = this.index.nextExpectedFrom(origin);
    return own === undefined || own.index === call.index || together(call, own);
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
  protected beginFileStep(): void {
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
   * The step of something the agent did again that the recording has a step of (a request over a
   * child's stdio, a WebSocket turn): the recorded step's number and parent when it is ahead of the
   * replay and of the next recorded call, else the next free step; behind the replay, or ahead of a
   * recorded call still to come, it keeps its recorded number, written out of order.
   */
  protected placeRecorded(recorded: { step: number; parentStepId?: number } | undefined): {
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

  /** Counts a divergence at `step` and returns its event, for the step that shows it. */
  diverge(step: number, payload: DivergencePayload): StepEvent & { type: 'divergence'; payload: DivergencePayload } {
    this.divergences.push({ ...payload, step });
    this.progress(step, 'divergence', payload.message);
    return { type: 'divergence', payload };
  }

  progress(step: number, action: ReplayProgress['action'], detail: string): void {
    this.options.onProgress?.({ step, action, detail });
  }
}

/** Whether a batch holds values handed to the agent (not only its database replies' marks). */
function drewValues(nd: NdBatch): boolean {
  return (['clock', 'hrtime', 'random', 'uuid', 'randomBytes'] as const).some((kind) => (nd[kind]?.length ?? 0) > 0);
}

/** Calls that may come in either order: parallel calls of one step, or one sent while the other was in flight. */
function together(call: RecordedCall, next: RecordedCall): boolean {
  return (next.parentStepId !== undefined && next.parentStepId === call.parentStepId) || issuedEarly(call, next);
}

/** One row change's identity across a recording and its replay: the row and what was done to it. */
function rowChangeId(change: DbChangedPayload): string {
  return canonicalJson([change.schema, change.table, change.op, change.key]);
}
