// buildLedger: one recording in, the seed's trace_* rows, metrics and cost profile out. No I/O.

import { weakerProvenance } from '../recording/provenance.js';
import { linkToolSteps, stepNames } from '../recording/tool-links.js';
import type {
  Body,
  EventOf,
  HttpExchangePayload,
  ModelCalledPayload,
  PriceEntry,
  Recording,
  StateType,
  ToolCalledPayload,
} from '../recording/types.js';
import { addCost, type LlmCost, llmCost, roundMoney, ZERO_COST } from './cost.js';
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
import {
  findModelPrice,
  findToolPrice,
  type PriceSource,
  type PriceTable,
  recordingPrices,
  type ToolPrice,
} from './prices.js';
import { buildCostProfile, mainCostSources } from './profile.js';
import {
  CONTEXT_SOURCES,
  type ContextSegment,
  type ContextSource,
  type ContextTokens,
  contextSegments,
  emptyContextTokens,
  scaleContext,
  TokenCounter,
} from './provenance.js';
import {
  addBuckets,
  bucketsFromUsage,
  inputTotal,
  seedView,
  type TokenBuckets,
  totalTokens,
  ZERO_BUCKETS,
} from './tokens.js';
import type {
  Ledger,
  ReplayCost,
  ServedFrom,
  StateSummary,
  StepLedger,
  TraceContextBreakdownRow,
  TracePriceSnapshotRow,
  TraceStepRow,
  TraceToolEventRow,
} from './types.js';

export interface LedgerOptions {
  /** Price table to cost with; default: the recording's manifest snapshot, else the bundled table. */
  prices?: PriceTable;
  /** Re-cost every model call as this model (what would this run cost on M?). */
  model?: string;
  /** Split input tokens by context source (default true; costs a tokenizer pass). */
  provenance?: boolean;
  /** The task id for trace_run.task_id (default: the recording's name). */
  taskId?: string;
  /**
   * The token counter for context provenance (default: a new one per ledger). Pass one to share its
   * cache of counted texts across ledgers (a recording and its replays repeat most messages), or
   * `new TokenCounter({ cache: false })` to count every text afresh.
   */
  counter?: TokenCounter;
}

interface StepAcc {
  stepId: number;
  parentStepId: number | null;
  started?: EventOf<'step.started'>;
  completed?: EventOf<'step.completed'>;
  models: ModelCalledPayload[];
  tools: ToolCalledPayload[];
  validators: Record<string, unknown>[];
  artifacts: Record<string, unknown>[];
  compiled: Record<string, unknown>[];
  firstTime?: string;
  lastTime?: string;
}

const TOOL_SOURCE: Partial<Record<StateType, ContextSource>> = {
  RETRIEVE: 'retrieved_context',
  MEMORY_READ: 'memory',
  FILE_READ: 'artifact_context',
};

/**
 * Builds the ledger of a recording (or a replay): per-step and per-run tokens in separate buckets,
 * cost from the price snapshot, latency, cost by state type, context provenance, tool events and
 * the derived metrics.
 * @example const ledger = buildLedger(await readRecording(dir)); ledger.run.total_cost
 */
export function buildLedger(recording: Recording, options: LedgerOptions = {}): Ledger {
  const warnings: string[] = [];
  const { table, source } = choosePrices(recording, options);
  const currency = table.currency;
  const manifest = recording.manifest;
  const traceId = recording.events[0]?.traceId ?? manifest.id;
  const createdAt = manifest.createdAt;
  const isReplay = manifest.replayOf !== undefined;

  // Index the events by step.
  const steps = new Map<number, StepAcc>();
  const exchanges = new Map<string, HttpExchangePayload>();
  let runStart: string | undefined;
  let runEnd: string | undefined;
  for (const event of recording.events) {
    if (event.type === 'http.exchange') exchanges.set(event.payload.exchangeId, event.payload);
    if (event.type === 'run.started') runStart ??= event.time;
    if (event.type === 'run.completed') runEnd = event.time;
    if (event.stepId === 0) continue;
    let acc = steps.get(event.stepId);
    if (!acc) {
      acc = {
        stepId: event.stepId,
        parentStepId: null,
        models: [],
        tools: [],
        validators: [],
        artifacts: [],
        compiled: [],
      };
      steps.set(event.stepId, acc);
    }
    if (event.parentStepId !== undefined && acc.parentStepId === null) acc.parentStepId = event.parentStepId;
    acc.firstTime ??= event.time;
    acc.lastTime = event.time;
    switch (event.type) {
      case 'step.started':
        acc.started = event;
        break;
      case 'step.completed':
        acc.completed = event;
        break;
      case 'model.called':
        acc.models.push(event.payload);
        break;
      case 'tool.called':
        acc.tools.push(event.payload);
        break;
      case 'validator.called':
        acc.validators.push(event.payload);
        break;
      case 'artifact.modified':
      case 'artifact.created':
        acc.artifacts.push(event.payload);
        break;
      case 'context.compiled':
        acc.compiled.push(event.payload);
        break;
      default:
        break;
    }
  }
  const ordered = [...steps.values()].sort((a, b) => a.stepId - b.stepId);
  const stateTypeOf = (acc: StepAcc): StateType =>
    acc.started?.payload.stateType ?? acc.tools[0]?.stateType ?? (acc.models.length > 0 ? 'THINK' : 'OBSERVE');

  // Price every model call.
  const usedPrices = new Map<string, PriceEntry>();
  const missingPrice = new Set<string>();
  // Price look-ups scan the table (and build patterns for wildcard tools): once per name per ledger.
  const modelPrices = new Map<string, PriceEntry | undefined>();
  const toolPrices = new Map<string, ToolPrice | undefined>();
  const toolPriceFor = (name: string): ToolPrice | undefined => {
    if (!toolPrices.has(name)) toolPrices.set(name, findToolPrice(table, name));
    return toolPrices.get(name);
  };
  // The simulator's model is tapedeck's choice, not the agent's: priced as itself (no --model override).
  const simulatorPriceFor = (model: string): PriceEntry | undefined => {
    if (!modelPrices.has(model)) modelPrices.set(model, findModelPrice(table, model));
    const entry = modelPrices.get(model);
    if (entry) usedPrices.set(entry.model, entry);
    else missingPrice.add(model);
    return entry;
  };
  const priceFor = (model: string): PriceEntry | undefined => {
    const name = options.model ?? model;
    if (!modelPrices.has(name)) modelPrices.set(name, findModelPrice(table, name));
    const entry = modelPrices.get(name);
    if (entry) usedPrices.set(entry.model, entry);
    else missingPrice.add(options.model ?? model);
    return entry;
  };

  const counter = options.counter ?? new TokenCounter();
  const doProvenance = options.provenance !== false;
  // A tool's raw result text is needed twice (matching tool results to steps, and its row): build it once.
  const toolTexts = new Map<ToolCalledPayload, string>();
  const toolText = (t: ToolCalledPayload): string => {
    let text = toolTexts.get(t);
    if (text === undefined) {
      text = toolResultText(recording, t, exchanges);
      toolTexts.set(t, text);
    }
    return text;
  };

  // Which tool step answered which tool call: the links of the recording (tool-call id, name, shared values).
  const names = stepNames(recording.events);
  const toolStepByCallId = new Map<string, number>();
  // Tool results that carry no (known) call id are matched by their text; the index is built the
  // first time one needs it.
  let toolStepByText: Map<string, number> | undefined;
  const toolStepOfText = (text: string): number | undefined => {
    if (!toolStepByText) {
      toolStepByText = new Map();
      for (const acc of ordered) {
        for (const t of acc.tools) toolStepByText.set(toolText(t), acc.stepId);
      }
    }
    return toolStepByText.get(text);
  };
  if (doProvenance) {
    const toolSteps = new Set(ordered.filter((acc) => acc.tools.length > 0).map((acc) => acc.stepId));
    for (const [stepId, link] of linkToolSteps(recording.events))
      if (toolSteps.has(stepId) && !toolStepByCallId.has(link.callId)) toolStepByCallId.set(link.callId, stepId);
  }

  const detail: StepLedger[] = [];
  const stepRows: TraceStepRow[] = [];
  const contextRows: TraceContextBreakdownRow[] = [];
  /** tool step id -> tokens of its result in each model step's context */
  const sentTo = new Map<number, Map<number, number>>();
  const modelStepIds: number[] = [];

  for (const acc of ordered) {
    const stateType = stateTypeOf(acc);
    const tokens: TokenBuckets = { ...ZERO_BUCKETS };
    const llm: LlmCost = { ...ZERO_COST };
    let model: string | null = null;
    let pricedAs: string | null = null;
    let isPriced = true;
    let usageKnown = true;
    let servedFrom: ServedFrom | null = null;
    let context: ContextTokens | null = null;
    for (const call of acc.models) {
      const buckets = bucketsFromUsage(call.usage);
      if (!call.usage) {
        usageKnown = false;
        warnings.push(
          `step ${acc.stepId}: the model call to ${call.model} reported no usage: its tokens and cost are unknown (left out of the totals)`,
        );
      }
      addBuckets(tokens, buckets);
      model ??= call.model;
      const price = priceFor(call.model);
      if (price) pricedAs ??= price.model;
      else isPriced = false;
      addCost(llm, llmCost(buckets, price));
      servedFrom = mergeServed(servedFrom, servedOf(call.exchangeId, exchanges));
      if (doProvenance) {
        const segments = callSegments(call, acc.compiled);
        const providerInput = call.usage ? inputTotal(buckets) : undefined;
        const only = providerInput === undefined ? undefined : singleSource(segments);
        if (only !== undefined) {
          // One source holds all the text: it holds all the provider's input, nothing to split or count.
          const part = emptyContextTokens();
          part[only] = providerInput as number;
          context = context ? sumContext(context, part) : part;
          continue;
        }
        // Local counts by source (tool results re-labelled by the state type of the step that produced
        // them), noting how many tokens of each tool step's result this call received.
        const local = emptyContextTokens();
        for (const seg of segments) {
          const tokens = counter.count(seg.text);
          let source = seg.source;
          if (source === 'tool_result') {
            const toolStepId = resolveToolStep(seg, toolStepByCallId, toolStepOfText);
            if (toolStepId !== undefined) {
              const tool = steps.get(toolStepId);
              const mapped = tool ? TOOL_SOURCE[stateTypeOf(tool)] : undefined;
              if (mapped) source = mapped;
              let perModel = sentTo.get(toolStepId);
              if (!perModel) {
                perModel = new Map<number, number>();
                sentTo.set(toolStepId, perModel);
              }
              perModel.set(acc.stepId, (perModel.get(acc.stepId) ?? 0) + tokens);
            }
          }
          local[source] += tokens;
        }
        const part = providerInput === undefined ? local : scaleContext(local, providerInput);
        context = context ? sumContext(context, part) : part;
      }
    }
    if (acc.models.length > 0) modelStepIds.push(acc.stepId);

    let toolCost = 0;
    let computeCost = 0;
    let costsModel = acc.models.length > 0;
    const named = names.get(acc.stepId)?.name;
    for (const tool of acc.tools) {
      const price = (named === undefined ? undefined : toolPriceFor(named)) ?? toolPriceFor(tool.name);
      const perCall = price?.perCall ?? 0;
      if ((price?.stateType ?? tool.stateType) === 'SCRIPT_EXEC') computeCost += perCall;
      else toolCost += perCall;
      servedFrom = mergeServed(servedFrom, servedOf(tool.exchangeId, exchanges));
      // A simulated answer cost a model call the replay made (the simulator's model, at its price).
      const simulated = tool.exchangeId === undefined ? undefined : exchanges.get(tool.exchangeId)?.simulatedBy;
      if (simulated) {
        costsModel = true;
        const buckets = bucketsFromUsage(simulated.usage);
        if (!simulated.usage) {
          usageKnown = false;
          warnings.push(
            `step ${acc.stepId}: the simulator's call to ${simulated.model} reported no usage: its tokens and cost are unknown (left out of the totals)`,
          );
        }
        addBuckets(tokens, buckets);
        const price = simulatorPriceFor(simulated.model);
        if (price) pricedAs ??= price.model;
        else isPriced = false;
        addCost(llm, llmCost(buckets, price));
      }
    }
    if (isReplay && servedFrom === null && acc.tools.length > 0) servedFrom = 'recording';
    if (isReplay && servedFrom === null && acc.models.length > 0) servedFrom = 'live';

    const cost = llm.total + toolCost + computeCost;
    const spent = servedFrom === 'recording' || servedFrom === 'blocked' ? 0 : cost;
    const seed = seedView(tokens);
    const latencyMs = acc.completed?.payload.latencyMs ?? sumLatency(acc);
    const agentId = acc.started?.payload.agentId ?? null;
    const step: StepLedger = {
      stepId: acc.stepId,
      parentStepId: acc.parentStepId,
      stateType,
      name: named ?? acc.started?.payload.name ?? acc.tools[0]?.name ?? model ?? '',
      model,
      pricedAs,
      isPriced: !costsModel || isPriced,
      usageKnown,
      tokens,
      seed,
      llm,
      toolCost,
      computeCost,
      cost,
      latencyMs,
      status: acc.completed?.payload.status ?? null,
      servedFrom,
      recordedCost: isReplay && servedFrom === 'recording' ? cost : 0,
      replayCost: isReplay ? spent : 0,
      liveCost: isReplay && servedFrom === 'live' ? cost : 0,
      context,
    };
    detail.push(step);
    stepRows.push({
      trace_id: traceId,
      step_id: acc.stepId,
      parent_step_id: acc.parentStepId,
      state_type: stateType,
      agent_id: agentId,
      skill_id: null,
      model_name: model,
      start_time: acc.started?.time ?? acc.firstTime ?? null,
      end_time: acc.completed?.time ?? acc.lastTime ?? null,
      latency_ms: latencyMs === null ? null : Math.round(latencyMs),
      input_tokens_total: seed.input_tokens_total,
      input_tokens_uncached: seed.input_tokens_uncached,
      input_tokens_cached: seed.input_tokens_cached,
      output_tokens: seed.output_tokens,
      reasoning_tokens: seed.reasoning_tokens,
      total_tokens: seed.total_tokens,
      llm_cost: roundMoney(llm.total),
      tool_cost: roundMoney(toolCost),
      compute_cost: roundMoney(computeCost),
      state_cost: roundMoney(cost),
      status: acc.completed?.payload.status ?? null,
      error_type: acc.completed?.payload.errorType ?? acc.tools.find((t) => t.error)?.error?.code ?? null,
      input_tokens_cache_write: seed.input_tokens_cache_write,
      served_from: servedFrom,
    });
    if (context) contextRows.push(contextRow(traceId, acc.stepId, context));
  }
  for (const model of missingPrice) {
    warnings.push(
      `no price for model ${model} in price table ${table.version}; its calls are costed at 0 (add it with --prices FILE)`,
    );
  }

  // Tool events: which tool results entered the next model context.
  const toolRows: TraceToolEventRow[] = [];
  let nextModelIndex = 0; // both lists ascend, so one pointer finds each tool step's next model call
  for (const acc of ordered) {
    if (acc.tools.length === 0) continue;
    while (nextModelIndex < modelStepIds.length && (modelStepIds[nextModelIndex] as number) <= acc.stepId)
      nextModelIndex++;
    const nextModel = modelStepIds[nextModelIndex];
    const sent = nextModel === undefined ? 0 : (sentTo.get(acc.stepId)?.get(nextModel) ?? 0);
    const named = names.get(acc.stepId)?.name;
    acc.tools.forEach((tool, i) => {
      // The step's first tool is the agent's tool the step is named after; others keep their own names.
      const name = i === 0 && named !== undefined ? named : tool.name;
      const price = toolPriceFor(name) ?? toolPriceFor(tool.name);
      const share = i === 0 ? sent : 0;
      toolRows.push({
        trace_id: traceId,
        step_id: acc.stepId,
        tool_type: tool.kind,
        tool_name: name,
        request_tokens: doProvenance ? counter.count(argsText(tool.args)) : 0,
        response_tokens_raw: doProvenance ? counter.count(toolText(tool)) : 0,
        response_tokens_selected: share,
        tokens_sent_to_next_llm: share,
        tool_latency_ms: Math.round(tool.latencyMs),
        tool_cost: roundMoney(price?.perCall ?? 0),
        status: tool.error ? 'error' : 'success',
        created_at: createdAt,
      });
    });
  }

  // Totals and by-state summaries.
  const totalsTokens: TokenBuckets = { ...ZERO_BUCKETS };
  const totalsLlm: LlmCost = { ...ZERO_COST };
  let toolCost = 0;
  let computeCost = 0;
  const byState: Record<string, StateSummary> = {};
  for (const s of detail) {
    addBuckets(totalsTokens, s.tokens);
    addCost(totalsLlm, s.llm);
    toolCost += s.toolCost;
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
    task_id: options.taskId ?? manifest.name ?? null,
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
    price_version: table.version,
    created_at: createdAt,
    price_cache_write_per_million: p.cacheWritePerMillion ?? p.inputPerMillion,
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
    traceId,
    recordingId: manifest.id,
    currency,
    priceVersion: table.version,
    priceSource: source,
    priceTable: table,
    recostModel: options.model ?? null,
    run,
    steps: stepRows,
    context: contextRows,
    tools: toolRows,
    prices,
    detail,
    totals: { tokens: totalsTokens, seed: totalsSeed, llm: totalsLlm, toolCost, computeCost, cost: totalCost },
    byState,
    mainCostSources: main,
    metrics,
    costProfile,
    replay,
    warnings,
  };
}

function choosePrices(recording: Recording, options: LedgerOptions): { table: PriceTable; source: PriceSource } {
  if (options.prices) return { table: options.prices, source: 'file' };
  return recordingPrices(recording.manifest);
}

function servedOf(exchangeId: string | undefined, exchanges: Map<string, HttpExchangePayload>): ServedFrom | null {
  if (exchangeId === undefined) return null;
  return exchanges.get(exchangeId)?.servedFrom ?? null;
}

/** A step that went live anywhere counts as live (it cost money); else the weakest of its answers. */
function mergeServed(a: ServedFrom | null, b: ServedFrom | null): ServedFrom | null {
  if (a === 'live' || b === 'live') return 'live';
  return weakerProvenance(a, b);
}

function sumLatency(acc: StepAcc): number | null {
  const latencies = [...acc.models.map((m) => m.latencyMs), ...acc.tools.map((t) => t.latencyMs)];
  return latencies.length === 0 ? null : latencies.reduce((a, b) => a + b, 0);
}

function sumContext(a: ContextTokens, b: ContextTokens): ContextTokens {
  const out = { ...a };
  for (const k of CONTEXT_SOURCES) out[k] += b[k];
  return out;
}

function contextRow(traceId: string, stepId: number, c: ContextTokens): TraceContextBreakdownRow {
  return {
    trace_id: traceId,
    step_id: stepId,
    system_prompt_tokens: c.system_prompt,
    skill_instruction_tokens: c.skill_instruction,
    user_instruction_tokens: c.user_instruction,
    history_tokens: c.history,
    memory_tokens: c.memory,
    tool_result_tokens: c.tool_result,
    retrieved_context_tokens: c.retrieved_context,
    artifact_context_tokens: c.artifact_context,
    other_context_tokens: c.other_context,
  };
}

/** Segments of a call: a context.compiled event's declared segments win over the message heuristics. */
function callSegments(call: ModelCalledPayload, compiled: Record<string, unknown>[]): ContextSegment[] {
  for (const c of compiled) {
    if (!Array.isArray(c.segments)) continue;
    const declared: ContextSegment[] = [];
    for (const s of c.segments as unknown[]) {
      if (typeof s !== 'object' || s === null) continue;
      const seg = s as Record<string, unknown>;
      const source = normalizeSource(seg.source);
      if (!source) continue;
      const text = typeof seg.text === 'string' ? seg.text : '';
      const item: ContextSegment = { source, text };
      if (typeof seg.toolCallId === 'string') item.toolCallId = seg.toolCallId;
      declared.push(item);
    }
    if (declared.length > 0) return declared;
  }
  return contextSegments(call);
}

function normalizeSource(value: unknown): ContextSource | undefined {
  if (typeof value !== 'string') return undefined;
  const name = value.replace(/_tokens$/, '').replace(/_context$/, '');
  for (const s of CONTEXT_SOURCES) {
    if (s === value || s.replace(/_context$/, '') === name) return s;
  }
  return undefined;
}

/**
 * The source of a call's segments when every non-empty one has the same source and none is a tool
 * result (whose local count the tool events report), else undefined. Such a call's breakdown is
 * its whole input in that source, which is what scaling the local counts would give.
 */
function singleSource(segments: readonly ContextSegment[]): ContextSource | undefined {
  let only: ContextSource | undefined;
  for (const seg of segments) {
    if (seg.text.length === 0) continue;
    if (seg.source === 'tool_result') return undefined;
    if (only === undefined) only = seg.source;
    else if (only !== seg.source) return undefined;
  }
  return only;
}

function resolveToolStep(
  seg: ContextSegment,
  byCallId: Map<string, number>,
  byText: (text: string) => number | undefined,
): number | undefined {
  if (seg.toolCallId !== undefined) {
    const id = byCallId.get(seg.toolCallId);
    if (id !== undefined) return id;
  }
  return byText(seg.text);
}

function argsText(args: unknown): string {
  if (args === undefined || args === null) return '';
  return typeof args === 'string' ? args : JSON.stringify(args);
}

/** The raw result a tool returned: its HTTP response body, else its result body, else its result. */
function toolResultText(
  recording: Recording,
  tool: ToolCalledPayload,
  exchanges: Map<string, HttpExchangePayload>,
): string {
  // The bytes an HTTP tool answered are its raw result; the recorder's `result` is a canonical form of them.
  const exchange = tool.exchangeId === undefined ? undefined : exchanges.get(tool.exchangeId);
  if (exchange?.response?.body) return bodyText(recording, exchange.response.body);
  if (tool.resultBody) return bodyText(recording, tool.resultBody);
  if (tool.result !== undefined) return typeof tool.result === 'string' ? tool.result : JSON.stringify(tool.result);
  if (tool.error) return tool.error.message;
  return '';
}

function bodyText(recording: Recording, body: Body): string {
  if (body.text !== undefined) return body.text;
  if (body.base64 !== undefined) return Buffer.from(body.base64, 'base64').toString('utf8');
  if (body.blob !== undefined) {
    try {
      return recording.readBlob(body.blob).toString('utf8');
    } catch {
      return '';
    }
  }
  return '';
}

function numberField(obj: Record<string, unknown>, ...names: string[]): number | undefined {
  for (const n of names) {
    const v = obj[n];
    if (typeof v === 'number' && Number.isFinite(v)) return v;
  }
  return undefined;
}
