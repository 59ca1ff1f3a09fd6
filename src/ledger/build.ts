// buildLedger: one recording in, the seed's trace_* rows, metrics and cost profile out. No I/O. The steps
// are grouped in step-index.ts, their context attributed in context-sources.ts, the run summed in run-summary.ts.

import { answerProvenance } from '../recording/provenance.js';
import { linkToolSteps, stepNames } from '../recording/tool-links.js';
import type { HttpExchangePayload, PriceEntry, Recording, ToolCalledPayload, Usage } from '../recording/types.js';
import {
  argsText,
  callSegments,
  contextRow,
  resolveToolStep,
  singleSource,
  sumContext,
  TOOL_SOURCE,
  toolResultText,
} from './context-sources.js';
import {
  addCost,
  addServerToolCosts,
  type LlmCost,
  llmCost,
  roundMoney,
  type ServerToolCost,
  serverToolCosts,
  ZERO_COST,
} from './cost.js';
import { estimateOutput, estimateUsage } from './estimate.js';
import {
  callPrices,
  findModelPrice,
  findToolPrice,
  type PriceSource,
  type PriceTable,
  recordingPrices,
  type ToolPrice,
} from './prices.js';
import { type ContextTokens, emptyContextTokens, scaleContext, TokenCounter } from './provenance.js';
import { summarizeRun } from './run-summary.js';
import { indexSteps, stateTypeOf, sumLatency } from './step-index.js';
import { addBuckets, bucketsFromUsage, inputTotal, seedView, type TokenBuckets, ZERO_BUCKETS } from './tokens.js';
import type {
  Ledger,
  ServedFrom,
  StepLedger,
  TraceContextBreakdownRow,
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

  const index = indexSteps(recording);
  const { steps, ordered, exchanges } = index;
  /** Where each of a replay's steps was served from (empty for an original recording). */
  const served = answerProvenance(recording).steps;

  // Price every model call.
  const usedPrices = new Map<string, PriceEntry>();
  const missingPrice = new Set<string>();
  /** model price entry -> server tools it ran that the table has no price for */
  const missingToolPrice = new Map<string, Set<string>>();
  const missing1hPrice = new Set<string>();
  /** tier -> models with calls served at it that the table has no prices of the tier for */
  const missingTierPrice = new Map<string, Set<string>>();
  // A call's prices: its service tier's or its long-context ones when they apply (noting a tier with none).
  const billedPrice = (
    entry: PriceEntry | undefined,
    buckets: TokenBuckets,
    usage: Usage | undefined,
  ): PriceEntry | undefined => {
    if (!entry) return undefined;
    const { price, unpricedTier } = callPrices(entry, {
      inputTokens: inputTotal(buckets),
      serviceTier: usage?.serviceTier,
    });
    if (unpricedTier !== undefined)
      missingTierPrice.set(unpricedTier, (missingTierPrice.get(unpricedTier) ?? new Set()).add(entry.model));
    return price;
  };
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
    let usageEstimated = false;
    let inputKnown = true;
    const servedFrom: ServedFrom | null = served.get(acc.stepId) ?? null;
    let context: ContextTokens | null = null;
    const serverTools: ServerToolCost[] = [];
    for (const call of acc.models) {
      let buckets = bucketsFromUsage(call.usage);
      const refused =
        call.usage || call.exchangeId === undefined ? undefined : refusedStatus(exchanges.get(call.exchangeId));
      if (refused !== undefined) {
        // The server answered with an error (a 429 before a retry, a 400, a 500): no completion was
        // made and none is billed, so none is estimated. The step still counts as a call.
        warnings.push(
          `step ${acc.stepId}: the model call to ${call.model} was refused (HTTP ${refused}) and reported no usage: counted as 0 tokens, not billed`,
        );
      } else if (!call.usage) {
        // No usage on the wire is not 0 tokens: counted locally from the request and the answer.
        usageKnown = false;
        usageEstimated = true;
        inputKnown = false;
        buckets = estimateUsage(call, acc.compiled, counter);
        warnings.push(
          `step ${acc.stepId}: the model call to ${call.model} reported no usage: its tokens are estimated (o200k count of the request and answer: ~${buckets.uncachedInput} input, ~${buckets.output} output), and so is its cost`,
        );
      } else if (call.usage.outputIncomplete) {
        // The stream was cut before the provider's final output count: its input is the provider's,
        // its output at least what reached the agent (the reported count is a placeholder).
        usageKnown = false;
        usageEstimated = true;
        const reported = buckets.output;
        buckets = { ...buckets, output: Math.max(reported, estimateOutput(call, counter)) };
        warnings.push(
          `step ${acc.stepId}: the stream of the model call to ${call.model} ended without its final usage (cut short, or a server that sends none): its input tokens are the provider's, its output is estimated (~${buckets.output}: o200k count of what reached the agent; the model may have written more), and so is its cost`,
        );
      }
      addBuckets(tokens, buckets);
      model ??= call.model;
      const price = priceFor(call.model);
      if (price) pricedAs ??= price.model;
      else isPriced = false;
      addCost(llm, llmCost(buckets, billedPrice(price, buckets, call.usage)));
      if (price && buckets.cacheWrite1h && price.cacheWrite1hPerMillion === undefined) missing1hPrice.add(price.model);
      // Tools the provider ran inside the call (web search…): the step's Tool Cost (§21), at the model's price.
      const used = serverToolCosts(call.usage, price);
      addServerToolCosts(serverTools, used);
      for (const t of used) {
        if (t.priced || !price) continue;
        const names = missingToolPrice.get(price.model) ?? new Set<string>();
        missingToolPrice.set(price.model, names.add(t.tool));
      }
      // A refused call's context reached no model: it is in no context breakdown.
      if (doProvenance && refused === undefined) {
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

    let toolCost = serverTools.reduce((sum, t) => sum + t.cost, 0);
    let computeCost = 0;
    let costsModel = acc.models.length > 0;
    const named = names.get(acc.stepId)?.name;
    for (const tool of acc.tools) {
      const price = (named === undefined ? undefined : toolPriceFor(named)) ?? toolPriceFor(tool.name);
      const perCall = price?.perCall ?? 0;
      if ((price?.stateType ?? tool.stateType) === 'SCRIPT_EXEC') computeCost += perCall;
      else toolCost += perCall;
      // A simulated answer cost a model call the replay made (the simulator's model, at its price).
      const simulated = tool.exchangeId === undefined ? undefined : exchanges.get(tool.exchangeId)?.simulatedBy;
      if (simulated) {
        costsModel = true;
        const buckets = bucketsFromUsage(simulated.usage);
        if (!simulated.usage) {
          usageKnown = false;
          inputKnown = false;
          warnings.push(
            `step ${acc.stepId}: the simulator's call to ${simulated.model} reported no usage: its tokens and cost are unknown (left out of the totals)`,
          );
        }
        addBuckets(tokens, buckets);
        const price = simulatorPriceFor(simulated.model);
        if (price) pricedAs ??= price.model;
        else isPriced = false;
        addCost(llm, llmCost(buckets, billedPrice(price, buckets, simulated.usage)));
      }
    }

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
      usageEstimated,
      inputKnown,
      tokens,
      seed,
      llm,
      toolCost,
      serverTools,
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
  for (const [model, tools] of missingToolPrice) {
    for (const tool of tools)
      warnings.push(
        `no price for server tool ${tool} of model ${model} in price table ${table.version}; its uses are costed at 0 (add serverToolPerCall.${tool} to the model's entry with --prices FILE)`,
      );
  }
  for (const [tier, models] of missingTierPrice) {
    for (const model of models)
      warnings.push(
        `no ${tier}-tier price for model ${model} in price table ${table.version}; its calls served at the ${tier} tier are costed at the standard price (add serviceTiers.${tier} to the model's entry with --prices FILE)`,
      );
  }
  for (const model of missing1hPrice) {
    warnings.push(
      `no 1-hour cache-write price for model ${model} in price table ${table.version}; its 1-hour cache writes are costed as 5-minute ones (add cacheWrite1hPerMillion with --prices FILE)`,
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

  const summary = summarizeRun({
    traceId,
    manifest,
    ...(options.taskId === undefined ? {} : { taskId: options.taskId }),
    currency,
    priceVersion: table.version,
    index,
    detail,
    stepRows,
    toolRows,
    usedPrices,
  });

  return {
    traceId,
    recordingId: manifest.id,
    currency,
    priceVersion: table.version,
    priceSource: source,
    priceTable: table,
    recostModel: options.model ?? null,
    ...summary,
    steps: stepRows,
    context: contextRows,
    tools: toolRows,
    detail,
    warnings,
  };
}

function choosePrices(recording: Recording, options: LedgerOptions): { table: PriceTable; source: PriceSource } {
  if (options.prices) return { table: options.prices, source: 'file' };
  return recordingPrices(recording.manifest);
}

/**
 * The HTTP status of a model call the server refused (an error status, 400 and up), or undefined: a
 * call it answered, or one with no answer at all (a connection cut after the request was sent may
 * still be billed).
 */
function refusedStatus(exchange: HttpExchangePayload | undefined): number | undefined {
  const status = exchange?.response?.status;
  return status !== undefined && status >= 400 ? status : undefined;
}
