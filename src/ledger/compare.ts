// Cost delta between a baseline run and its replay (or any two runs of the same task).
import { roundMoney } from './cost.js';
import { type TokenBuckets, totalTokens } from './tokens.js';
import type { Ledger } from './types.js';

export interface CostDelta {
  currency: string;
  baseline: { traceId: string; cost: number; tokens: TokenBuckets; totalTokens: number; steps: number };
  /** The replay's trajectory at its prices (every call as if live) and what it actually spent. */
  replay: { traceId: string; cost: number; spent: number; tokens: TokenBuckets; totalTokens: number; steps: number };
  /** replay.cost − baseline.cost, and its share of the baseline (null when the baseline cost 0). */
  delta: { cost: number; costRatio: number | null; tokens: TokenBuckets; totalTokens: number };
  byState: Record<string, { baseline: number; replay: number; delta: number }>;
  warnings: string[];
}

/** Compares the cost of a baseline and a replay; both ledgers should be priced with the same table. */
export function compareLedgers(baseline: Ledger, replay: Ledger): CostDelta {
  const warnings: string[] = [];
  if (baseline.currency !== replay.currency) {
    warnings.push(`currencies differ (${baseline.currency} vs ${replay.currency}); cost it with one --prices table`);
  }
  const bt = baseline.totals.tokens;
  const rt = replay.totals.tokens;
  const tokens: TokenBuckets = {
    uncachedInput: rt.uncachedInput - bt.uncachedInput,
    cacheRead: rt.cacheRead - bt.cacheRead,
    cacheWrite: rt.cacheWrite - bt.cacheWrite,
    output: rt.output - bt.output,
    reasoning: rt.reasoning - bt.reasoning,
  };
  const byState: CostDelta['byState'] = {};
  for (const state of new Set([...Object.keys(baseline.byState), ...Object.keys(replay.byState)])) {
    const b = baseline.byState[state]?.cost ?? 0;
    const r = replay.byState[state]?.cost ?? 0;
    byState[state] = { baseline: roundMoney(b), replay: roundMoney(r), delta: roundMoney(r - b) };
  }
  const bc = baseline.totals.cost;
  const rc = replay.totals.cost;
  return {
    currency: replay.currency,
    baseline: {
      traceId: baseline.traceId,
      cost: roundMoney(bc),
      tokens: bt,
      totalTokens: totalTokens(bt),
      steps: baseline.steps.length,
    },
    replay: {
      traceId: replay.traceId,
      cost: roundMoney(rc),
      spent: replay.replay ? replay.replay.replayCost : roundMoney(rc),
      tokens: rt,
      totalTokens: totalTokens(rt),
      steps: replay.steps.length,
    },
    delta: {
      cost: roundMoney(rc - bc),
      costRatio: bc > 0 ? (rc - bc) / bc : null,
      tokens,
      totalTokens: totalTokens(rt) - totalTokens(bt),
    },
    byState,
    warnings,
  };
}
