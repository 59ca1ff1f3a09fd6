// The answer chain's answerers are the replay's `Answerer`s (answer.ts), each with the provenance
// it writes on its answers.
import type { Answerer } from '../answer.js';

export type { Ask as ChainAsk, HttpAnswer } from '../answer.js';

export interface ChainAnswerer extends Answerer {
  readonly servedFrom: 'sandbox' | 'mock' | 'simulated';
}
