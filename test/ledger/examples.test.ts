// Acceptance on the committed example recordings: the ledger's tokens equal what the (fake) model
// server reported in its raw responses, bucket by bucket, and the costs equal a hand computation.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildLedger, otelView } from '../../src/ledger/index.js';
import { bodyText, readRecording } from '../../src/recording/index.js';
import type { HttpExchangePayload, Recording } from '../../src/recording/types.js';

const ROOT = 'recordings/examples';
const names = existsSync(ROOT) ? readdirSync(ROOT).filter((n) => existsSync(join(ROOT, n, 'manifest.json'))) : [];

interface Reported {
  uncachedInput: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
  reasoning: number;
  /** What the provider calls input (OpenAI prompt_tokens includes cached; Anthropic input_tokens does not). */
  providerInput: number;
}

type Json = Record<string, unknown>;

/** The JSON objects of a response: the body, or each SSE `data:` line of a stream. */
function responseObjects(rec: Recording, x: HttpExchangePayload): Json[] {
  const res = x.response;
  if (!res) return [];
  const text = res.chunks ? res.chunks.map((c) => c.data).join('') : res.body ? bodyText(rec, res.body) : '';
  if (!res.chunks) return [JSON.parse(text) as Json];
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)) as Json);
}

/** Reads usage straight from the provider's wire format, independently of the recorder's decoding. */
function reportedUsage(provider: string, objects: Json[]): Reported {
  if (provider === 'anthropic') {
    let u: Json = {};
    for (const o of objects) {
      if (o.type === 'message_start') u = { ...((o.message as Json).usage as Json) };
      else if (o.type === 'message_delta') u = { ...u, ...(o.usage as Json) };
      else if (o.type === 'message') u = o.usage as Json;
    }
    const n = (k: string): number => (typeof u[k] === 'number' ? (u[k] as number) : 0);
    return {
      uncachedInput: n('input_tokens'),
      cacheRead: n('cache_read_input_tokens'),
      cacheWrite: n('cache_creation_input_tokens'),
      output: n('output_tokens'),
      reasoning: 0,
      providerInput: n('input_tokens'),
    };
  }
  const usage = objects.map((o) => o.usage as Json | undefined).find((u) => u) as Json;
  const cached = ((usage.prompt_tokens_details as Json | undefined)?.cached_tokens as number | undefined) ?? 0;
  const reasoning =
    ((usage.completion_tokens_details as Json | undefined)?.reasoning_tokens as number | undefined) ?? 0;
  return {
    uncachedInput: (usage.prompt_tokens as number) - cached,
    cacheRead: cached,
    cacheWrite: 0,
    output: (usage.completion_tokens as number) - reasoning,
    reasoning,
    providerInput: usage.prompt_tokens as number,
  };
}

// Prices of the bundled table 2026-11-01, per million tokens, written out by hand.
const HAND_PRICES: Record<string, { in: number; cached: number; write: number; out: number; reasoning: number }> = {
  'gpt-4.1-mini': { in: 0.4, cached: 0.1, write: 0.4, out: 1.6, reasoning: 1.6 },
  'claude-sonnet-4-5': { in: 3, cached: 0.3, write: 3.75, out: 15, reasoning: 15 },
};

describe.skipIf(names.length === 0)('ledger of the example recordings', () => {
  it.each(names)(
    '%s: tokens equal the model server’s reported usage, bucket by bucket, and costs a hand computation',
    async (name) => {
      const rec = await readRecording(join(ROOT, name));
      const ledger = buildLedger(rec);
      const exchanges = new Map<string, HttpExchangePayload>();
      for (const e of rec.events) if (e.type === 'http.exchange') exchanges.set(e.payload.exchangeId, e.payload);
      const total = { uncachedInput: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 };
      let handCost = 0;
      let calls = 0;
      for (const e of rec.events) {
        if (e.type !== 'model.called') continue;
        calls++;
        const x = exchanges.get(e.payload.exchangeId ?? '');
        expect(x, `step ${e.stepId} has its http.exchange`).toBeDefined();
        const reported = reportedUsage(e.payload.provider, responseObjects(rec, x as HttpExchangePayload));
        const step = ledger.detail.find((s) => s.stepId === e.stepId);
        const { providerInput, ...buckets } = reported;
        expect(step?.tokens, `step ${e.stepId}`).toEqual(buckets);
        // The provider's own notion of input: OpenAI's prompt_tokens is the OTel input (cached included).
        if (e.payload.provider === 'openai') {
          expect(otelView(step?.tokens ?? buckets)['gen_ai.usage.input_tokens']).toBe(providerInput);
        } else {
          expect(step?.tokens.uncachedInput).toBe(providerInput);
        }
        // The context breakdown of the step sums to the reported input.
        const ctx = ledger.context.find((c) => c.step_id === e.stepId);
        const parts = Object.entries(ctx ?? {})
          .filter(([k]) => k.endsWith('_tokens'))
          .reduce((n, [, v]) => n + (v as number), 0);
        expect(parts).toBe(buckets.uncachedInput + buckets.cacheRead + buckets.cacheWrite);
        for (const k of Object.keys(total) as Array<keyof typeof total>) total[k] += buckets[k];
        const p = HAND_PRICES[e.payload.model];
        expect(p, `a hand price for ${e.payload.model}`).toBeDefined();
        if (p) {
          handCost +=
            (buckets.uncachedInput * p.in +
              buckets.cacheRead * p.cached +
              buckets.cacheWrite * p.write +
              buckets.output * p.out +
              buckets.reasoning * p.reasoning) /
            1e6;
        }
      }
      expect(calls).toBeGreaterThan(0);
      expect(ledger.totals.tokens).toEqual(total);
      expect(ledger.run.total_cached_input_tokens).toBe(total.cacheRead);
      expect(ledger.run.total_input_tokens).toBe(total.uncachedInput + total.cacheRead + total.cacheWrite);
      expect(ledger.run.total_tokens).toBe(ledger.run.total_input_tokens + total.output + total.reasoning);
      expect(ledger.run.total_cost).toBeCloseTo(handCost, 12);
      expect(ledger.warnings).toEqual([]);
    },
  );

  it.each(names)('%s: every tool result the agent sent back is traced into the next model context', async (name) => {
    const ledger = buildLedger(await readRecording(join(ROOT, name)));
    expect(ledger.tools.length).toBeGreaterThan(0);
    // Named after the agent's tool (the route GET /flights is the step's detail).
    const searched = ledger.tools.find((t) => t.tool_name === 'search_flights');
    expect(searched?.tokens_sent_to_next_llm).toBeGreaterThan(0);
    expect(ledger.context.some((c) => c.tool_result_tokens > 0)).toBe(true);
    expect(ledger.metrics.inputAmplification).toBeGreaterThan(1);
  });
});
