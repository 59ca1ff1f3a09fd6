// The ledger engine: what every run and replay cost, per step, by token type and by state.
export { buildLedger, type LedgerOptions } from './build.js';
export { type CostDelta, compareLedgers } from './compare.js';
export { addCost, type LlmCost, llmCost, modelCallCost, roundMoney } from './cost.js';
export { formatCostDelta, formatLedger } from './format.js';
export * from './metrics.js';
export {
  bundledPrices,
  findModelPrice,
  findToolPrice,
  loadPrices,
  type PriceSource,
  type PriceTable,
  PriceTableSchema,
  parsePrices,
  recordingPrices,
  snapshotPrices,
  type ToolPrice,
} from './prices.js';
export { buildCostProfile, type CostProfileInput, formatMoney, mainCostSources } from './profile.js';
export {
  CONTEXT_SOURCES,
  type ContextSegment,
  type ContextSource,
  type ContextTokens,
  contextBreakdown,
  contextSegments,
  scaleToTotal,
  TokenCounter,
} from './provenance.js';
export * from './tokens.js';
export type * from './types.js';
