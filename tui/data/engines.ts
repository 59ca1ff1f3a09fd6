// Adapters between the UI and the engines (recording, ledger, evaluate, replay, bisect). Each
// engine is imported lazily, so a missing engine shows "not available yet" instead of crashing,
// and each answer is reduced to the small view model its panel draws.

import { basename, dirname, join } from 'node:path';
import type { TapedeckConfig } from '../../src/config/index.js';
import {
  type DbSnapshot,
  type DivergencePayload,
  type FsSnapshot,
  listRecordings,
  type Manifest,
  type Recording,
  readRecording,
  worldAt,
} from '../../src/recording/index.js';
import { type Provenance, provenanceFromRow } from './provenance.js';

export type Available<T> = { ok: true; value: T } | { ok: false; reason: string };

export const ok = <T>(value: T): Available<T> => ({ ok: true, value });
export const unavailable = <T>(reason: string): Available<T> => ({ ok: false, reason });

type Module = Record<string, unknown>;
type Fn = (...args: unknown[]) => unknown;

const moduleCache = new Map<string, Promise<Available<Module>>>();

/** Imports an engine's index and checks it exports `names`; a missing module or export is "not available yet". */
export function loadEngine(spec: string, names: string[]): Promise<Available<Module>> {
  const key = `${spec}#${names.join(',')}`;
  let cached = moduleCache.get(key);
  if (!cached) {
    cached = (async () => {
      try {
        const mod = (await import(spec)) as Module;
        const missing = names.filter((n) => typeof mod[n] !== 'function');
        if (missing.length > 0) return unavailable<Module>(`not available yet (${missing.join(', ')} missing)`);
        return ok(mod);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ERR_MODULE_NOT_FOUND' || /Cannot find module|Failed to load url/.test(String(error))) {
          return unavailable<Module>('not available yet');
        }
        return unavailable<Module>(`failed to load: ${(error as Error).message}`);
      }
    })();
    moduleCache.set(key, cached);
  }
  return cached;
}

const LEDGER = '../../src/ledger/index.js';
const EVALUATE = '../../src/evaluate/index.js';
const REPLAY = '../../src/replay/index.js';
const BISECT = '../../src/bisect/index.js';

function fn(mod: Module, name: string): Fn {
  return mod[name] as Fn;
}

function errorReason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Reads a field by its seed (snake_case) name or its camelCase twin. */
export function field(obj: unknown, snake: string): unknown {
  if (!obj || typeof obj !== 'object') return undefined;
  const o = obj as Record<string, unknown>;
  if (snake in o) return o[snake];
  const camel = snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  return o[camel];
}

function num(value: unknown): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

// ---------------------------------------------------------------- recordings

export interface RecordingSummary {
  dir: string;
  manifest: Manifest;
}

export function listRecordingsIn(root: string): Promise<RecordingSummary[]> {
  return listRecordings(root);
}

export function readRecordingAt(dir: string): Promise<Recording> {
  return readRecording(dir);
}

export interface WorldSummary {
  step: number;
  files: number;
  bytes: number;
  tables: Array<{ name: string; rows: number }>;
}

export function summarizeWorld(step: number, world: { fs?: FsSnapshot; db?: DbSnapshot }): WorldSummary {
  const entries = Object.values(world.fs?.files ?? {});
  return {
    step,
    files: entries.length,
    bytes: entries.reduce((sum, e) => sum + e.size, 0),
    tables: (world.db?.tables ?? []).map((t) => ({ name: `${t.schema}.${t.name}`, rows: t.rows.length })),
  };
}

/** The world (fs + db) as it was after `step`, summarised. */
export async function worldSummaryAt(recording: Recording, step: number): Promise<Available<WorldSummary>> {
  try {
    return ok(summarizeWorld(step, worldAt(recording, step)));
  } catch (error) {
    return unavailable(errorReason(error));
  }
}

// ---------------------------------------------------------------- ledger

export interface LedgerView {
  currency: string;
  totalCost?: number;
  llmCost?: number;
  toolCost?: number;
  inputTokens?: number;
  cachedInputTokens?: number;
  outputTokens?: number;
  /** cached input / total input. */
  cacheHitRatio?: number;
  mainCostState?: string;
  costByState: Array<{ stateType: string; cost: number; steps: number; tokens: number }>;
  stepCost: Map<number, number>;
  provenance: Map<number, Provenance>;
}

/** Reduces buildLedger's output (the seed's trace_run / trace_step / trace_context_breakdown rows). */
export function ledgerView(ledger: unknown): LedgerView {
  const run = field(ledger, 'run');
  const steps = (field(ledger, 'steps') as unknown[] | undefined) ?? [];
  const context = (field(ledger, 'context') as unknown[] | undefined) ?? [];
  const byState = new Map<string, { cost: number; steps: number; tokens: number }>();
  const stepCost = new Map<number, number>();
  let input = 0;
  let cached = 0;
  for (const s of steps) {
    const stepId = num(field(s, 'step_id'));
    const cost = num(field(s, 'state_cost')) ?? (num(field(s, 'llm_cost')) ?? 0) + (num(field(s, 'tool_cost')) ?? 0);
    const state = String(field(s, 'state_type') ?? '?');
    const tokens = num(field(s, 'total_tokens')) ?? 0;
    input += num(field(s, 'input_tokens_total')) ?? 0;
    cached += num(field(s, 'input_tokens_cached')) ?? 0;
    if (stepId !== undefined) stepCost.set(stepId, cost);
    const agg = byState.get(state) ?? { cost: 0, steps: 0, tokens: 0 };
    agg.cost += cost;
    agg.steps++;
    agg.tokens += tokens;
    byState.set(state, agg);
  }
  const provenance = new Map<number, Provenance>();
  for (const c of context) {
    const stepId = num(field(c, 'step_id'));
    if (stepId !== undefined && c && typeof c === 'object')
      provenance.set(stepId, provenanceFromRow(c as Record<string, unknown>));
  }
  const totalInput = num(field(run, 'total_input_tokens')) ?? input;
  const totalCached = num(field(run, 'total_cached_input_tokens')) ?? cached;
  const view: LedgerView = {
    currency: String(field(run, 'currency') ?? 'USD'),
    costByState: [...byState.entries()]
      .map(([stateType, v]) => ({ stateType, ...v }))
      .sort((a, b) => b.cost - a.cost || a.stateType.localeCompare(b.stateType)),
    stepCost,
    provenance,
  };
  const set = <K extends keyof LedgerView>(key: K, value: LedgerView[K] | undefined) => {
    if (value !== undefined) view[key] = value;
  };
  set('totalCost', num(field(run, 'total_cost')));
  set('llmCost', num(field(run, 'total_llm_cost')));
  set('toolCost', num(field(run, 'total_tool_cost')));
  set('inputTokens', totalInput);
  set('cachedInputTokens', totalCached);
  set('outputTokens', num(field(run, 'total_output_tokens')));
  set('cacheHitRatio', totalInput > 0 ? totalCached / totalInput : undefined);
  const main = field(run, 'main_cost_state');
  if (typeof main === 'string') view.mainCostState = main;
  return view;
}

export async function ledgerOf(recording: Recording): Promise<Available<LedgerView>> {
  const mod = await loadEngine(LEDGER, ['buildLedger']);
  if (!mod.ok) return unavailable(`ledger ${mod.reason}`);
  try {
    return ok(ledgerView(await fn(mod.value, 'buildLedger')(recording, {})));
  } catch (error) {
    return unavailable(`ledger failed: ${errorReason(error)}`);
  }
}

// ---------------------------------------------------------------- scores

export interface ScoreView {
  hardSuccess: boolean;
  outcomeScore?: number;
  primaryFailureReasonCode?: string;
  failureReasonCodes: string[];
  validators: Array<{ name: string; passed: boolean; score?: number; message?: string }>;
}

function codes(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value === 'string' && value.startsWith('[')) {
    try {
      return (JSON.parse(value) as unknown[]).map(String);
    } catch {
      return [value];
    }
  }
  return typeof value === 'string' && value ? [value] : [];
}

/** Reduces evaluateRecording's `{ task, validators }` (eval_task_result, eval_validator_result). */
export function scoreView(result: unknown): ScoreView {
  const task = field(result, 'task');
  const validators = (field(result, 'validators') as unknown[] | undefined) ?? [];
  const view: ScoreView = {
    hardSuccess: field(task, 'hard_success') === true,
    failureReasonCodes: codes(field(task, 'failure_reason_codes')),
    validators: validators.map((v) => {
      const out: ScoreView['validators'][number] = {
        name: String(field(v, 'validator_name') ?? field(v, 'name') ?? '?'),
        passed: field(v, 'passed') === true,
      };
      const score = num(field(v, 'score'));
      if (score !== undefined) out.score = score;
      const message = field(v, 'diagnostic_message');
      if (typeof message === 'string' && message) out.message = message;
      return out;
    }),
  };
  const score = num(field(task, 'outcome_score'));
  if (score !== undefined) view.outcomeScore = score;
  const primary = field(task, 'primary_failure_reason_code');
  if (typeof primary === 'string' && primary) view.primaryFailureReasonCode = primary;
  return view;
}

export async function scoreOf(recording: Recording, contractFile: string | undefined): Promise<Available<ScoreView>> {
  if (!contractFile) return unavailable('no eval contract (pass --contract FILE)');
  const mod = await loadEngine(EVALUATE, ['loadContract', 'evaluateRecording']);
  if (!mod.ok) return unavailable(`scoring ${mod.reason}`);
  try {
    const contract = await fn(mod.value, 'loadContract')(contractFile);
    return ok(scoreView(await fn(mod.value, 'evaluateRecording')(recording, contract, {})));
  } catch (error) {
    return unavailable(`scoring failed: ${errorReason(error)}`);
  }
}

// ---------------------------------------------------------------- replay

export interface ReplayProgress {
  /** One line describing where the replay is. */
  text: string;
  step?: number;
  total?: number;
}

/** Turns whatever the replayer reports into one line of progress. */
export function progressOf(p: unknown, total: number | undefined): ReplayProgress {
  const step = num(field(p, 'step')) ?? num(field(p, 'step_id'));
  const reportedTotal = num(field(p, 'total')) ?? total;
  const phase = field(p, 'action') ?? field(p, 'phase') ?? field(p, 'type');
  const detail = field(p, 'detail') ?? field(p, 'message');
  const text = [
    step !== undefined ? `step ${step}` : '',
    typeof phase === 'string' ? phase : '',
    typeof detail === 'string' ? detail : '',
  ]
    .filter(Boolean)
    .join(' · ');
  const out: ReplayProgress = { text: text || 'working' };
  if (step !== undefined) out.step = step;
  if (reportedTotal !== undefined) out.total = reportedTotal;
  return out;
}

export interface ReplayRequest {
  baseline: Recording;
  systemPrompt: string;
  modelEndpoint?: string;
  /** The project config's answer chain for calls the recording cannot serve. */
  config?: TapedeckConfig;
  /** The replay recording's directory (default: next to the baseline, `<id>-replay-<time>`). */
  out?: string;
  onProgress(p: ReplayProgress): void;
}

export interface ReplayOutcome {
  dir: string;
  divergences: DivergencePayload[];
  recording: Recording;
  /** complete | failed, and the agent's exit code, as the replayer reports them. */
  status?: string;
  exitCode?: number | null;
  /** Side effects the replay did not perform (unmatched mutating calls). */
  heldBack?: number;
}

export async function runReplay(request: ReplayRequest, totalSteps?: number): Promise<Available<ReplayOutcome>> {
  const mod = await loadEngine(REPLAY, ['replay']);
  if (!mod.ok) return unavailable(`replay ${mod.reason}`);
  try {
    const options: Record<string, unknown> = {
      recording: request.baseline.dir,
      mode: 'counterfactual',
      systemPrompt: request.systemPrompt,
      onProgress: (p: unknown) => request.onProgress(progressOf(p, totalSteps)),
      // The agent's own output would draw over the UI.
      stdio: 'pipe',
      out:
        request.out ??
        join(dirname(request.baseline.dir), `${basename(request.baseline.dir)}-replay-${Date.now().toString(36)}`),
    };
    if (request.modelEndpoint) options.modelEndpoint = request.modelEndpoint;
    if (request.config) options.config = request.config;
    const result = (await fn(mod.value, 'replay')(options)) as {
      dir: string;
      divergences?: DivergencePayload[];
      status?: string;
      exitCode?: number | null;
      heldBack?: unknown[];
    };
    const recording = await readRecordingAt(result.dir);
    const outcome: ReplayOutcome = { dir: result.dir, divergences: result.divergences ?? [], recording };
    if (result.status !== undefined) outcome.status = result.status;
    if (result.exitCode !== undefined) outcome.exitCode = result.exitCode;
    if (Array.isArray(result.heldBack)) outcome.heldBack = result.heldBack.length;
    return ok(outcome);
  } catch (error) {
    return unavailable(`replay failed: ${errorReason(error)}`);
  }
}

// ---------------------------------------------------------------- alignment and bisect

export interface AlignmentView {
  /** Aligned pairs of step ids (baseline, replay); one side is missing for an extra/missing step. */
  pairs: Array<{ baseline?: number; replay?: number; same: boolean }>;
  firstDivergence?: { baseline?: number; replay?: number; kind: string };
}

/** Reduces alignRuns' RunAlignment: its ops become step pairs; firstDivergence names the steps. */
export function alignmentView(result: unknown): AlignmentView {
  const ops = (field(result, 'ops') as unknown[] | undefined) ?? [];
  const pairs = ops.map((op) => {
    const pair: AlignmentView['pairs'][number] = { same: field(op, 'op') === 'match' };
    const a = num(field(field(op, 'a'), 'step'));
    const b = num(field(field(op, 'b'), 'step'));
    if (a !== undefined) pair.baseline = a;
    if (b !== undefined) pair.replay = b;
    return pair;
  });
  const view: AlignmentView = { pairs };
  const first = field(result, 'firstDivergence');
  if (first && typeof first === 'object') {
    const fd: NonNullable<AlignmentView['firstDivergence']> = {
      kind: String(field(first, 'kind') ?? 'divergence').replace(/-/g, ' '),
    };
    const a = num(field(first, 'stepA'));
    const b = num(field(first, 'stepB'));
    if (a !== undefined) fd.baseline = a;
    if (b !== undefined) fd.replay = b;
    view.firstDivergence = fd;
  }
  return view;
}

export async function alignOf(baseline: Recording, replay: Recording): Promise<Available<AlignmentView>> {
  const mod = await loadEngine(BISECT, ['alignRuns']);
  if (!mod.ok) return unavailable(`alignment ${mod.reason}`);
  try {
    return ok(alignmentView(await fn(mod.value, 'alignRuns')(baseline, replay)));
  } catch (error) {
    return unavailable(`alignment failed: ${errorReason(error)}`);
  }
}

export interface BisectProbe {
  step: number;
  verdict: string;
  lo?: number;
  hi?: number;
}

export interface BisectView {
  firstBad?: number;
  probes: BisectProbe[];
  message: string;
  evaluations?: number;
}

/** Reads bisectBelief's progress: the step probed, its verdict, and the range still in play (good, bad]. */
export function probeOf(p: unknown): BisectProbe | undefined {
  const step = num(field(p, 'step'));
  if (step === undefined) return undefined;
  const probe: BisectProbe = { step, verdict: String(field(p, 'verdict') ?? '…') };
  const lo = num(field(p, 'good'));
  const hi = num(field(p, 'bad'));
  if (lo !== undefined) probe.lo = lo;
  if (hi !== undefined) probe.hi = hi;
  return probe;
}

/** Reduces a BisectBeliefResult: the first bad step and why, and the path when progress was not seen. */
export function bisectView(result: unknown, probes: BisectProbe[]): BisectView {
  const first = field(result, 'firstBad');
  const firstBad = num(field(first, 'step'));
  const path = field(result, 'path');
  const known = Array.isArray(path) ? (path.map(probeOf).filter(Boolean) as BisectProbe[]) : [];
  let message: string;
  if (firstBad === undefined) {
    const candidates = field(result, 'candidates');
    message =
      Array.isArray(candidates) && candidates.length > 0
        ? `skipped steps hide the boundary: one of ${candidates.join(', ')}`
        : 'no step where belief and world part';
  } else {
    const what = typeof field(first, 'stateType') === 'string' ? String(field(first, 'stateType')) : '';
    const action = field(first, 'action');
    const reason = field(first, 'reason');
    message = [what, typeof action === 'string' ? action : '', typeof reason === 'string' ? `— ${reason}` : '']
      .filter(Boolean)
      .join(' ');
  }
  const view: BisectView = { probes: probes.length > 0 ? probes : known, message };
  if (firstBad !== undefined) view.firstBad = firstBad;
  const evaluations = num(field(result, 'evaluations'));
  if (evaluations !== undefined) view.evaluations = evaluations;
  return view;
}

export async function runBisect(
  recording: Recording,
  onProbe: (p: BisectProbe) => void,
): Promise<Available<BisectView>> {
  const mod = await loadEngine(BISECT, ['bisectBelief', 'builtinPredicate']);
  if (!mod.ok) return unavailable(`bisect ${mod.reason}`);
  const probes: BisectProbe[] = [];
  try {
    const predicate = fn(mod.value, 'builtinPredicate')('all');
    const result = await fn(mod.value, 'bisectBelief')(recording, predicate, {
      onProgress: (p: unknown) => {
        const probe = probeOf(p);
        if (probe) {
          probes.push(probe);
          onProbe(probe);
        }
      },
    });
    return ok(bisectView(result, probes));
  } catch (error) {
    return unavailable(`bisect failed: ${errorReason(error)}`);
  }
}

// ---------------------------------------------------------------- the bundle the app takes

/** What the app needs from the outside world; tests pass the same functions. */
export interface TuiServices {
  listRecordings(root: string): Promise<RecordingSummary[]>;
  readRecording(dir: string): Promise<Recording>;
  worldAt(recording: Recording, step: number): Promise<Available<WorldSummary>>;
  ledger(recording: Recording): Promise<Available<LedgerView>>;
  score(recording: Recording): Promise<Available<ScoreView>>;
  replay(request: ReplayRequest, totalSteps?: number): Promise<Available<ReplayOutcome>>;
  align(baseline: Recording, replay: Recording): Promise<Available<AlignmentView>>;
  bisect(recording: Recording, onProbe: (p: BisectProbe) => void): Promise<Available<BisectView>>;
}

export interface ServiceOptions {
  contract?: string;
  modelEndpoint?: string;
  /** The project config's answer chain (sandbox services, mocks, simulator) for the replays. */
  config?: TapedeckConfig;
}

export function defaultServices(options: ServiceOptions = {}): TuiServices {
  return {
    listRecordings: listRecordingsIn,
    readRecording: readRecordingAt,
    worldAt: worldSummaryAt,
    ledger: ledgerOf,
    score: (recording) => scoreOf(recording, options.contract),
    replay: (request, total) =>
      runReplay(
        {
          ...(options.modelEndpoint ? { modelEndpoint: options.modelEndpoint } : {}),
          ...(options.config ? { config: options.config } : {}),
          ...request,
        },
        total,
      ),
    align: alignOf,
    bisect: runBisect,
  };
}
