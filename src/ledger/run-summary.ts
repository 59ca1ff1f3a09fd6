// The run from its steps: totals and by-state summaries, the derived metrics (Part VII), input cost by
// context source, the replay's costs, the seed's trace_run and trace_price_snapshot rows, and the
// cost profile (§24).
import type { Manifest, PriceEntry } from '../recording/types.js';
import { addCost, addServerToolCosts, type LlmCost, roundMoney, type ServerToolCost, ZERO_COST } from './cost.js';
import {
  cacheHitRatio,
  type DerivedMetrics,
  inputAmplification,
  refinementEfficiency,
  retrievalCompression,
  stateCostShare,
  toolContextRatio,
  validationRepairRate,
} from './metrics.js';
import { buildCostProfile, mainCostSources } from './profile.js';
import { CONTEXT_SOURCES, type ContextSource, type ContextTokens } from './provenance.js';
import { type StepAcc, type StepIndex, stateTypeOf } from './step-index.js';
import { addBuckets, seedView, type TokenBuckets, totalTokens, ZERO_BUCKETS } from './tokens.js';
import type {
  Ledger,
  ReplayCost,
  StateSummary,
  StepLedger,
  TracePriceSnapshotRow,
  TraceStepRow,
  TraceToolEventRow,
} from './types.js';

export interface RunInput {
  traceId: string;
  manifest: Manifest;
  /** trace_run.task_id (default: the recording's name). */
  taskId?: string;
  currency: string;
  priceVersion: string;
  index: StepIndex;
  detail: StepLedger[];
  stepRows: TraceStepRow[];
  toolRows: TraceToolEventRow[];
  /** The price entries the steps were costed at, by model. */
  usedPrices: Map<string, PriceEntry>;
}

export type RunSummary = Pick<
  Ledger,
  'run' | 'prices' | 'totals' | 'byState' | 'mainCostSources' | 'metrics' | 'costProfile' | 'replay'
>;

/** Sums the steps of a ledger into the run's rows, metrics and profile. */
export function summarizeRun(input: RunInput): RunSummary {
  const { traceId, manifest, currency, detail, stepRows, toolRows, usedPrices } = input;
  const { steps, ordered, runStart, runEnd } = input.index;
  const createdAt = manifest.createdAt;
  const isReplay = manifest.replayOf !== undefined;
  // Totals and by-state summaries.
  const totalsTokens: TokenBuckets = { ...ZERO_BUCKETS };
  const totalsLlm: LlmCost = { ...ZERO_COST };
  let toolCost = 0;
  const serverTools: ServerToolCost[] = [];
  let computeCost = 0;
  const byState: Record<string, StateSummary> = {};
  for (const s of detail) {
    addBuckets(totalsTokens, s.tokens);
    addCost(totalsLlm, s.llm);
    toolCost += s.toolCost;
    addServerToolCosts(serverTools, s.serverTools);
    computeCost += s.computeCost;
    const sum = (byState[s.stateType] ??= {
      steps: 0,
      tokens: { ...ZERO_BUCKETS },
      totalTokens: 0,
      llmCost: 0,
      toolCost: 0,
      computeCost: 0,
      cost: 0,
      latencyMs: 0,
      share: null,
    });
    sum.steps++;
    addBuckets(sum.tokens, s.tokens);
    sum.totalTokens += totalTokens(s.tokens);
    sum.llmCost += s.llm.total;
    sum.toolCost += s.toolCost;
    sum.computeCost += s.computeCost;
    sum.cost += s.cost;
    sum.latencyMs += s.latencyMs ?? 0;
  }
  const totalCost = totalsLlm.total + toolCost + computeCost;
  for (const sum of Object.values(byState)) sum.share = stateCostShare(sum.cost, totalCost);
  const main = mainCostSources(Object.fromEntries(Object.entries(byState).map(([k, v]) => [k, v.cost])));
  const totalsSeed = seedView(totalsTokens);

  // Derived metrics.
  const firstContext = detail.find((s) => s.context)?.context;
  const userInstructionTokens = firstContext ? firstContext.user_instruction : null;
  let sentSum = 0;
  let rawSum = 0;
  let retrievalSent = 0;
  let retrievalRaw = 0;
  for (const row of toolRows) {
    sentSum += row.tokens_sent_to_next_llm;
    rawSum += row.response_tokens_raw;
    if (steps.get(row.step_id) && stateTypeOf(steps.get(row.step_id) as StepAcc) === 'RETRIEVE') {
      retrievalSent += row.tokens_sent_to_next_llm;
      retrievalRaw += row.response_tokens_raw;
    }
  }
  let issuesFound = 0;
  let issuesFixed = 0;
  let modifiedTokens = 0;
  let hasModified = false;
  let refineOutput = 0;
  for (const acc of ordered) {
    for (const v of acc.validators) {
      issuesFound += numberField(v, 'issuesFound', 'issues_found') ?? 0;
      issuesFixed += numberField(v, 'issuesFixedLater', 'issues_fixed_later') ?? 0;
    }
    if (stateTypeOf(acc) === 'REFINE') {
      for (const m of acc.models) refineOutput += m.usage?.output ?? 0;
      for (const a of acc.artifacts) {
        const n = numberField(a, 'modifiedContentTokens', 'modified_content_tokens');
        if (n !== undefined) {
          modifiedTokens += n;
          hasModified = true;
        }
      }
    }
  }
  let saving = 0;
  for (const s of detail) {
    if (!s.pricedAs) continue;
    const price = usedPrices.get(s.pricedAs);
    if (price) saving += (s.tokens.cacheRead / 1e6) * (price.inputPerMillion - price.cachedInputPerMillion);
  }
  const metrics: DerivedMetrics = {
    totalTokens: totalsSeed.total_tokens,
    totalCost: roundMoney(totalCost),
    cacheHitRatio: cacheHitRatio(totalsSeed.input_tokens_cached, totalsSeed.input_tokens_total),
    cacheSaving: roundMoney(saving),
    stateCostShare: Object.fromEntries(Object.entries(byState).map(([k, v]) => [k, v.share ?? 0])),
    toolContextRatio: toolContextRatio(sentSum, rawSum),
    userInstructionTokens,
    inputAmplification:
      userInstructionTokens === null ? null : inputAmplification(totalsSeed.input_tokens_total, userInstructionTokens),
    validationRepairRate: validationRepairRate(issuesFixed, issuesFound),
    refinementEfficiency: hasModified ? refinementEfficiency(modifiedTokens, refineOutput) : null,
    retrievalCompression: retrievalCompression(retrievalSent, retrievalRaw),
  };

  // Input cost by context source: each call's input cost split in proportion to its provenance.
  const inputCostBySource: Partial<Record<ContextSource, number>> = {};
  for (const s of detail) {
    if (!s.context) continue;
    const inputCost = s.llm.uncachedInput + s.llm.cacheRead + s.llm.cacheWrite;
    const total = CONTEXT_SOURCES.reduce((n, k) => n + (s.context as ContextTokens)[k], 0);
    if (total === 0 || inputCost === 0) continue;
    for (const k of CONTEXT_SOURCES) {
      const part = (s.context[k] / total) * inputCost;
      if (part > 0) inputCostBySource[k] = (inputCostBySource[k] ?? 0) + part;
    }
  }

  const runLatency =
    runStart && runEnd
      ? Math.max(0, Date.parse(runEnd) - Date.parse(runStart))
      : detail.reduce((n, s) => n + (s.latencyMs ?? 0), 0);
  const replay: ReplayCost | null = isReplay
    ? {
        replayOf: manifest.replayOf as string,
        recordedCost: roundMoney(detail.reduce((n, s) => n + s.recordedCost, 0)),
        replayCost: roundMoney(detail.reduce((n, s) => n + s.replayCost, 0)),
        liveCost: roundMoney(detail.reduce((n, s) => n + s.liveCost, 0)),
        steps: {
          recording: detail.filter((s) => s.servedFrom === 'recording').length,
          live: detail.filter((s) => s.servedFrom === 'live').length,
          blocked: detail.filter((s) => s.servedFrom === 'blocked').length,
          sandbox: detail.filter((s) => s.servedFrom === 'sandbox').length,
          mock: detail.filter((s) => s.servedFrom === 'mock').length,
          simulated: detail.filter((s) => s.servedFrom === 'simulated').length,
        },
      }
    : null;

  const run = {
    trace_id: traceId,
    task_id: input.taskId ?? manifest.name ?? null,
    agent_id: detail.length > 0 ? (stepRows.find((r) => r.agent_id)?.agent_id ?? manifest.agent.entry ?? null) : null,
    skill_id: null,
    start_time: runStart ?? stepRows[0]?.start_time ?? null,
    end_time: runEnd ?? stepRows.at(-1)?.end_time ?? null,
    total_latency_ms: Math.round(runLatency),
    total_input_tokens: totalsSeed.input_tokens_total,
    total_uncached_input_tokens: totalsSeed.input_tokens_uncached,
    total_cached_input_tokens: totalsSeed.input_tokens_cached,
    total_output_tokens: totalsSeed.output_tokens,
    total_reasoning_tokens: totalsSeed.reasoning_tokens,
    total_tokens: totalsSeed.total_tokens,
    total_llm_cost: roundMoney(totalsLlm.total),
    total_tool_cost: roundMoney(toolCost),
    total_compute_cost: roundMoney(computeCost),
    total_cost: roundMoney(totalCost),
    currency,
    main_cost_state: main[0] ?? null,
    created_at: createdAt,
    recording_id: manifest.id,
    replay_of: manifest.replayOf ?? null,
    total_cache_write_input_tokens: totalsSeed.input_tokens_cache_write,
    replay_cost: replay ? replay.replayCost : null,
  };

  const prices: TracePriceSnapshotRow[] = [...usedPrices.values()].map((p) => ({
    trace_id: traceId,
    model_name: p.model,
    price_input_per_million: p.inputPerMillion,
    price_cached_input_per_million: p.cachedInputPerMillion,
    price_output_per_million: p.outputPerMillion,
    price_reasoning_per_million: p.reasoningPerMillion ?? p.outputPerMillion,
    currency,
    price_version: input.priceVersion,
    created_at: createdAt,
    price_cache_write_per_million: p.cacheWritePerMillion ?? p.inputPerMillion,
    price_cache_write_1h_per_million: p.cacheWrite1hPerMillion ?? p.cacheWritePerMillion ?? p.inputPerMillion,
    price_server_tool_per_call: { ...p.serverToolPerCall },
  }));

  const costProfile = buildCostProfile({
    traceId,
    tokens: totalsSeed,
    totalCost: roundMoney(totalCost),
    currency,
    totalLatencyMs: run.total_latency_ms,
    costByState: Object.fromEntries(Object.entries(byState).map(([k, v]) => [k, roundMoney(v.cost)])),
    tokenByState: Object.fromEntries(Object.entries(byState).map(([k, v]) => [k, v.totalTokens])),
    inputAmplification: metrics.inputAmplification,
    replay: replay
      ? { spent: replay.replayCost, servedFromRecording: replay.steps.recording, live: replay.steps.live }
      : null,
    inputCostByContextSource: Object.fromEntries(
      Object.entries(inputCostBySource).map(([k, v]) => [k, roundMoney(v as number)]),
    ),
  });

  return {
    run,
    prices,
    totals: {
      tokens: totalsTokens,
      seed: totalsSeed,
      llm: totalsLlm,
      toolCost,
      serverTools,
      computeCost,
      cost: totalCost,
    },
    byState,
    mainCostSources: main,
    metrics,
    costProfile,
    replay,
  };
}

function numberField(obj: Record<string, unknown>, ...names: string[]): number | undefined {
  for (const n of names) {
    const v = obj[n];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
  }
  return undefined;
}
