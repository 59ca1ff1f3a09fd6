// The ledger's output: the seed's trace_* rows (columns named exactly as in seed 000 Part VI,
// plus a few additive columns marked below), and the in-memory detail they are derived from.
import type { StateType } from '../recording/types.js';
import type { LlmCost, ServerToolCost } from './cost.js';
import type { DerivedMetrics } from './metrics.js';
import type { PriceSource, PriceTable } from './prices.js';
import type { ContextTokens } from './provenance.js';
import type { SeedTokenView, TokenBuckets } from './tokens.js';

export type { ServedFrom } from '../recording/index.js';

import type { ServedFrom } from '../recording/index.js';

/** trace_run (000 §25). Additive: recording_id, replay_of, total_cache_write_input_tokens, replay_cost. */
export interface TraceRunRow {
  trace_id: string;
  task_id: string | null;
  agent_id: string | null;
  skill_id: string | null;
  start_time: string | null;
  end_time: string | null;
  total_latency_ms: number | null;
  total_input_tokens: number;
  total_uncached_input_tokens: number;
  total_cached_input_tokens: number;
  total_output_tokens: number;
  total_reasoning_tokens: number;
  total_tokens: number;
  total_llm_cost: number;
  total_tool_cost: number;
  total_compute_cost: number;
  total_cost: number;
  currency: string;
  main_cost_state: string | null;
  created_at: string;
  recording_id: string;
  replay_of: string | null;
  /** Subset of total_uncached_input_tokens that was written to the prompt cache. */
  total_cache_write_input_tokens: number;
  /** For a replay: what it actually spent (calls served from the recording cost 0). */
  replay_cost: number | null;
}

/** trace_step (000 §26). Additive: input_tokens_cache_write (subset of uncached), served_from (replays). */
export interface TraceStepRow {
  trace_id: string;
  step_id: number;
  parent_step_id: number | null;
  state_type: StateType;
  agent_id: string | null;
  skill_id: string | null;
  model_name: string | null;
  start_time: string | null;
  end_time: string | null;
  latency_ms: number | null;
  input_tokens_total: number;
  input_tokens_uncached: number;
  input_tokens_cached: number;
  output_tokens: number;
  reasoning_tokens: number;
  total_tokens: number;
  llm_cost: number;
  tool_cost: number;
  compute_cost: number;
  state_cost: number;
  status: string | null;
  error_type: string | null;
  input_tokens_cache_write: number;
  served_from: ServedFrom | null;
}

/** trace_context_breakdown (000 §27), one row per model-call step. */
export interface TraceContextBreakdownRow {
  trace_id: string;
  step_id: number;
  system_prompt_tokens: number;
  skill_instruction_tokens: number;
  user_instruction_tokens: number;
  history_tokens: number;
  memory_tokens: number;
  tool_result_tokens: number;
  retrieved_context_tokens: number;
  artifact_context_tokens: number;
  other_context_tokens: number;
}

/** trace_tool_event (000 §28). Token figures are local-tokenizer estimates (gpt-tokenizer o200k). */
export interface TraceToolEventRow {
  trace_id: string;
  step_id: number;
  tool_type: string | null;
  tool_name: string | null;
  request_tokens: number;
  response_tokens_raw: number;
  response_tokens_selected: number;
  tokens_sent_to_next_llm: number;
  tool_latency_ms: number | null;
  tool_cost: number;
  status: string;
  created_at: string;
}

/** trace_price_snapshot (000 §29). Additive: price_cache_write_per_million, price_cache_write_1h_per_million, price_server_tool_per_call. */
export interface TracePriceSnapshotRow {
  trace_id: string;
  model_name: string;
  price_input_per_million: number;
  price_cached_input_per_million: number;
  price_output_per_million: number;
  price_reasoning_per_million: number;
  currency: string;
  price_version: string;
  created_at: string;
  price_cache_write_per_million: number;
  /** What a 1-hour cache write costs (as a 5-minute one when the table has no price of its own). */
  price_cache_write_1h_per_million: number;
  /** Per-use prices of the provider's server-side tools with this model, by tool ({} when none). */
  price_server_tool_per_call: Record<string, number>;
}

/** Tokens and cost of a step, or summed over a run: tokens in disjoint buckets, cost split by token type. */
export interface CostTotals {
  tokens: TokenBuckets;
  seed: SeedTokenView;
  llm: LlmCost;
  /** Tool Cost (§21): the step's tools at their per-call prices, and the server-side tools its model calls ran. */
  toolCost: number;
  /** The tools the provider ran inside the model calls (web search…), by tool: part of toolCost. */
  serverTools: ServerToolCost[];
  computeCost: number;
  /** State Cost as if every call were made live (the cost of this trajectory). */
  cost: number;
}

/** One step of the ledger with its tokens in disjoint buckets and its cost split by token type. */
export interface StepLedger extends CostTotals {
  stepId: number;
  parentStepId: number | null;
  stateType: StateType;
  name: string;
  model: string | null;
  /** The model the step was priced as (differs from `model` when re-costed with --model). */
  pricedAs: string | null;
  isPriced: boolean;
  /** False when a model call of the step reported no usage (a stream without it): its tokens and cost are not the provider's. */
  usageKnown: boolean;
  /**
   * True when some of the step's tokens (and so its cost) are an estimate: a model call that reported
   * no usage, counted locally from its request and answer (src/ledger/estimate.ts), never 0.
   */
  usageEstimated: boolean;
  /**
   * False when a model call of the step reported no input count (no usage at all). True with
   * `usageEstimated` when only the output is an estimate: a stream cut before the provider's final
   * count (Usage.outputIncomplete), whose input, cache reads and writes are the provider's.
   */
  inputKnown: boolean;
  latencyMs: number | null;
  status: string | null;
  servedFrom: ServedFrom | null;
  /** Replays only: cost of the call as recorded (served from the recording). */
  recordedCost: number;
  /** Replays only: what the replay spent on this step (served from the recording = 0). */
  replayCost: number;
  /** Replays only: cost of calls that went live. */
  liveCost: number;
  context: ContextTokens | null;
}

export interface StateSummary {
  steps: number;
  tokens: TokenBuckets;
  totalTokens: number;
  llmCost: number;
  toolCost: number;
  computeCost: number;
  cost: number;
  latencyMs: number;
  /** State Cost Share (§34). */
  share: number | null;
}

export interface ReplayCost {
  replayOf: string;
  /** Cost of the calls this replay took from the recording (what they cost when recorded). */
  recordedCost: number;
  /** What the replay spent: served from the recording = 0, live calls at their price. */
  replayCost: number;
  /** Cost of the calls that went live during the replay. */
  liveCost: number;
  /** Steps by provenance (a step counts under the weakest of its answers, live first). */
  steps: { recording: number; live: number; blocked: number; sandbox: number; mock: number; simulated: number };
}

/** The §24 cost profile (keys as in the seed, plus a few additive ones). */
export interface CostProfile {
  trace_id: string;
  total_tokens: number;
  total_input_tokens: number;
  total_uncached_input_tokens: number;
  total_cached_input_tokens: number;
  total_output_tokens: number;
  total_reasoning_tokens: number;
  total_cost: number;
  currency: string;
  total_latency_ms: number | null;
  cost_by_state: Record<string, number>;
  token_by_state: Record<string, number>;
  main_cost_sources: string[];
  conclusion: string;
  cache_hit_ratio: number | null;
  input_amplification: number | null;
  /** LLM input cost split by context source (§18), where provenance is known. */
  input_cost_by_context_source: Partial<Record<string, number>>;
}

export interface Ledger {
  traceId: string;
  recordingId: string;
  currency: string;
  priceVersion: string;
  priceSource: PriceSource;
  priceTable: PriceTable;
  /** The model every call was re-costed as, when asked. */
  recostModel: string | null;
  run: TraceRunRow;
  steps: TraceStepRow[];
  context: TraceContextBreakdownRow[];
  tools: TraceToolEventRow[];
  prices: TracePriceSnapshotRow[];
  detail: StepLedger[];
  totals: CostTotals;
  byState: Record<string, StateSummary>;
  mainCostSources: string[];
  metrics: DerivedMetrics;
  costProfile: CostProfile;
  replay: ReplayCost | null;
  warnings: string[];
}
