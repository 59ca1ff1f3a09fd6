// Facts: one home for reading numbers, money, percentages, quantities, dates and ids the way
// people write them, and for grounding a claim in what was observed. Shared by the validators
// (claim_fact, required_field, execution), the trajectory classes and bisect's predicates.

export type { StockClaim, StockState, StockVerdict } from './availability.js';
export {
  type Contradiction,
  EntityIndex,
  findContradiction,
  looksMutating,
  type MutatingAction,
  type ObservedEntity,
  principalFacts,
  type TaskFact,
  taskFacts,
} from './contradiction.js';
export { inUnitOf, unitsPerMajor } from './currencies.js';
export { FactIndex, type FactMatch, type FactSource, type Verdict } from './fact-index.js';
export { changeDirection, FRAMED_KINDS, keyDirection } from './framing.js';
export { idTokens, looksLikeId, stringsIn, type UsedValue, usedValues } from './ids.js';
export { mentionsIn, valueReadings } from './mentions.js';
export { idCore, idDigits, idReadings, type Mention, type MentionKind, type Reading } from './readings.js';
export { type RunDay, runDayOf } from './relative-dates.js';
export { type FactVerdict, factVerdict, sameFact } from './same-fact.js';
export { isMinorUnitKey, keyWords, parseNumber, unitOfKey } from './written.js';
