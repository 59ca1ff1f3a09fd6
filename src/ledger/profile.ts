// The §24 cost profile: totals, cost and tokens by state, main cost sources, and a conclusion
// a person can read.
import { cacheHitRatio, formatPercent } from './metrics.js';
import type { SeedTokenView } from './tokens.js';
import type { CostProfile } from './types.js';

/**
 * The states that make most of the cost: by cost, descending, until they cover 60% of it (at
 * most three). For §24's costs this gives RETRIEVE, VALIDATE, REFINE.
 */
export function mainCostSources(costByState: Record<string, number>): string[] {
  const total = Object.values(costByState).reduce((a, b) => a + b, 0);
  if (total <= 0) return [];
  const sorted = Object.entries(costByState)
    .filter(([, c]) => c > 0)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)); // not localeCompare: ICU's collator costs ms to load
  const out: string[] = [];
  let covered = 0;
  for (const [state, cost] of sorted) {
    if (out.length === 3 || covered >= 0.6 * total) break;
    out.push(state);
    covered += cost;
  }
  return out;
}

const STATE_PHRASE: Record<string, string> = {
  OBSERVE: 'observation',
  THINK: 'planning and tool-call decisions',
  RETRIEVE: 'retrieved context entering the LLM context',
  MCP_CALL: 'MCP tool calls',
  API_CALL: 'external API calls',
  DB_QUERY: 'database queries',
  SCRIPT_EXEC: 'script execution',
  FILE_READ: 'file reading',
  FILE_WRITE: 'file writing',
  MEMORY_READ: 'memory reads',
  MEMORY_WRITE: 'memory writes',
  VALIDATE: 'validation',
  REFINE: 'refinement',
  FINALIZE: 'the final answer',
};

const SOURCE_PHRASE: Record<string, string> = {
  system_prompt: 'the system prompt',
  skill_instruction: 'skill instructions and tool specs',
  user_instruction: 'the user instruction',
  history: 'conversation history',
  memory: 'memory',
  tool_result: 'tool results',
  retrieved_context: 'retrieved context',
  artifact_context: 'artifacts',
  other_context: 'other context',
};

/** Formats money for prose: two decimals from 1 up, else four significant digits. */
export function formatMoney(value: number, currency: string): string {
  const text = value === 0 ? '0' : Math.abs(value) >= 1 ? value.toFixed(2) : Number(value.toPrecision(4)).toString();
  return `${text} ${currency}`;
}

function joinWords(words: string[]): string {
  if (words.length <= 1) return words.join('');
  if (words.length === 2) return `${words[0]} and ${words[1]}`;
  return `${words.slice(0, -1).join(', ')}, and ${words.at(-1)}`;
}

export interface CostProfileInput {
  traceId: string;
  tokens: SeedTokenView;
  totalCost: number;
  currency: string;
  totalLatencyMs: number | null;
  costByState: Record<string, number>;
  tokenByState: Record<string, number>;
  inputAmplification?: number | null;
  inputCostByContextSource?: Partial<Record<string, number>>;
  /** For a replay: what it spent, and how many steps were served from the recording or went live. */
  replay?: { spent: number; servedFromRecording: number; live: number } | null;
}

/** Builds the §24 cost profile JSON with a plain-language conclusion. */
export function buildCostProfile(input: CostProfileInput): CostProfile {
  const main = mainCostSources(input.costByState);
  const hit = cacheHitRatio(input.tokens.input_tokens_cached, input.tokens.input_tokens_total);
  return {
    trace_id: input.traceId,
    total_tokens: input.tokens.total_tokens,
    total_input_tokens: input.tokens.input_tokens_total,
    total_uncached_input_tokens: input.tokens.input_tokens_uncached,
    total_cached_input_tokens: input.tokens.input_tokens_cached,
    total_output_tokens: input.tokens.output_tokens,
    total_reasoning_tokens: input.tokens.reasoning_tokens,
    total_cost: input.totalCost,
    currency: input.currency,
    total_latency_ms: input.totalLatencyMs,
    cost_by_state: input.costByState,
    token_by_state: input.tokenByState,
    main_cost_sources: main,
    conclusion: conclude(input, main, hit),
    cache_hit_ratio: hit,
    input_amplification: input.inputAmplification ?? null,
    input_cost_by_context_source: input.inputCostByContextSource ?? {},
  };
}

function conclude(input: CostProfileInput, main: string[], hit: number | null): string {
  const sentences = [`The run cost ${formatMoney(input.totalCost, input.currency)}.`];
  if (main.length > 0) {
    const label = main.length === 1 ? 'The dominant cost source was' : 'The dominant cost sources were';
    sentences.push(`${label} ${joinWords(main.map((s) => STATE_PHRASE[s] ?? s))}.`);
  }
  const bySource = Object.entries(input.inputCostByContextSource ?? {}).filter(([, v]) => (v ?? 0) > 0) as Array<
    [string, number]
  >;
  const inputCost = bySource.reduce((n, [, v]) => n + v, 0);
  if (bySource.length > 0 && inputCost > 0) {
    const [source, cost] = bySource.sort((a, b) => b[1] - a[1])[0] as [string, number];
    sentences.push(
      `The largest share of input cost came from ${SOURCE_PHRASE[source] ?? source} (${formatPercent(cost / inputCost)}).`,
    );
  }
  if (hit !== null) {
    const pct = formatPercent(hit);
    if (hit >= 0.5) {
      sentences.push(
        `Cached input tokens represented ${pct} of total input tokens, indicating that fixed Skill instructions and historical context benefited from caching.`,
      );
    } else if (hit >= 0.2) {
      sentences.push(
        `Cached input tokens represented ${pct} of total input tokens; a more stable prompt prefix could raise the cache hit ratio.`,
      );
    } else {
      sentences.push(
        `Cached input tokens represented only ${pct} of total input tokens: the context is unstable or too short to cache, so a stable prompt prefix is the first thing to try.`,
      );
    }
  }
  if (input.inputAmplification !== null && input.inputAmplification !== undefined) {
    sentences.push(`The agent expanded its instruction ${input.inputAmplification.toFixed(1)}× into runtime context.`);
  }
  if (input.replay) {
    const r = input.replay;
    sentences.push(
      `As a replay it spent ${formatMoney(r.spent, input.currency)}: ${r.servedFromRecording} step${r.servedFromRecording === 1 ? ' was' : 's were'} served from the recording and ${r.live} went live.`,
    );
  }
  return sentences.join(' ');
}
