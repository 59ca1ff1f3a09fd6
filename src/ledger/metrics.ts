// The seed's derived metrics (000 §30–39) and cost per resolved task (001 §6.6), as pure formulas.

/** Cache Hit Ratio = total_cached_input_tokens / total_input_tokens (§32); null without input. */
export function cacheHitRatio(cachedInputTokens: number, inputTokens: number): number | null {
  return inputTokens > 0 ? cachedInputTokens / inputTokens : null;
}

/** Cache Saving = cached/1e6 × (P_input − P_cached_input) (§33). */
export function cacheSaving(cachedInputTokens: number, inputPerMillion: number, cachedInputPerMillion: number): number {
  return (cachedInputTokens / 1e6) * (inputPerMillion - cachedInputPerMillion);
}

/** State Cost Share = State Cost / Total Task Cost (§34). */
export function stateCostShare(stateCost: number, totalCost: number): number | null {
  return totalCost > 0 ? stateCost / totalCost : null;
}

/** Tool Context Ratio = tokens_sent_to_next_llm / response_tokens_raw (§35). */
export function toolContextRatio(tokensSentToNextLlm: number, responseTokensRaw: number): number | null {
  return responseTokensRaw > 0 ? tokensSentToNextLlm / responseTokensRaw : null;
}

/** Input Amplification Ratio = total_input_tokens / user_instruction_tokens (§36); 142,000 / 300 = 473.3. */
export function inputAmplification(totalInputTokens: number, userInstructionTokens: number): number | null {
  return userInstructionTokens > 0 ? totalInputTokens / userInstructionTokens : null;
}

/** Validation Repair Rate = issues_fixed_later / issues_found (§37). */
export function validationRepairRate(issuesFixedLater: number, issuesFound: number): number | null {
  return issuesFound > 0 ? issuesFixedLater / issuesFound : null;
}

/** Refinement Efficiency = modified_content_tokens / refine_output_tokens (§38). */
export function refinementEfficiency(modifiedContentTokens: number, refineOutputTokens: number): number | null {
  return refineOutputTokens > 0 ? modifiedContentTokens / refineOutputTokens : null;
}

/** Retrieval Compression Ratio = tokens_sent_to_next_llm / raw_result_tokens (§39). */
export function retrievalCompression(tokensSentToNextLlm: number, rawResultTokens: number): number | null {
  return rawResultTokens > 0 ? tokensSentToNextLlm / rawResultTokens : null;
}

/**
 * Cost per resolved task (001 EQ A6.2): C_resolved = C_run / Pr[resolved], with C_run the mean
 * cost of the runs and Pr[resolved] their resolution rate. Null when nothing resolved.
 * @example costPerResolvedTask([{ cost: 0.54, resolved: true }, ...]) // 0.54 / 0.65 ≈ 0.83 at 65%
 */
export function costPerResolvedTask(runs: ReadonlyArray<{ cost: number; resolved: boolean }>): number | null {
  if (runs.length === 0) return null;
  const resolved = runs.filter((r) => r.resolved).length;
  if (resolved === 0) return null;
  const meanCost = runs.reduce((sum, r) => sum + r.cost, 0) / runs.length;
  return meanCost / (resolved / runs.length);
}

/** The derived metrics of one run. Ratios are null when their denominator is zero or unknown. */
export interface DerivedMetrics {
  totalTokens: number;
  totalCost: number;
  cacheHitRatio: number | null;
  /** What caching saved, in the ledger's currency. */
  cacheSaving: number;
  stateCostShare: Record<string, number>;
  toolContextRatio: number | null;
  userInstructionTokens: number | null;
  inputAmplification: number | null;
  validationRepairRate: number | null;
  refinementEfficiency: number | null;
  retrievalCompression: number | null;
}

/**
 * A ratio as a percentage with one decimal, truncated as the seed reports it (84,000 of 142,000
 * cached is 59.15…%, shown as 59.1%). @example formatPercent(84000 / 142000) // '59.1%'
 */
export function formatPercent(ratio: number | null): string {
  if (ratio === null) return '—';
  const tenths = Math.floor(Math.abs(ratio) * 1000 + 1e-9);
  return `${ratio < 0 ? '-' : ''}${(tenths / 10).toFixed(1)}%`;
}
