// Adapters between the UI and the engines (recording, ledger, evaluate, replay, bisect). Each
// engine is imported lazily through its public index, typed; a failing engine shows its error in
// the panel instead of crashing the UI, and each answer is reduced to the small view model its
// panel draws.

import { basename, dirname, join } from 'node:path';
import type { BisectBeliefResult, BisectProgress, RunAlignment } from '../../src/bisect/index.js';
import type { TapedeckConfig } from '../../src/config/index.js';
import type { Evaluation } from '../../src/evaluate/index.js';
import type { Ledger } from '../../src/ledger/index.js';
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
import type { ReplayProgress as EngineReplayProgress } from '../../src/replay/index.js';
import { type Provenance, provenanceFromRow } from './provenance.js';

export type Available<T> = { ok: true; value: T } | { ok: false; reason: string };

export const ok = <T>(value: T): Available<T> => ({ ok: true, value });
export const unavailable = <T>(reason: string): Available<T> => ({ ok: false, reason });

/**
 * The engines, each imported when first used (the TUI starts without loading them), through its
 * folder's public index: the import is typed, and so is every answer read from it.
 */
const engines = {
  ledger: () => import('../../src/ledger/index.js'),
  evaluate: () => import('../../src/evaluate/index.js'),
  replay: () => import('../../src/replay/index.js'),
  bisect: () => import('../../src/bisect/index.js'),
};

function errorReason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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

/** The parts of a ledger the panels read. */
export type LedgerInput = Pick<Ledger, 'run' | 'steps' | 'context'>;

/** Reduces buildLedger's output (the seed's trace_run / trace_step / trace_context_breakdown rows). */
export function ledgerView(ledger: LedgerInput): LedgerView {
  const { run } = ledger;
  const byState = new Map<string, { cost: number; steps: number; tokens: number }>();
  const stepCost = new Map<number, number>();
  for (const s of ledger.steps) {
    stepCost.set(s.step_id, s.state_cost);
    const agg = byState.get(s.state_type) ?? { cost: 0, steps: 0, tokens: 0 };
    agg.cost += s.state_cost;
    agg.steps++;
    agg.tokens += s.total_tokens;
    byState.set(s.state_type, agg);
  }
  const provenance = new Map<number, Provenance>();
  for (const c of ledger.context) provenance.set(c.step_id, provenanceFromRow({ ...c }));
  const view: LedgerView = {
    currency: run.currency,
    totalCost: run.total_cost,
    llmCost: run.total_llm_cost,
    toolCost: run.total_tool_cost,
    inputTokens: run.total_input_tokens,
    cachedInputTokens: run.total_cached_input_tokens,
    outputTokens: run.total_output_tokens,
    costByState: [...byState.entries()]
      .map(([stateType, v]) => ({ stateType, ...v }))
      .sort((a, b) => b.cost - a.cost || a.stateType.localeCompare(b.stateType)),
    stepCost,
    provenance,
  };
  if (run.total_input_tokens > 0) view.cacheHitRatio = run.total_cached_input_tokens / run.total_input_tokens;
  if (run.main_cost_state !== null) view.mainCostState = run.main_cost_state;
  return view;
}

export async function ledgerOf(recording: Recording): Promise<Available<LedgerView>> {
  try {
    const { buildLedger } = await engines.ledger();
    return ok(ledgerView(buildLedger(recording, {})));
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

/** The parts of an evaluation the panel reads. */
export interface ScoreInput {
  task: Pick<Evaluation['task'], 'hardSuccess' | 'outcomeScore' | 'primaryFailureReasonCode' | 'failureReasonCodes'>;
  validators: Array<Pick<Evaluation['validators'][number], 'validatorName' | 'passed' | 'score' | 'diagnosticMessage'>>;
}

/** Reduces evaluateRecording's `{ task, validators }` (eval_task_result, eval_validator_result). */
export function scoreView(result: ScoreInput): ScoreView {
  const { task } = result;
  const view: ScoreView = {
    hardSuccess: task.hardSuccess,
    outcomeScore: task.outcomeScore,
    failureReasonCodes: task.failureReasonCodes,
    validators: result.validators.map((v) => ({
      name: v.validatorName,
      passed: v.passed,
      score: v.score,
      ...(v.diagnosticMessage ? { message: v.diagnosticMessage } : {}),
    })),
  };
  if (task.primaryFailureReasonCode) view.primaryFailureReasonCode = task.primaryFailureReasonCode;
  return view;
}

export async function scoreOf(recording: Recording, contractFile: string | undefined): Promise<Available<ScoreView>> {
  if (!contractFile) return unavailable('no eval contract (pass --contract FILE)');
  try {
    const { evaluateRecording, loadContract } = await engines.evaluate();
    const contract = await loadContract(contractFile);
    return ok(scoreView(evaluateRecording(recording, contract, {})));
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

/** Turns the replayer's progress report into one line. */
export function progressOf(p: EngineReplayProgress, total: number | undefined): ReplayProgress {
  const out: ReplayProgress = {
    text: [`step ${p.step}`, p.action, p.detail].filter(Boolean).join(' · '),
    step: p.step,
  };
  if (total !== undefined) out.total = total;
  return out;
}

export interface ReplayRequest {
  baseline: Recording;
  systemPrompt: string;
  /** In a run of several agents: the recorded prompt of the agent whose prompt changes. */
  promptFor?: string;
  modelEndpoint?: string;
  /** The project config's answer chain for calls the recording cannot serve. */
  config?: TapedeckConfig;
  /** The replay recording's directory (default: next to the baseline, `<id>-replay-<time>`). */
  out?: string;
  /** Replays run the recorded command and env of recordings this machine did not seal (--trust-recording). */
  trustRecording?: boolean;
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
  /**
   * What the replayer said before the agent ran (an SDK at another version than recorded, Node's
   * major version, another redaction key, an env left out): a likely cause of a divergence.
   */
  warnings?: string[];
}

export async function runReplay(request: ReplayRequest, totalSteps?: number): Promise<Available<ReplayOutcome>> {
  try {
    const { replay } = await engines.replay();
    const result = await replay({
      recording: request.baseline.dir,
      mode: 'counterfactual',
      systemPrompt: request.systemPrompt,
      ...(request.promptFor !== undefined ? { promptFor: request.promptFor } : {}),
      onProgress: (p) => request.onProgress(progressOf(p, totalSteps)),
      // The agent's own output would draw over the UI.
      stdio: 'pipe',
      out:
        request.out ??
        join(dirname(request.baseline.dir), `${basename(request.baseline.dir)}-replay-${Date.now().toString(36)}`),
      ...(request.modelEndpoint ? { modelEndpoint: request.modelEndpoint } : {}),
      ...(request.config ? { config: request.config } : {}),
      ...(request.trustRecording ? { trustRecording: true } : {}),
    });
    return ok({
      dir: result.dir,
      divergences: result.divergences,
      recording: await readRecordingAt(result.dir),
      status: result.status,
      exitCode: result.exitCode,
      heldBack: result.heldBack.length,
      ...(result.warnings && result.warnings.length > 0 ? { warnings: result.warnings } : {}),
    });
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
export function alignmentView(result: Pick<RunAlignment, 'ops' | 'firstDivergence'>): AlignmentView {
  const pairs = result.ops.map((op) => {
    const pair: AlignmentView['pairs'][number] = { same: op.op === 'match' };
    if ('a' in op) pair.baseline = op.a.step;
    if ('b' in op) pair.replay = op.b.step;
    return pair;
  });
  const view: AlignmentView = { pairs };
  const first = result.firstDivergence;
  if (first) {
    const fd: NonNullable<AlignmentView['firstDivergence']> = { kind: first.kind.replace(/-/g, ' ') };
    if (first.stepA !== undefined) fd.baseline = first.stepA;
    if (first.stepB !== undefined) fd.replay = first.stepB;
    view.firstDivergence = fd;
  }
  return view;
}

export async function alignOf(baseline: Recording, replay: Recording): Promise<Available<AlignmentView>> {
  try {
    const { alignRuns } = await engines.bisect();
    return ok(alignmentView(alignRuns(baseline, replay)));
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
export function probeOf(p: Pick<BisectProgress, 'step' | 'verdict' | 'good' | 'bad'>): BisectProbe {
  const probe: BisectProbe = { step: p.step, verdict: p.verdict, lo: p.good };
  if (p.bad !== undefined) probe.hi = p.bad;
  return probe;
}

/** The parts of a BisectBeliefResult the panel reads. */
export type BisectInput = Pick<BisectBeliefResult, 'firstBad' | 'path' | 'candidates' | 'evaluations'>;

/** Reduces a BisectBeliefResult: the first bad step and why, and the path when progress was not seen. */
export function bisectView(result: BisectInput, probes: BisectProbe[]): BisectView {
  const first = result.firstBad;
  let message: string;
  if (first === undefined) {
    message =
      result.candidates.length > 0
        ? `skipped steps hide the boundary: one of ${result.candidates.join(', ')}`
        : 'no step where belief and world part';
  } else {
    message = [first.stateType, first.action, first.reason ? `— ${first.reason}` : ''].filter(Boolean).join(' ');
  }
  const path = result.path.map((p): BisectProbe => ({ step: p.step, verdict: p.verdict }));
  const view: BisectView = { probes: probes.length > 0 ? probes : path, message, evaluations: result.evaluations };
  if (first !== undefined) view.firstBad = first.step;
  return view;
}

export async function runBisect(
  recording: Recording,
  onProbe: (p: BisectProbe) => void,
): Promise<Available<BisectView>> {
  const probes: BisectProbe[] = [];
  try {
    const { bisectBelief, builtinPredicate } = await engines.bisect();
    const result = await bisectBelief(recording, builtinPredicate('all'), {
      onProgress: (p) => {
        const probe = probeOf(p);
        probes.push(probe);
        onProbe(probe);
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
  /** Replays run the recorded command and env of recordings this machine did not seal (--trust-recording). */
  trustRecording?: boolean;
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
          ...(options.trustRecording ? { trustRecording: true } : {}),
          ...request,
        },
        total,
      ),
    align: alignOf,
    bisect: runBisect,
  };
}
