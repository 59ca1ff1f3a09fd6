// The seed's cost formulas (000 §20–22): LLM cost by token type, state cost, task cost.
import type { PriceEntry, Usage } from '../recording/types.js';
import { callPrices, findModelPrice, type PriceTable } from './prices.js';
import { addBuckets, bucketsFromUsage, inputTotal, type TokenBuckets } from './tokens.js';

/** LLM cost split by token type (each bucket's cost, in the price table's currency), and their sum. */
export interface LlmCost extends TokenBuckets {
  total: number;
}

export const ZERO_COST: Readonly<LlmCost> = Object.freeze({
  uncachedInput: 0,
  cacheRead: 0,
  cacheWrite: 0,
  output: 0,
  reasoning: 0,
  total: 0,
});

/**
 * LLM Cost = uncached/1e6 × P_input + cached/1e6 × P_cached_input + output/1e6 × P_output
 * + reasoning/1e6 × P_reasoning (§20). Cache writes are uncached input billed at P_cache_write
 * when the table has one, else at P_input; the part written for 1 hour (cacheWrite1h) at
 * P_cache_write_1h when the table has one, else as the other writes (buildLedger warns). Reasoning
 * without its own price is billed as output (how providers bill it); a table can set
 * reasoningPerMillion to 0 to follow the seed's "not separately billed" rule.
 */
export function llmCost(tokens: TokenBuckets, price: PriceEntry | undefined): LlmCost {
  if (!price) return { ...ZERO_COST };
  const writePrice = price.cacheWritePerMillion ?? price.inputPerMillion;
  const written1h = Math.min(tokens.cacheWrite1h ?? 0, tokens.cacheWrite);
  const uncachedInput = (tokens.uncachedInput / 1e6) * price.inputPerMillion;
  const cacheRead = (tokens.cacheRead / 1e6) * price.cachedInputPerMillion;
  const cacheWrite1h = (written1h / 1e6) * (price.cacheWrite1hPerMillion ?? writePrice);
  const cacheWrite = ((tokens.cacheWrite - written1h) / 1e6) * writePrice + cacheWrite1h;
  const output = (tokens.output / 1e6) * price.outputPerMillion;
  const reasoning = (tokens.reasoning / 1e6) * (price.reasoningPerMillion ?? price.outputPerMillion);
  return {
    uncachedInput,
    cacheRead,
    cacheWrite,
    ...(written1h > 0 ? { cacheWrite1h } : {}),
    output,
    reasoning,
    total: uncachedInput + cacheRead + cacheWrite + output + reasoning,
  };
}

export function addCost(into: LlmCost, add: LlmCost): LlmCost {
  addBuckets(into, add);
  into.total += add.total;
  return into;
}

/** A server-side tool's uses in a step or run (Usage.serverTools) and what they cost (0 when unpriced). */
export interface ServerToolCost {
  tool: string;
  uses: number;
  cost: number;
  /** False when the price table has no per-use price for the tool with the model that ran it. */
  priced: boolean;
}

/**
 * What the server-side tools a model call ran cost: each use at the model's `serverToolPerCall`
 * price for the tool (Tool Cost of the step, §21), 0 and `priced: false` when the table has none.
 */
export function serverToolCosts(usage: Usage | undefined, price: PriceEntry | undefined): ServerToolCost[] {
  // By name: a recording stores the usage's keys sorted, so the order is the same before and after.
  return Object.entries(usage?.serverTools ?? {})
    .filter(([, uses]) => uses > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([tool, uses]) => {
      const perUse = price?.serverToolPerCall?.[tool];
      return { tool, uses, cost: perUse === undefined ? 0 : uses * perUse, priced: perUse !== undefined };
    });
}

/** Adds server tool costs into a list summed by tool (and priced only while every part is), by tool name. */
export function addServerToolCosts(into: ServerToolCost[], add: readonly ServerToolCost[]): ServerToolCost[] {
  for (const part of add) {
    const same = into.find((t) => t.tool === part.tool);
    if (!same) into.push({ ...part });
    else {
      same.uses += part.uses;
      same.cost += part.cost;
      same.priced &&= part.priced;
    }
  }
  return into.sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
}

/** State Cost = LLM + Tool + API + DB + Compute + Parse + Write cost (§21); tool/API/DB/parse/write share `tool`. */
export function stateCost(parts: { llm: number; tool: number; compute: number }): number {
  return parts.llm + parts.tool + parts.compute;
}

/** Money rounded to 1e-10 so sums print without float noise; NUMERIC columns get the same value. */
export function roundMoney(value: number): number {
  return Math.round(value * 1e10) / 1e10;
}

/**
 * What one model call cost at a price table (at its service tier's or long-context prices when they
 * apply), its server-side tools included (recordingPrices(manifest).table for a recording),
 * by the formula above; undefined when the call has no usage or its model no price.
 * @example modelCallCost(recordingPrices(recording.manifest).table, 'gpt-4o', call.usage)
 */
export function modelCallCost(table: PriceTable, model: string, usage: Usage | undefined): number | undefined {
  const entry = findModelPrice(table, model);
  if (!usage || !entry) return undefined;
  const tools = serverToolCosts(usage, entry).reduce((sum, t) => sum + t.cost, 0);
  const buckets = bucketsFromUsage(usage);
  const { price } = callPrices(entry, { inputTokens: inputTotal(buckets), serviceTier: usage.serviceTier });
  return llmCost(buckets, price).total + tools;
}
