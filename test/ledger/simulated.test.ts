// A simulated answer cost a model call the replay made: the ledger counts its tokens and its cost
// on the tool step it answered, as spent by the replay (never as recorded cost).
import { describe, expect, it } from 'vitest';
import { buildLedger } from '../../src/ledger/index.js';
import type { HttpExchangePayload } from '../../src/recording/index.js';
import { syntheticRecording } from './synthetic.js';

const usage = { inputUncached: 1_000_000, cacheRead: 0, cacheWrite: 0, output: 100_000, reasoning: 0 };

describe('ledger of a replay with simulated answers', () => {
  it("costs the simulator's model call on the step it answered, as spent by the replay", () => {
    const replay = syntheticRecording({ tools: 2, replayOf: 'baseline', id: 'sim' });
    // The first tool step's answer was written by the simulator.
    const exchange = replay.events.find(
      (e) => e.type === 'http.exchange' && (e.payload as HttpExchangePayload).request.method === 'GET',
    );
    if (!exchange) throw new Error('no tool exchange');
    const payload = exchange.payload as HttpExchangePayload;
    payload.servedFrom = 'simulated';
    payload.simulatedBy = { provider: 'openai.chat.completions', model: 'gpt-4.1-mini', usage };
    const plain = buildLedger(syntheticRecording({ tools: 2, replayOf: 'baseline', id: 'sim' }));
    const ledger = buildLedger(replay);

    const step = ledger.detail.find((s) => s.stepId === exchange.stepId);
    expect(step?.servedFrom).toBe('simulated');
    // gpt-4.1-mini: 0.40 USD per million input tokens, 1.60 per million output.
    expect(step?.llm.total).toBeCloseTo(0.4 + 0.16, 6);
    expect(step?.tokens.uncachedInput).toBe(1_000_000);
    expect(step?.replayCost).toBeCloseTo(0.56, 6);
    expect(step?.recordedCost).toBe(0);
    expect(step?.isPriced).toBe(true);
    expect(ledger.replay?.replayCost).toBeCloseTo((plain.replay?.replayCost ?? 0) + 0.56, 6);
    expect(ledger.prices.map((p) => p.model_name)).toContain('gpt-4.1-mini');

    // An unknown simulator model is costed at 0, and said so.
    payload.simulatedBy = { provider: 'openai.chat.completions', model: 'sim-model-nobody-prices', usage };
    const unpriced = buildLedger(replay);
    expect(unpriced.detail.find((s) => s.stepId === exchange.stepId)?.isPriced).toBe(false);
    expect(unpriced.warnings.join('\n')).toMatch(/no price for model sim-model-nobody-prices/);
  });
});
