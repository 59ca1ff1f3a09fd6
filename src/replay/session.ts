// One replay: reads a recording, opens the sandbox (memfs seed, database sandbox, network
// guard), runs the agent with the replay preload and answers each of its calls from the
// recording (or, in counterfactual mode, from the model endpoint), writing a new recording.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type DbSandbox, fsSeed, materializeFs, openDbSandbox, REPLAY_PRELOAD } from '../../sandbox/index.js';
import { createDbTracker, detectLlm } from '../record/index.js';
import {
  blobRelativePath,
  canonicalJson,
  createRecordingWriter,
  createRedactor,
  type DbChangedPayload,
  type DbSnapshot,
  type DivergencePayload,
  type FsSnapshot,
  type ModelCalledPayload,
  PLACEHOLDER_PREFIX,
  type Recording,
  type RecordingWriter,
  type Redactor,
  readRecording,
  type StreamChunk,
  TapedeckError,
  type Usage,
  worldAt,
} from '../recording/index.js';
import { listenIpc } from './ipc.js';
import {
  bodyBytesOf,
  CallIndex,
  explainMiss,
  indexRecording,
  type MatchResult,
  type RecordedCall,
  toolRequest,
} from './match.js';
import {
  apiOf,
  canonical,
  type FieldDiff,
  fieldDiff,
  isModelApi,
  type LiveRequest,
  parseJson,
  type RequestView,
  summaryOf,
  viewOf,
} from './normalize.js';
import { applyOverride, overrideRequestBody, type PromptOverride, systemPromptOf, withSystemPrompt } from './prompt.js';
import type { HeldBack, MissPolicy, ReplayOptions, ReplayResult } from './types.js';

interface WireBody {
  size: number;
  text?: string;
  b64?: string;
}

interface FsReport {
  abs: string;
  mode?: number;
  b64?: string;
  gone?: boolean;
  dir?: boolean;
}

type Reply = Record<string, unknown>;
type NdBatch = Partial<Record<'clock' | 'random' | 'uuid' | 'randomBytes', Array<number | string>>>;
type DbTracker = Awaited<ReturnType<typeof createDbTracker>>;

const ZERO_USAGE = (): Usage => ({ inputUncached: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function wireBytes(body: WireBody | undefined): Buffer | undefined {
  if (!body) return undefined;
  if (body.b64 !== undefined) return Buffer.from(body.b64, 'base64');
  return Buffer.from(body.text ?? '', 'utf8');
}

function wireOf(bytes: Buffer | undefined): WireBody | undefined {
  if (!bytes || bytes.length === 0) return undefined;
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes)
    ? { size: bytes.length, text }
    : { size: bytes.length, b64: bytes.toString('base64') };
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The URL a live model call goes to: the endpoint's origin and path prefix, the request's API path. */
export function retarget(url: string, endpoint: string): string {
  const from = new URL(url);
  const to = new URL(endpoint);
  const prefix = to.pathname.replace(/\/$/, '');
  let rest = from.pathname;
  // http://host/v1 + /v1/chat/completions -> http://host/v1/chat/completions, not /v1/v1/…
  const segments = prefix.split('/').filter(Boolean);
  for (let i = segments.length; i > 0; i--) {
    const tail = `/${segments.slice(segments.length - i).join('/')}`;
    if (rest === tail || rest.startsWith(`${tail}/`)) {
      rest = rest.slice(tail.length);
      break;
    }
  }
  return `${to.origin}${prefix}${rest}${from.search}`;
}

function usageCost(usage: Usage | undefined, model: string, recording: Recording): number | undefined {
  const price = recording.manifest.prices?.models.find((m) => m.model === model);
  if (!usage || !price) return undefined;
  return (
    (usage.inputUncached * price.inputPerMillion +
      usage.cacheRead * price.cachedInputPerMillion +
      usage.cacheWrite * (price.cacheWritePerMillion ?? price.inputPerMillion) +
      usage.output * price.outputPerMillion +
      usage.reasoning * (price.reasoningPerMillion ?? 0)) /
    1e6
  );
}

/** Reads a recording for replay, turning every problem into a TapedeckError. */
async function loadRecording(dir: string): Promise<Recording> {
  if (!existsSync(dir)) throw new TapedeckError('NO_RECORDING', `No recording at ${dir}.`);
  try {
    return await readRecording(dir, { verifyBlobs: false });
  } catch (error) {
    if (error instanceof TapedeckError) throw error;
    throw new TapedeckError('BAD_RECORDING', `Cannot read the recording at ${dir}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** The materialised world of the replay at its stop: files under dir/fs, rows in dir/db.json. */
async function writeWorld(
  dir: string,
  fs: FsSnapshot,
  readBlob: (s: string) => Buffer,
  db?: DbSnapshot,
): Promise<void> {
  await materializeFs(fs, readBlob, path.join(dir, 'fs'));
  if (db) await writeFile(path.join(dir, 'db.json'), `${JSON.stringify(db, null, 2)}\n`);
}

/**
 * Materialises the recorded world after step k (time travel without running the agent):
 * files under dir/fs and, when the recording has a database, rows in dir/db.json.
 */
export async function materializeWorld(
  recording: Recording,
  step: number,
  dir: string,
): Promise<{ fs: FsSnapshot; db?: DbSnapshot }> {
  const world = worldAt(recording, step);
  await writeWorld(dir, world.fs, recording.readBlob, world.db);
  return world;
}

/** Compares two worlds; returns human-readable differences (empty when equal). */
export function compareWorlds(
  expected: { fs?: FsSnapshot; db?: DbSnapshot },
  actual: { fs?: FsSnapshot; db?: DbSnapshot },
): string[] {
  const out: string[] = [];
  const ef = expected.fs?.files ?? {};
  const af = actual.fs?.files ?? {};
  for (const p of new Set([...Object.keys(ef), ...Object.keys(af)])) {
    const e = ef[p];
    const a = af[p];
    if (!e) out.push(`fs ${p}: not in the recorded world`);
    else if (!a) out.push(`fs ${p}: missing from the replay's world`);
    else if (e.sha256 !== a.sha256) out.push(`fs ${p}: content differs`);
  }
  const tables = new Map<string, { e?: unknown[]; a?: unknown[] }>();
  for (const t of expected.db?.tables ?? []) tables.set(`${t.schema}.${t.name}`, { e: t.rows });
  for (const t of actual.db?.tables ?? []) {
    const entry = tables.get(`${t.schema}.${t.name}`) ?? {};
    entry.a = t.rows;
    tables.set(`${t.schema}.${t.name}`, entry);
  }
  for (const [name, { e, a }] of tables) {
    if (!e || !a) {
      if (expected.db && actual.db) out.push(`db ${name}: table only in the ${e ? 'recorded' : "replay's"} world`);
      continue;
    }
    if (canonicalJson(e) === canonicalJson(a)) continue;
    const es = new Set(e.map((r) => canonicalJson(r)));
    const as = new Set(a.map((r) => canonicalJson(r)));
    for (const r of as) if (!es.has(r)) out.push(`db ${name}: unexpected row ${r}`);
    for (const r of es) if (!as.has(r)) out.push(`db ${name}: missing row ${r}`);
  }
  return out;
}

class ReplaySession {
  readonly divergences: ReplayResult['divergences'] = [];
  readonly heldBack: HeldBack[] = [];
  readonly served = { recording: 0, live: 0, blocked: 0 };
  readonly savedCost = { calls: 0, usage: ZERO_USAGE(), usd: 0 as number | undefined };
  readonly blockedConnections: string[] = [];
  lastStep = 0;
  stopped = false;
  finalOutput: string | undefined;
  private exchangeSeq = 0;
  private readonly stepMap = new Map<number, number>();
  private queue: Promise<unknown> = Promise.resolve();
  /** Changes the agent made since the last step began: attributed when the next step begins. */
  private pending: { fs: FsReport[]; db: DbChangedPayload[]; nd: NdBatch[] } = { fs: [], db: [], nd: [] };
  /** The replay's files: path relative to the fs root -> entry. */
  readonly files = new Map<string, { mode: number; size: number; sha256: string }>();

  constructor(
    readonly recording: Recording,
    readonly index: CallIndex,
    readonly writer: RecordingWriter,
    readonly redactor: Redactor,
    readonly options: ReplayOptions,
    readonly fsRoot: string | undefined,
    readonly db: DbSandbox | undefined,
    readonly override: PromptOverride | undefined,
    readonly tracker: DbTracker | undefined,
    /** In-process tool() calls, served by name and arguments when the agent makes them. */
    readonly tools: CallIndex = new CallIndex([]),
  ) {
    for (const [p, e] of Object.entries(recording.pre.fs?.files ?? {})) this.files.set(p, { ...e });
  }

  /** Questions are answered one at a time, in arrival order, so step numbers are deterministic. */
  answer(message: Record<string, unknown>): Promise<Reply> {
    // `cursor` tells the preload which recorded call comes next, for its local fast path.
    const next = this.queue.then(async () => ({
      ...(await this.handle(message)),
      cursor: this.index.nextExpected()?.index ?? -1,
    }));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private progress(step: number, action: 'served' | 'live' | 'held-back' | 'divergence' | 'stopped', detail: string) {
    this.options.onProgress?.({ step, action, detail });
  }

  private async handle(message: Record<string, unknown>): Promise<Reply> {
    if (this.stopped) return { stop: true };
    await this.collect(Array.isArray(message.fs) ? (message.fs as FsReport[]) : [], message.nd as NdBatch | undefined);
    if (message.kind === 'noop') return {};
    const reply = message.kind === 'tool' ? await this.handleTool(message) : await this.handleHttp(message);
    this.flushPending(this.lastStep);
    return reply;
  }

  /** Takes the agent's file writes (reported by the preload) and row changes (the sandbox's triggers). */
  async collect(fs: FsReport[], nd?: NdBatch): Promise<void> {
    this.pending.fs.push(...fs);
    if (nd && typeof nd === 'object') this.pending.nd.push(nd);
    if (this.tracker) this.pending.db.push(...(await this.tracker.drain()));
  }

  flushPending(step: number): void {
    const { fs, db, nd } = this.pending;
    this.pending = { fs: [], db: [], nd: [] };
    // Clock, random and uuid values handed to the agent, as the recorder logs them.
    for (const batch of nd) {
      for (const kind of ['clock', 'random', 'uuid', 'randomBytes'] as const) {
        const values = batch[kind];
        if (Array.isArray(values) && values.length > 0) {
          this.writer.append({ type: 'nondeterminism', stepId: step, payload: { kind, values } });
        }
      }
    }
    this.takeFsReport(fs, step);
    for (const change of db) this.writer.append({ type: 'db.changed', stepId: step, payload: change });
  }

  private isPrefix(): boolean {
    if (this.options.mode === 'exact') return true;
    const forkAt = this.options.forkAt;
    if (forkAt === undefined) return false;
    const next = this.index.nextExpected();
    return next !== undefined && next.step < forkAt;
  }

  private stepFor(call: RecordedCall | undefined): number {
    if (call && call.step > this.lastStep) return call.step;
    return this.lastStep + 1;
  }

  /** until K: a call that would be step K+1 stops the agent. */
  private shouldStop(step: number): boolean {
    return this.options.until !== undefined && step > this.options.until;
  }

  private stop(step: number): Reply {
    this.stopped = true;
    this.progress(step, 'stopped', `until ${this.options.until}: stopped before step ${step}`);
    return { stop: true };
  }

  private diverge(step: number, payload: DivergencePayload): void {
    this.writer.append({ type: 'divergence', stepId: step, payload });
    this.divergences.push({ ...payload, step });
    this.progress(step, 'divergence', payload.message);
  }

  private inOrder(call: RecordedCall): boolean {
    const next = this.index.nextExpected();
    if (!next || next.index === call.index) return true;
    // Parallel calls requested by the same step may come in any order.
    if (next.parentStepId !== undefined && next.parentStepId === call.parentStepId) return true;
    return issuedEarly(call, next);
  }

  private liveRequest(message: Record<string, unknown>): { raw: LiveRequest; bytes?: Buffer } {
    const bytes = wireBytes(message.body as WireBody | undefined);
    const body = message.body as WireBody | undefined;
    const raw: LiveRequest = {
      method: String(message.method ?? 'GET').toUpperCase(),
      url: String(message.url ?? ''),
      headers: (message.headers as Record<string, string>) ?? {},
      ...(body?.text !== undefined ? { bodyText: body.text } : {}),
    };
    return bytes ? { raw, bytes } : { raw };
  }

  private redacted(req: LiveRequest): LiveRequest {
    return {
      method: req.method,
      url: this.redactor.url(req.url),
      headers: this.redactor.headers(req.headers),
      ...(req.bodyText !== undefined ? { bodyText: this.redactor.text(req.bodyText) } : {}),
    };
  }

  private policyFor(req: LiveRequest, toolName?: string): MissPolicy {
    const byTool = this.options.onMissByTool ?? {};
    if (toolName && byTool[toolName]) return byTool[toolName];
    const view = viewOf(req);
    const key = `${req.method} ${view.path}`;
    if (byTool[key]) return byTool[key];
    return this.options.onMiss ?? (this.options.mode === 'exact' ? 'fail' : 'error-response');
  }

  // ---------------------------------------------------------------- http

  private async handleHttp(message: Record<string, unknown>): Promise<Reply> {
    let { raw, bytes } = this.liveRequest(message);
    const parsed = parseJson(raw.bodyText);
    const api = apiOf(raw.method, raw.url, parsed.ok ? parsed.value : undefined);
    const isModel = isModelApi(api);
    if (isModel && this.override && raw.bodyText !== undefined) {
      const text = overrideRequestBody(api, raw.bodyText, this.override);
      raw = { ...raw, bodyText: text };
      bytes = Buffer.from(text, 'utf8');
    }
    const live = this.redacted(raw);
    const prefix = this.isPrefix();
    if (isModel) {
      if (prefix) {
        const m = this.index.match(live, { kind: 'model' });
        if (m.call && m.layer !== 'structural' && this.inOrder(m.call)) return this.serve(m.call, raw, bytes, m);
        // Under a prompt override the recorded prefix differs by the prompt alone, on purpose.
        const aligned = this.override ? this.alignedModelCall(live) : undefined;
        if (aligned) return this.serve(aligned, raw, bytes, m);
        const expected = m.call ?? this.index.nextExpected('model');
        if (expected) {
          const step = this.stepFor(expected);
          if (this.shouldStop(step)) return this.stop(step);
          this.diverge(step, {
            kind: 'different-request',
            expected: { step: expected.step, request: summaryOf(expected.view) },
            actual: summaryOf(viewOf(live)),
            fieldDiff: m.call ? m.fieldDiff : fieldDiffOf(expected, live),
            message: `Step ${step}: the model request differs from the recorded step ${expected.step}; served the recorded answer.`,
          });
          return this.serve(expected, raw, bytes, m, step);
        }
        return this.miss(raw, bytes, live, m, 'extra-call');
      }
      const m = this.index.match(live, { kind: 'model', maxLayer: 'normalised' });
      if (m.call) {
        const step = this.stepFor(m.call);
        if (this.shouldStop(step)) return this.stop(step);
        this.savedCost.calls++;
        const u = m.call.model?.usage;
        if (u) for (const k of Object.keys(u) as Array<keyof Usage>) this.savedCost.usage[k] += u[k];
        const usd = usageCost(u, m.call.model?.model ?? '', this.recording);
        this.savedCost.usd =
          usd === undefined || this.savedCost.usd === undefined ? undefined : this.savedCost.usd + usd;
        return this.serve(m.call, raw, bytes, m, step);
      }
      return this.goLive(raw, bytes, live, m);
    }
    const m = this.index.match(live, { kind: 'tool', allowReuse: true });
    if (m.call) {
      const step = this.stepFor(m.call);
      if (this.shouldStop(step)) return this.stop(step);
      if (prefix && (m.layer === 'structural' || m.reused || !this.inOrder(m.call))) {
        this.diverge(step, {
          kind: 'different-request',
          expected: { step: m.call.step, request: summaryOf(m.call.view) },
          actual: summaryOf(viewOf(live)),
          fieldDiff: m.fieldDiff,
          message: `Step ${step}: ${live.method} ${viewOf(live).path} matched recorded step ${m.call.step} only ${m.reused ? 'as a repeat' : m.layer === 'structural' ? 'structurally' : 'out of order'}; served it.`,
        });
      }
      return this.serve(m.call, raw, bytes, m, step);
    }
    return this.miss(raw, bytes, live, m, 'unmatched-request');
  }

  /**
   * Emits the recorded local steps (files, pg) skipped between the last step and `step`; the
   * changes the agent made meanwhile are attributed to the last of them.
   */
  fillGap(step: number): void {
    // Local steps ran for real in the sandbox; their structure is copied so step numbers align.
    const isCall = new Set(this.index.calls.map((c) => c.step));
    const gap = this.recording.events.filter(
      (e) =>
        e.stepId > this.lastStep &&
        e.stepId < step &&
        !isCall.has(e.stepId) &&
        (e.type === 'step.started' || e.type === 'tool.called' || e.type === 'step.completed'),
    );
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
    }
    this.flushPending(lastGap);
    this.lastStep = Math.max(this.lastStep, lastGap);
  }

  private beginStep(step: number, recordedStep: number | undefined): void {
    if (recordedStep !== undefined && step > this.lastStep + 1) this.fillGap(step);
    else this.flushPending(this.lastStep);
    this.lastStep = step;
    if (recordedStep !== undefined) this.stepMap.set(recordedStep, step);
  }

  private parentOf(call: RecordedCall | undefined): { parentStepId?: number } {
    if (!call || call.parentStepId === undefined) return {};
    return { parentStepId: this.stepMap.get(call.parentStepId) ?? call.parentStepId };
  }

  private async serve(
    call: RecordedCall,
    raw: LiveRequest,
    bytes: Buffer | undefined,
    _m: MatchResult,
    stepArg?: number,
  ): Promise<Reply> {
    const step = stepArg ?? this.stepFor(call);
    if (this.shouldStop(step)) return this.stop(step);
    const next = this.index.nextExpected();
    // A call issued before the next expected one keeps its (later) recorded step and does not move the replay's step on.
    const early = step === call.step && next !== undefined && next.index !== call.index && issuedEarly(call, next);
    // In-process tool calls live in their own index (marked by handleTool).
    if (call.exchange) this.index.markUsed(call);
    const started = new Date();
    if (early) this.stepMap.set(call.step, step);
    else this.beginStep(step, call.step);
    const parent = this.parentOf(call);
    const exchangeId = `r${++this.exchangeSeq}`;
    this.writer.append({
      type: 'step.started',
      stepId: step,
      ...parent,
      payload: { stateType: call.stateType, name: call.stepName },
    });
    if (call.model)
      this.writer.append({ type: 'model.called', stepId: step, ...parent, payload: { ...call.model, exchangeId } });
    if (call.tool)
      this.writer.append({ type: 'tool.called', stepId: step, ...parent, payload: { ...call.tool, exchangeId } });
    if (call.model?.output.text !== undefined && call.model.output.toolCalls.length === 0)
      this.finalOutput = call.model.output.text;

    const x = call.exchange;
    const response = x?.response;
    const responseBytes = response ? bodyBytesOf(this.recording, response.body) : undefined;
    const timing = this.options.timing ?? { kind: 'none' };
    const factor = timing.kind === 'none' ? 0 : timing.kind === 'scaled' ? timing.factor : 1;
    if (factor > 0 && x) await sleep((response?.chunks ? (x.ttfbMs ?? 0) : x.durationMs) * factor);

    // Effects follow their calls: the world changes recorded for this call reach the sandbox.
    const fsEffects: FsReport[] = [];
    if (call.kind === 'tool' && this.fsRoot) {
      for (const change of call.effects.fs) {
        const abs = path.join(this.fsRoot, change.path);
        if (change.op === 'delete' || !change.after) {
          fsEffects.push({ abs, gone: true });
          this.files.delete(change.path);
        } else {
          fsEffects.push({
            abs,
            mode: change.after.mode,
            b64: this.recording.readBlob(change.after.sha256).toString('base64'),
          });
          this.files.set(change.path, { ...change.after });
          this.writer.putBlob(this.recording.readBlob(change.after.sha256));
        }
        this.writer.append({ type: 'fs.changed', stepId: step, ...parent, payload: change });
      }
    }
    if (call.kind === 'tool' && call.effects.db.length > 0 && this.db) {
      await this.db.apply(call.effects.db);
      // What the sandbox's triggers saw, not a copy of the recording: equal when the effects replay faithfully.
      const applied = this.tracker ? await this.tracker.drain() : call.effects.db;
      for (const change of applied)
        this.writer.append({ type: 'db.changed', stepId: step, ...parent, payload: change });
    }

    if (x) {
      this.writer.append({
        type: 'http.exchange',
        stepId: step,
        ...parent,
        payload: {
          exchangeId,
          request: {
            method: raw.method,
            url: raw.url,
            headers: raw.headers,
            ...(bytes ? { body: this.writer.body(bytes, raw.headers['content-type']) } : {}),
          },
          ...(response
            ? {
                response: {
                  status: response.status,
                  ...(response.statusText !== undefined ? { statusText: response.statusText } : {}),
                  headers: response.headers,
                  ...(responseBytes ? { body: this.writer.body(responseBytes, response.headers['content-type']) } : {}),
                  ...(response.chunks ? { chunks: response.chunks } : {}),
                },
              }
            : {}),
          ...(x.error ? { error: x.error } : {}),
          startedAt: started.toISOString(),
          durationMs: Date.now() - started.getTime(),
          servedFrom: 'recording',
        },
      });
    }
    this.writer.append({
      type: 'step.completed',
      stepId: step,
      ...parent,
      payload: {
        status: x?.error || call.tool?.error ? 'error' : 'success',
        latencyMs: Date.now() - started.getTime(),
      },
    });
    this.served.recording++;
    this.progress(
      step,
      'served',
      `${call.stateType} ${call.stepName || call.request.url} from recorded step ${call.step}`,
    );
    // A stream the agent itself aborted (e.g. MCP's server-notification GET, closed at the end):
    // re-stream what had arrived and leave it open until the agent aborts it again.
    if (!x) return { effects: fsEffects };
    const abortedByAgent = x.error?.code === 'AbortError' && response?.chunks !== undefined;
    if (x.error && !abortedByAgent) return { effects: fsEffects, error: x.error };
    if (!response) return { effects: fsEffects, error: { code: 'ECONNRESET', message: 'recorded without a response' } };
    return {
      effects: fsEffects,
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
      ...(response.chunks ? { chunks: response.chunks } : { body: wireOf(responseBytes) }),
      ...(abortedByAgent ? { open: true } : {}),
      // A stream requested before steps it outlived (issued early) ends, as recorded, once the
      // replay has served the step before its own; ending it at once would make clients reconnect.
      ...(early && !abortedByAgent && response.chunks ? { open: true, closeAfterStep: call.step - 1 } : {}),
      step,
    };
  }

  private async miss(
    raw: LiveRequest,
    bytes: Buffer | undefined,
    live: LiveRequest,
    m: MatchResult,
    kind: 'unmatched-request' | 'extra-call',
  ): Promise<Reply> {
    const step = this.lastStep + 1;
    if (this.shouldStop(step)) return this.stop(step);
    this.beginStep(step, undefined);
    const view = viewOf(live);
    const mutating = !SAFE_METHODS.has(raw.method);
    const policy = this.policyFor(raw);
    const explanation = explainMiss(live, m);
    const body = live.bodyText === undefined ? undefined : parseJson(live.bodyText);
    // Every unmatched call is held back (never sent); `mutating` tells side effects from reads.
    const held = {
      method: raw.method,
      target: live.url,
      ...(body ? { body: body.ok ? body.value : live.bodyText } : {}),
    };
    const exchangeId = `r${++this.exchangeSeq}`;
    const name = `${raw.method} ${view.path}`;
    this.writer.append({ type: 'step.started', stepId: step, payload: { stateType: 'API_CALL', name } });
    this.writer.append({
      type: 'tool.called',
      stepId: step,
      payload: {
        exchangeId,
        kind: 'http',
        name,
        stateType: 'API_CALL',
        args: { query: view.query, body: view.body },
        error: { code: 'HELD_BACK', message: 'not in the recording; never sent' },
        mutating,
        latencyMs: 0,
      },
    });
    this.writer.append({
      type: 'http.exchange',
      stepId: step,
      payload: {
        exchangeId,
        request: {
          method: raw.method,
          url: raw.url,
          headers: raw.headers,
          ...(bytes ? { body: this.writer.body(bytes, raw.headers['content-type']) } : {}),
        },
        error: { code: 'HELD_BACK', message: explanation },
        startedAt: new Date().toISOString(),
        durationMs: 0,
        servedFrom: 'blocked',
      },
    });
    this.diverge(step, {
      kind,
      ...(m.nearest ? { expected: { step: m.nearest.step, request: summaryOf(m.nearest.view) } } : {}),
      actual: summaryOf(view),
      fieldDiff: m.fieldDiff,
      message: `Step ${step}: ${explanation} Policy: ${policy}.`,
      heldBack: held,
    });
    this.heldBack.push({ step, ...held, mutating });
    this.writer.append({
      type: 'step.completed',
      stepId: step,
      payload: { status: 'error', latencyMs: 0, errorType: 'HELD_BACK' },
    });
    this.served.blocked++;
    this.progress(step, 'held-back', `${raw.method} ${live.url}`);
    const message = `tapedeck replay: ${raw.method} ${live.url} is not in the recording and was not sent`;
    if (policy === 'fail') return { error: { code: 'ECONNREFUSED', message } };
    return {
      status: 503,
      statusText: 'Held back by tapedeck replay',
      headers: { 'content-type': 'application/json', 'x-tapedeck-held-back': '1' },
      body: wireOf(Buffer.from(JSON.stringify({ error: { code: 'HELD_BACK', type: 'tapedeck_held_back', message } }))),
    };
  }

  /**
   * The recorded model call a live one stands in for: the next recorded model call when the
   * requests are equal apart from the system prompt (which an override changes on purpose).
   */
  private alignedModelCall(live: LiveRequest): RecordedCall | undefined {
    const expected = this.index.nextExpected('model');
    if (!expected) return undefined;
    return canonical(withoutSystem(expected.view)) === canonical(withoutSystem(viewOf(live))) ? expected : undefined;
  }

  private async goLive(raw: LiveRequest, bytes: Buffer | undefined, live: LiveRequest, m: MatchResult): Promise<Reply> {
    const aligned = this.alignedModelCall(live);
    const step = this.stepFor(aligned);
    if (this.shouldStop(step)) return this.stop(step);
    const target = this.options.modelEndpoint ? retarget(raw.url, this.options.modelEndpoint) : raw.url;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(raw.headers)) {
      if (!['host', 'content-length', 'connection', 'accept-encoding', 'transfer-encoding'].includes(k.toLowerCase()))
        headers[k] = v;
    }
    const started = Date.now();
    let response: Response;
    try {
      response = await fetch(target, {
        method: raw.method,
        headers,
        ...(bytes && !SAFE_METHODS.has(raw.method) ? { body: new Uint8Array(bytes) } : {}),
      });
    } catch (error) {
      const message = `live model call to ${target} failed: ${(error as Error).message}`;
      this.beginStep(step, undefined);
      this.writer.append({ type: 'step.started', stepId: step, payload: { stateType: 'THINK', name: 'model' } });
      this.writer.append({
        type: 'http.exchange',
        stepId: step,
        payload: {
          exchangeId: `r${++this.exchangeSeq}`,
          request: {
            method: raw.method,
            url: target,
            headers: raw.headers,
            ...(bytes ? { body: this.writer.body(bytes) } : {}),
          },
          error: { code: 'LIVE_FAILED', message },
          startedAt: new Date(started).toISOString(),
          durationMs: Date.now() - started,
          servedFrom: 'live',
        },
      });
      this.writer.append({
        type: 'step.completed',
        stepId: step,
        payload: { status: 'error', latencyMs: Date.now() - started },
      });
      return { error: { code: 'ECONNREFUSED', message } };
    }
    const responseHeaders: Record<string, string> = {};
    response.headers.forEach((v, k) => {
      responseHeaders[k] = v;
    });
    const isStream = /text\/event-stream/i.test(response.headers.get('content-type') ?? '');
    let chunks: StreamChunk[] | undefined;
    let responseBytes: Buffer | undefined;
    let ttfb: number | undefined;
    if (isStream && response.body) {
      chunks = [];
      const decoder = new TextDecoder();
      const reader = response.body.getReader();
      const t0 = Date.now();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        ttfb ??= Date.now() - started;
        chunks.push({ offsetMs: Date.now() - t0, data: decoder.decode(value, { stream: true }) });
      }
      responseBytes = Buffer.from(chunks.map((c) => c.data).join(''), 'utf8');
    } else {
      responseBytes = Buffer.from(await response.arrayBuffer());
    }
    const durationMs = Date.now() - started;
    if (aligned) this.index.markUsed(aligned);
    this.beginStep(step, aligned?.step);
    const exchangeId = `r${++this.exchangeSeq}`;
    const decoded = this.decodeModel(raw, target, response.status, responseHeaders, responseBytes, chunks);
    const stateType = decoded && decoded.output.toolCalls.length === 0 ? 'FINALIZE' : 'THINK';
    this.writer.append({ type: 'step.started', stepId: step, payload: { stateType, name: decoded?.model ?? 'model' } });
    if (decoded) {
      this.writer.append({
        type: 'model.called',
        stepId: step,
        payload: { ...decoded, exchangeId, latencyMs: durationMs, ...(ttfb !== undefined ? { ttftMs: ttfb } : {}) },
      });
      if (decoded.output.toolCalls.length === 0 && decoded.output.text !== undefined)
        this.finalOutput = decoded.output.text;
    }
    this.writer.append({
      type: 'http.exchange',
      stepId: step,
      payload: {
        exchangeId,
        request: {
          method: raw.method,
          url: target,
          headers: raw.headers,
          ...(bytes ? { body: this.writer.body(bytes, raw.headers['content-type']) } : {}),
        },
        response: {
          status: response.status,
          statusText: response.statusText,
          headers: responseHeaders,
          ...(responseBytes.length > 0
            ? { body: this.writer.body(responseBytes, responseHeaders['content-type']) }
            : {}),
          ...(chunks ? { chunks } : {}),
        },
        startedAt: new Date(started).toISOString(),
        durationMs,
        ...(ttfb !== undefined ? { ttfbMs: ttfb } : {}),
        servedFrom: 'live',
      },
    });
    // A live model call that asked the same (bar the prompt) and decided the same keeps the run on
    // the recording; otherwise this is where the run leaves it.
    const outputOf = (o: ModelCalledPayload['output'] | undefined) =>
      canonical({ text: o?.text ?? '', tools: (o?.toolCalls ?? []).map((t) => [t.name, parseArgs(t.arguments)]) });
    if (aligned && decoded && aligned.model && outputOf(aligned.model.output) === outputOf(decoded.output)) {
      this.progress(step, 'live', `model answered as recorded at step ${aligned.step}`);
    } else if (aligned) {
      this.diverge(step, {
        kind: 'different-request',
        expected: { step: aligned.step, output: aligned.model?.output },
        actual: { output: decoded?.output },
        fieldDiff: fieldDiff(aligned.model?.output ?? {}, decoded?.output ?? {}).map((d) => ({
          ...d,
          path: `output.${d.path}`,
        })),
        message: `Step ${step}: the model decided differently from recorded step ${aligned.step} (live answer from ${new URL(target).origin}).`,
      });
    } else {
      const nearest = m.nearest;
      this.diverge(step, {
        kind: 'different-request',
        ...(nearest ? { expected: { step: nearest.step, request: summaryOf(nearest.view) } } : {}),
        actual: summaryOf(viewOf(live)),
        fieldDiff: m.fieldDiff,
        message: `Step ${step}: the model request is not in the recording${nearest ? ` (nearest: step ${nearest.step})` : ''}; sent it live to ${new URL(target).origin}.`,
      });
    }
    this.writer.append({
      type: 'step.completed',
      stepId: step,
      payload: { status: response.ok ? 'success' : 'error', latencyMs: durationMs },
    });
    this.served.live++;
    this.progress(step, 'live', `${raw.method} ${target} -> ${response.status}`);
    return {
      status: response.status,
      statusText: response.statusText,
      headers: responseHeaders,
      timing: { kind: 'none' },
      ...(chunks ? { chunks } : { body: wireOf(responseBytes) }),
    };
  }

  private decodeModel(
    raw: LiveRequest,
    url: string,
    status: number,
    headers: Record<string, string>,
    bytes: Buffer,
    chunks: StreamChunk[] | undefined,
  ): Omit<ModelCalledPayload, 'exchangeId' | 'latencyMs' | 'ttftMs'> | undefined {
    const json = parseJson(raw.bodyText);
    const request = {
      method: raw.method,
      url: new URL(url),
      headers: raw.headers,
      json: json.ok ? json.value : undefined,
    };
    const found = detectLlm(request);
    if (!found) return undefined;
    try {
      const body = parseJson(bytes.toString('utf8'));
      const { firstTokenOffsetMs: _ignored, ...decoded } = found.codec.decode(found.api, request, {
        status,
        headers,
        ...(chunks ? { chunks } : body.ok ? { json: body.value } : {}),
      });
      return decoded;
    } catch {
      return undefined;
    }
  }

  // ---------------------------------------------------------------- in-process tools

  private async handleTool(message: Record<string, unknown>): Promise<Reply> {
    const name = String(message.name ?? '');
    const args = message.args ?? null;
    const req = toolRequest(name, args);
    const live = this.redacted(req);
    const m = this.tools.match(live, { kind: 'tool', allowReuse: message.mutating !== true });
    if (m.call?.tool) {
      const step = this.stepFor(m.call);
      if (this.shouldStop(step)) return this.stop(step);
      this.tools.markUsed(m.call);
      const reply = await this.serve(m.call, req, undefined, m, step);
      const t = m.call.tool;
      let result: unknown = t.result;
      if (result === undefined && t.resultBody) {
        const text = bodyBytesOf(this.recording, t.resultBody)?.toString('utf8');
        const parsed = parseJson(text);
        result = parsed.ok ? parsed.value : text;
      }
      return { effects: reply.effects, ...(t.error ? { error: t.error } : { result }) };
    }
    const reply = await this.miss(req, Buffer.from(req.bodyText ?? ''), live, m, 'unmatched-request');
    if (reply.stop) return reply;
    return {
      error: {
        code: 'HELD_BACK',
        message: `tapedeck replay: tool ${name} with these arguments is not in the recording`,
      },
    };
  }

  // ---------------------------------------------------------------- fs reports

  /** Turns the preload's report of written paths into fs.changed events and the replay's file map. */
  takeFsReport(reports: FsReport[], step: number): void {
    if (!this.fsRoot || reports.length === 0) return;
    const root = this.fsRoot;
    const rel = (abs: string) => path.relative(root, abs).split(path.sep).join('/');
    const inside = (abs: string) => abs === root || abs.startsWith(root + path.sep);
    const seen = new Set<string>();
    const dirs: string[] = [];
    for (const r of reports) {
      if (!inside(r.abs)) continue;
      if (r.dir) {
        dirs.push(rel(r.abs).replace(/\/$/, ''));
        continue;
      }
      const p = rel(r.abs);
      if (r.gone) {
        for (const known of [...this.files.keys()]) {
          if (known === p || known.startsWith(`${p}/`) || p === '') this.deleteFile(known, step);
        }
        continue;
      }
      seen.add(p);
      const data = Buffer.from(r.b64 ?? '', 'base64');
      const entry = { mode: r.mode ?? 0o644, size: data.length, sha256: sha256(data) };
      const before = this.files.get(p);
      if (before && before.sha256 === entry.sha256 && before.mode === entry.mode) continue;
      this.writer.putBlob(data);
      this.files.set(p, entry);
      this.writer.append({
        type: 'fs.changed',
        stepId: step,
        payload: { path: p, op: before ? 'modify' : 'create', ...(before ? { before } : {}), after: entry },
      });
    }
    for (const d of dirs) {
      for (const known of [...this.files.keys()]) {
        if ((d === '' || known.startsWith(`${d}/`)) && !seen.has(known)) this.deleteFile(known, step);
      }
    }
  }

  private deleteFile(p: string, step: number): void {
    const before = this.files.get(p);
    if (!before) return;
    this.files.delete(p);
    this.writer.append({ type: 'fs.changed', stepId: step, payload: { path: p, op: 'delete', before } });
  }

  fsSnapshot(): FsSnapshot {
    const files: FsSnapshot['files'] = {};
    for (const p of [...this.files.keys()].sort()) files[p] = this.files.get(p) as FsSnapshot['files'][string];
    return { files };
  }

  /** The preload answered a call itself from the fast index (exact mode): record it as served. */
  private servedLocally(message: Record<string, unknown>): void {
    const next = this.queue.then(async () => {
      if (this.stopped) return;
      await this.collect(
        Array.isArray(message.fs) ? (message.fs as FsReport[]) : [],
        message.nd as NdBatch | undefined,
      );
      const call = this.index.calls[Number(message.i)];
      if (!call || this.index.isUsed(call)) return;
      const { raw, bytes } = this.liveRequest(message);
      await this.serve(call, raw, bytes, { reused: false, layers: [], fieldDiff: [] });
      this.flushPending(this.lastStep);
    });
    this.queue = next.catch(() => undefined);
  }

  notice(message: Record<string, unknown>): void {
    if (message.t === 'served') {
      this.servedLocally(message);
      return;
    }
    if (message.t === 'blocked') {
      const target = String(message.target);
      this.blockedConnections.push(target);
      this.diverge(this.lastStep, {
        kind: 'blocked-connection',
        actual: { target },
        message: `The agent tried to connect to ${target}; the network guard blocked it (only the sandbox database is reachable).`,
      });
    }
  }
}

/**
 * Steps are numbered by completion, so a call issued before `next` but completed after it (a
 * long-lived stream, such as the MCP server-notification GET) has a later step than its place in
 * request order: requested now, it is in order.
 */
function issuedEarly(call: RecordedCall, next: RecordedCall): boolean {
  if (!call.exchange || !next.exchange) return false;
  return call.step > next.step && Date.parse(call.exchange.startedAt) <= Date.parse(next.exchange.startedAt);
}

function parseArgs(text: string): unknown {
  const parsed = parseJson(text);
  return parsed.ok ? parsed.value : text;
}

/** A model request's view with its system prompt blanked, for comparing runs under a prompt override. */
function withoutSystem(view: RequestView): RequestView {
  if (!isModelApi(view.api) || view.body === null || typeof view.body !== 'object' || Array.isArray(view.body))
    return view;
  return { ...view, body: withSystemPrompt(view.api, view.body as Record<string, unknown>, '') };
}

function fieldDiffOf(expected: RecordedCall, live: LiveRequest): FieldDiff[] {
  const m = new CallIndex([expected]).match(live);
  return m.fieldDiff;
}

function defaultOut(id: string): string {
  return path.resolve('recordings', id);
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

/**
 * Replays a recording: the agent runs again in the sandbox and every call it makes is answered
 * from the recording (exact) or, for model calls that differ, live (counterfactual).
 * @example const r = await replay({ recording: 'recordings/examples/openai-baseline', mode: 'exact' });
 */
export async function replay(options: ReplayOptions): Promise<ReplayResult> {
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
  const recording = await loadRecording(options.recording);
  const manifest = recording.manifest;
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
  const calls = indexRecording(recording);
  // Fail on missing blobs now, before any sandbox exists.
  for (const c of calls) bodyBytesOf(recording, c.exchange?.response?.body);
  const cwd = options.cwd ?? (existsSync(manifest.agent.cwd) ? manifest.agent.cwd : process.cwd());
  const relocate = relocator(manifest.agent.cwd, cwd);
  const command = options.command ?? manifest.agent.command.map(relocate);
  if (command.length === 0)
    throw new TapedeckError('NO_COMMAND', 'The recording has no agent command; give one after --.');
  const redactor = createRedactor();
  const warnings: string[] = [...recording.warnings];
  if (redactor.keyId !== manifest.redaction.keyId) {
    warnings.push(
      `the redaction key (${redactor.keyId}) is not the one the recording was made with (${manifest.redaction.keyId}): requests carrying secrets will not match; set TAPEDECK_REDACTION_KEY to the recording's key`,
    );
  }
  const override: PromptOverride | undefined =
    options.systemPrompt !== undefined
      ? { kind: 'replace', text: options.systemPrompt }
      : options.promptPatch !== undefined
        ? { kind: 'patch', patch: options.promptPatch }
        : undefined;
  // The prompt an agent that reads its own prompt gets: the new one, or the recorded one patched.
  let promptForEnv: string | undefined;
  if (override) {
    const first = calls.find((c) => c.kind === 'model');
    const recorded =
      first?.model?.system ??
      (first
        ? systemPromptOf(
            first.view.api,
            parseJson(first.request.bodyText).ok ? JSON.parse(first.request.bodyText ?? '') : {},
          )
        : undefined);
    promptForEnv = applyOverride(recorded, override, 'the recorded system prompt');
    if (override.kind === 'patch') override.result = promptForEnv;
  }

  const fsRoot = manifest.world?.fsRoot;
  const seed = fsRoot ? fsSeed(recording.pre.fs, recording.readBlob, fsRoot) : undefined;
  const tmp = await mkdtemp(path.join(tmpdir(), 'tapedeck-replay-'));
  const cleanups: Array<() => Promise<void>> = [() => rm(tmp, { recursive: true, force: true })];
  let writer: RecordingWriter | undefined;
  let child: ChildProcess | undefined;
  try {
    let db: DbSandbox | undefined;
    if (recording.pre.db) {
      const kind = options.dbSandbox ?? (options.db ? 'template' : 'pglite');
      db = await openDbSandbox(recording.pre.db, { kind, ...(options.db ? { url: options.db } : {}) });
      const opened = db;
      cleanups.push(() => opened.close());
    }
    const id = replayId(manifest.id);
    const out = path.resolve(options.out ?? defaultOut(id));
    writer = await createRecordingWriter(out, {
      id: path.basename(out),
      name: `${manifest.name} (replay, ${options.mode})`,
      agent: { command, cwd, ...(manifest.agent.entry ? { entry: manifest.agent.entry } : {}) },
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
        },
      },
    });
    const w = writer;
    for (const entry of Object.values(recording.pre.fs?.files ?? {})) w.putBlob(recording.readBlob(entry.sha256));
    w.writeSnapshot('pre', recording.pre);

    let tracker: DbTracker | undefined;
    if (db && recording.pre.db) {
      const t = await createDbTracker(db.url, { schemas: recording.pre.db.schemas, id: 'replay' });
      cleanups.push(() => t.close());
      await t.start();
      tracker = t;
    }
    const session = new ReplaySession(
      recording,
      new CallIndex(calls),
      w,
      redactor,
      options,
      fsRoot,
      db,
      override,
      tracker,
      new CallIndex(indexRecording(recording, { inProcess: true })),
    );
    const socket = path.join(tmp, 'ipc.sock');
    const ipc = await listenIpc(
      socket,
      (message) => session.answer(message),
      (message) => session.notice(message),
    );
    cleanups.push(() => ipc.close());

    const seedFile = path.join(tmp, 'seed.json');
    await writeFile(seedFile, JSON.stringify(seed ?? { files: [] }));
    const nondeterminism: Record<string, Array<number | string>> = {};
    for (const e of recording.events) {
      if (e.type !== 'nondeterminism') continue;
      const list = (nondeterminism[e.payload.kind] ??= []);
      for (const v of e.payload.values) list.push(v);
    }
    // Exact mode: calls without effects are answered by the preload itself, in recorded order,
    // when the request is byte-for-byte the recorded one (host aside); it reports them after.
    const timingNone = (options.timing ?? { kind: 'none' }).kind === 'none';
    const fastIndex = path.join(tmp, 'fast.json');
    const fast = options.mode === 'exact' && !override && options.until === undefined && timingNone;
    if (fast) {
      const entries = calls.map((c) => {
        const x = c.exchange;
        const r = x?.response;
        // Recorded effects are applied only for tool calls (model steps' changes are the agent's own).
        const effects = c.kind === 'tool' && (c.effects.fs.length > 0 || c.effects.db.length > 0);
        if (!x || !r || x.error || effects) return { i: c.index, ask: true };
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
            ...(r.chunks ? { chunks: r.chunks } : { body: wireOf(bodyBytesOf(recording, r.body)) }),
          },
        };
      });
      await writeFile(fastIndex, JSON.stringify(entries));
    }
    const configFile = path.join(tmp, 'config.json');
    await writeFile(
      configFile,
      JSON.stringify({
        socket,
        // Without a recorded fs root the volume still takes every write, so none reaches the disk.
        fsRoot: fsRoot ?? path.join(tmp, 'no-fs-root'),
        seedFile,
        nondeterminism,
        seed: Number.parseInt(createHash('sha256').update(manifest.id).digest('hex').slice(0, 8), 16),
        allow: db ? [{ host: db.host, port: db.port }] : [],
        dumpPrefix: path.join(tmp, 'dump'),
        ...(fast ? { fastIndex } : {}),
        timing: options.timing ?? { kind: 'none' },
      }),
    );
    const promptFile = path.join(tmp, 'system-prompt.txt');
    if (promptForEnv !== undefined) await writeFile(promptFile, promptForEnv);
    // The recorded explicit env (minus redacted secrets: the caller's own values stand), then --env.
    const recordedEnv = Object.fromEntries(
      Object.entries(manifest.agent.env ?? {})
        .filter(([, v]) => !v.includes(PLACEHOLDER_PREFIX))
        .map(([k, v]) => [k, relocate(v)]),
    );
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      ...recordedEnv,
      ...options.env,
    };
    delete env.TAPEDECK_RECORD_IPC;
    env.TAPEDECK_REPLAY_CONFIG = configFile;
    env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --import ${pathToFileURL(REPLAY_PRELOAD).href}`.trim();
    if (db) env[manifest.world?.db?.env ?? 'DATABASE_URL'] = db.url;
    if (promptForEnv !== undefined) {
      env.SYSTEM_PROMPT = promptForEnv;
      env.TAPEDECK_SYSTEM_PROMPT = promptForEnv;
      env.SYSTEM_PROMPT_FILE = promptFile;
      env.TAPEDECK_SYSTEM_PROMPT_FILE = promptFile;
    }

    w.append({
      type: 'run.started',
      stepId: 0,
      payload: { command, cwd },
    });
    const stdio = options.stdio ?? 'inherit';
    const output = { stdout: '', stderr: '' };
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      const proc = spawn(command[0] as string, command.slice(1), { cwd, env, stdio: ['ignore', stdio, stdio] });
      child = proc;
      proc.stdout?.on('data', (d: Buffer) => {
        output.stdout += d.toString('utf8');
      });
      proc.stderr?.on('data', (d: Buffer) => {
        output.stderr += d.toString('utf8');
      });
      const timer = setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs ?? 600_000);
      timer.unref();
      proc.once('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(
          error.code === 'ENOENT'
            ? new TapedeckError(
                'COMMAND_NOT_FOUND',
                `Cannot run the agent: "${command[0]}" was not found (cwd ${cwd}).`,
              )
            : new TapedeckError('COMMAND_FAILED', `Cannot run the agent "${command.join(' ')}": ${error.message}`),
        );
      });
      proc.once('exit', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal });
      });
    });
    // Let answers still in flight settle, then take what the agent wrote last.
    // The agent's last messages may still be in the socket when it exits: read them first.
    await ipc.drained(2000);
    const finalFs: FsReport[] = [];
    const finalNd: NdBatch[] = [];
    for (const name of await readdir(tmp)) {
      if (!name.startsWith('dump.')) continue;
      const dump = JSON.parse(await readFile(path.join(tmp, name), 'utf8')) as {
        fs?: FsReport[];
        nd?: NdBatch;
        pending?: Array<Record<string, unknown>>;
      };
      for (const message of dump.pending ?? []) session.notice(message);
      if (dump.fs) finalFs.push(...dump.fs);
      if (dump.nd) finalNd.push(dump.nd);
    }
    await session.answer({ kind: 'noop' }).catch(() => undefined);
    await session.collect(finalFs);
    for (const batch of finalNd) await session.collect([], batch);
    const stoppedEarly = session.stopped;
    if (options.mode === 'exact' && !stoppedEarly) session.fillGap(Number.POSITIVE_INFINITY);
    else session.flushPending(session.lastStep);
    if (options.mode === 'exact' && !stoppedEarly) {
      for (const c of session.index.unused()) {
        session.writer.append({
          type: 'divergence',
          stepId: session.lastStep,
          payload: {
            kind: 'missing-call',
            expected: { step: c.step, request: summaryOf(c.view) },
            message: `Recorded step ${c.step} (${c.stateType} ${c.stepName || c.request.url}) was never requested in the replay.`,
          },
        });
        session.divergences.push({
          kind: 'missing-call',
          step: session.lastStep,
          expected: { step: c.step, request: summaryOf(c.view) },
          message: `Recorded step ${c.step} was never requested in the replay.`,
        });
      }
    }
    const post: { fs?: FsSnapshot; db?: DbSnapshot } = {};
    if (fsRoot) post.fs = session.fsSnapshot();
    if (tracker) post.db = await tracker.snapshot();
    w.writeSnapshot('post', post);
    let worldDir: string | undefined;
    let worldDb: string | undefined;
    if (stoppedEarly || options.until !== undefined) {
      worldDir = path.join(out, 'world');
      const readBlob = (s: string) => {
        try {
          return recording.readBlob(s);
        } catch {
          return readFileSyncBlob(out, s);
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
    w.append({
      type: 'run.completed',
      stepId: 0,
      payload: {
        status: failed ? 'failed' : 'complete',
        exitCode: stoppedEarly ? null : exit.code,
        ...(exit.signal ? { signal: exit.signal } : {}),
        ...(session.finalOutput !== undefined ? { finalOutput: session.finalOutput } : {}),
      },
    });
    await w.close(failed ? 'failed' : 'complete');
    const worldDiff =
      options.mode === 'exact' && !stoppedEarly && options.forkAt === undefined
        ? compareWorlds(recording.post, post)
        : undefined;
    const first = session.divergences.reduce<number | undefined>(
      (min, d) => (min === undefined || d.step < min ? d.step : min),
      undefined,
    );
    return {
      dir: out,
      id: w.id,
      status: failed ? 'failed' : 'complete',
      exitCode: exit.code,
      divergences: session.divergences,
      ...(first !== undefined ? { firstDivergentStep: first } : {}),
      heldBack: session.heldBack,
      served: session.served,
      savedCost: {
        calls: session.savedCost.calls,
        usage: session.savedCost.usage,
        ...(session.savedCost.usd !== undefined && session.savedCost.calls > 0 ? { usd: session.savedCost.usd } : {}),
      },
      blockedConnections: session.blockedConnections,
      ...(worldDiff ? { worldMatches: worldDiff.length === 0, worldDiff } : {}),
      ...(worldDir ? { worldDir } : {}),
      ...(worldDb ? { worldDb } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
      ...(stdio === 'pipe' ? { output } : {}),
    };
  } catch (error) {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    if (writer) {
      await writer.close('failed').catch(() => undefined);
      await rm(writer.dir, { recursive: true, force: true }).catch(() => undefined);
    }
    throw error;
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

function readFileSyncBlob(dir: string, sha: string): Buffer {
  // Blobs the replay itself stored (files the agent wrote) live in the new recording.
  return readFileSync(path.join(dir, blobRelativePath(sha)));
}
