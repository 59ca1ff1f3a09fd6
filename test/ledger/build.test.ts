import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { buildLedger, compareLedgers, formatLedger, type PriceTable, TokenCounter } from '../../src/ledger/index.js';
import { readRecording } from '../../src/recording/index.js';
import type { Recording, UsageBucket } from '../../src/recording/types.js';
import { defaultUsage, syntheticRecording, writeSyntheticRecording } from './synthetic.js';

const TOOLS = 4;
// gpt-4o-mini in the bundled table: 0.15 in, 0.075 cached, 0.60 out; no cache-write or reasoning price.
const MINI = { input: 0.15, cached: 0.075, output: 0.6 };

function handCost(callIndex: number): number {
  const u = defaultUsage(callIndex);
  return (
    ((u.inputUncached + u.cacheWrite) * MINI.input +
      u.cacheRead * MINI.cached +
      (u.output + u.reasoning) * MINI.output) /
    1e6
  );
}

describe('buildLedger on a recorded agent run', () => {
  const recording = syntheticRecording({ tools: TOOLS });
  const ledger = buildLedger(recording);

  it('keeps every model call usage in separate buckets, step by step and in total', () => {
    const modelSteps = ledger.detail.filter((s) => s.model !== null);
    expect(modelSteps).toHaveLength(TOOLS + 1);
    modelSteps.forEach((s, i) => {
      const u = defaultUsage(i);
      expect(s.tokens).toEqual({
        uncachedInput: u.inputUncached,
        cacheRead: u.cacheRead,
        cacheWrite: u.cacheWrite,
        output: u.output,
        reasoning: u.reasoning,
      });
    });
    const sum = (k: UsageBucket) =>
      Array.from({ length: TOOLS + 1 }, (_, i) => defaultUsage(i)[k]).reduce((a, b) => a + b, 0);
    expect(ledger.run.total_cached_input_tokens).toBe(sum('cacheRead'));
    expect(ledger.run.total_uncached_input_tokens).toBe(sum('inputUncached') + sum('cacheWrite'));
    expect(ledger.run.total_cache_write_input_tokens).toBe(sum('cacheWrite'));
    expect(ledger.run.total_input_tokens).toBe(sum('inputUncached') + sum('cacheWrite') + sum('cacheRead'));
    expect(ledger.run.total_output_tokens).toBe(sum('output'));
    expect(ledger.run.total_reasoning_tokens).toBe(sum('reasoning'));
    expect(ledger.run.total_tokens).toBe(ledger.run.total_input_tokens + sum('output') + sum('reasoning'));
  });

  it('costs each call by the bundled price table as a hand computation does', () => {
    const modelSteps = ledger.steps.filter((s) => s.model_name !== null);
    modelSteps.forEach((s, i) => {
      expect(s.llm_cost).toBeCloseTo(handCost(i), 12);
    });
    const total = Array.from({ length: TOOLS + 1 }, (_, i) => handCost(i)).reduce((a, b) => a + b, 0);
    expect(ledger.run.total_cost).toBeCloseTo(total, 12);
    expect(ledger.prices).toEqual([
      expect.objectContaining({ model_name: 'gpt-4o-mini', price_input_per_million: 0.15, currency: 'USD' }),
    ]);
    expect(ledger.priceSource).toBe('bundled');
  });

  it('attributes cost and tokens by state type and names the main cost sources', () => {
    expect(Object.keys(ledger.byState).sort()).toEqual(['FINALIZE', 'RETRIEVE', 'THINK']);
    expect(ledger.byState.THINK?.steps).toBe(TOOLS);
    expect(ledger.byState.RETRIEVE?.cost).toBe(0);
    expect(ledger.mainCostSources[0]).toBe('THINK');
    expect(ledger.run.main_cost_state).toBe('THINK');
    expect(ledger.costProfile.cost_by_state.THINK).toBeCloseTo(
      Array.from({ length: TOOLS }, (_, i) => handCost(i)).reduce((a, b) => a + b, 0),
      10,
    );
  });

  it('splits every model call input across context sources summing to the provider input', () => {
    for (const row of ledger.context) {
      const step = ledger.steps.find((s) => s.step_id === row.step_id);
      const parts =
        row.system_prompt_tokens +
        row.skill_instruction_tokens +
        row.user_instruction_tokens +
        row.history_tokens +
        row.memory_tokens +
        row.tool_result_tokens +
        row.retrieved_context_tokens +
        row.artifact_context_tokens +
        row.other_context_tokens;
      expect(parts).toBe(step?.input_tokens_total);
    }
    expect(ledger.context[0]?.retrieved_context_tokens).toBe(0);
    // RETRIEVE tool results re-enter the context as retrieved context.
    expect(ledger.context.at(-1)?.retrieved_context_tokens).toBeGreaterThan(0);
    expect(ledger.context.at(-1)?.tool_result_tokens).toBe(0);
  });

  it('records which tool results entered the next model context', () => {
    expect(ledger.tools).toHaveLength(TOOLS);
    const first = recording.events.find((e) => e.type === 'tool.called');
    const flights = (first?.payload as { result: { flights: unknown } } | undefined)?.result.flights;
    expect(ledger.tools[0]?.tokens_sent_to_next_llm).toBe(countTokens(JSON.stringify(flights)));
    for (const t of ledger.tools) {
      expect(t.tokens_sent_to_next_llm).toBeGreaterThan(0);
      expect(t.tokens_sent_to_next_llm).toBeLessThan(t.response_tokens_raw);
      expect(t.request_tokens).toBeGreaterThan(0);
    }
    expect(ledger.metrics.retrievalCompression).toBeGreaterThan(0);
    expect(ledger.metrics.retrievalCompression).toBeLessThan(1);
  });

  it('reports a tool result the agent dropped from its context as not sent', () => {
    const windowed = buildLedger(syntheticRecording({ tools: 3, historyWindow: 0 }));
    expect(windowed.tools.map((t) => t.tokens_sent_to_next_llm)).toEqual([0, 0, 0]);
  });

  it('computes input amplification from the user instruction of the first call', () => {
    const user = ledger.context[0]?.user_instruction_tokens ?? 0;
    expect(user).toBeGreaterThan(0);
    expect(ledger.metrics.inputAmplification).toBeCloseTo(ledger.run.total_input_tokens / user, 10);
    expect(ledger.metrics.cacheHitRatio).toBeCloseTo(
      ledger.run.total_cached_input_tokens / ledger.run.total_input_tokens,
    );
  });

  it('renders a readable table with totals, metrics and the conclusion', () => {
    const text = formatLedger(ledger);
    expect(text).toContain('FINALIZE');
    expect(text).toContain('cache hit ratio');
    // A long run name puts the trace id on its own line rather than past 80 columns.
    const long = formatLedger(ledger, 'a run name of some sixty characters, as a replay gets one....').split('\n');
    expect(long[1]).toBe(`trace ${ledger.traceId}`);
    // The conclusion is wrapped at 80 columns: compare its words.
    expect(text.replace(/\s+/g, ' ')).toContain(ledger.costProfile.conclusion.replace(/\s+/g, ' '));
  });
});

describe('re-costing and providers', () => {
  it('re-costs a recording under another price table and another model', () => {
    const recording = syntheticRecording({ tools: 2 });
    const table: PriceTable = {
      version: 'test-1',
      currency: 'RMB',
      models: [
        { model: 'gpt-4o-mini', inputPerMillion: 10, cachedInputPerMillion: 2.5, outputPerMillion: 30 },
        { model: 'model_x', inputPerMillion: 1, cachedInputPerMillion: 1, outputPerMillion: 1, reasoningPerMillion: 0 },
      ],
      tools: [{ tool: 'search_*', perCall: 0.02 }],
    };
    const recosted = buildLedger(recording, { prices: table });
    expect(recosted.currency).toBe('RMB');
    expect(recosted.run.total_tool_cost).toBeCloseTo(0.04, 12);
    const asX = buildLedger(recording, { prices: table, model: 'model_x' });
    const tokens = asX.totals.tokens;
    const expected = (tokens.uncachedInput + tokens.cacheWrite + tokens.cacheRead + tokens.output) / 1e6 + 0.04;
    expect(asX.run.total_cost).toBeCloseTo(expected, 12);
    expect(asX.prices.map((p) => p.model_name)).toEqual(['model_x']);
  });

  it('prefers the manifest price snapshot over the bundled table', () => {
    const recording = syntheticRecording({
      tools: 1,
      prices: {
        version: 'rec-1',
        currency: 'EUR',
        models: [{ model: 'gpt-4o-mini', inputPerMillion: 1, cachedInputPerMillion: 1, outputPerMillion: 1 }],
      },
    });
    const ledger = buildLedger(recording);
    expect(ledger.priceSource).toBe('manifest');
    expect(ledger.currency).toBe('EUR');
  });

  it('warns and costs 0 for a model with no price', () => {
    const ledger = buildLedger(syntheticRecording({ tools: 1, model: 'no-such-model' }));
    expect(ledger.run.total_llm_cost).toBe(0);
    expect(ledger.warnings.join('\n')).toMatch(/no price for model no-such-model/);
  });

  it('follows Anthropic tool_result blocks into the context of the next call', () => {
    const ledger = buildLedger(
      syntheticRecording({ tools: 2, provider: 'anthropic', toolStateType: () => 'API_CALL' }),
    );
    expect(ledger.tools.every((t) => t.tokens_sent_to_next_llm > 0)).toBe(true);
    expect(ledger.context.at(-1)?.tool_result_tokens).toBeGreaterThan(0);
    expect(ledger.context[0]?.system_prompt_tokens).toBeGreaterThan(0);
  });
});

describe('replays', () => {
  const baseline = syntheticRecording({ tools: 3, id: 'base' });
  // Tool steps served from the recording; model calls went live (a counterfactual replay).
  const replay = syntheticRecording({
    tools: 3,
    id: 'replay',
    replayOf: 'base',
    servedFrom: (step) => (step % 2 === 0 ? 'recording' : 'live'),
  });

  it('shows recorded, replay and live cost side by side', () => {
    const ledger = buildLedger(replay, {
      prices: {
        version: 't',
        currency: 'USD',
        models: [{ model: 'gpt-4o-mini', inputPerMillion: 1, cachedInputPerMillion: 1, outputPerMillion: 1 }],
        tools: [{ tool: 'search_flights', perCall: 0.5 }],
      },
    });
    expect(ledger.replay?.recordedCost).toBeCloseTo(1.5, 12); // three tool calls served from the recording
    expect(ledger.replay?.liveCost).toBeCloseTo(ledger.run.total_llm_cost, 12);
    expect(ledger.replay?.replayCost).toBeCloseTo(ledger.run.total_llm_cost, 12);
    expect(ledger.steps.filter((s) => s.served_from === 'recording')).toHaveLength(3);
    expect(ledger.detail.filter((s) => s.servedFrom === 'recording').every((s) => s.replayCost === 0)).toBe(true);
    expect(formatLedger(ledger)).toContain('replay of base');
  });

  // A stream sent without `stream_options.include_usage` (LlamaIndex.TS, Mastra's OpenAI-compatible
  // router) carries no usage: its tokens are not 0 but estimated from what went over the wire, and
  // every place that shows them says so.
  it('a model call that reported no usage has estimated tokens and cost, not 0, and says so', () => {
    const recording = syntheticRecording({ tools: 1 });
    const first = recording.events.find((e) => e.type === 'model.called');
    if (first?.type !== 'model.called') throw new Error('no model call');
    const { usage: _dropped, ...rest } = first.payload;
    const events = recording.events.map((e) => (e === first ? { ...first, payload: rest } : e));
    const prices: PriceTable = {
      version: 't',
      currency: 'USD',
      models: [{ model: 'gpt-4o-mini', inputPerMillion: 1, cachedInputPerMillion: 1, outputPerMillion: 2 }],
    };
    const ledger = buildLedger({ ...recording, events }, { prices });
    const step = ledger.detail.find((s) => s.stepId === first.stepId);
    expect(step?.usageKnown).toBe(false);
    expect(step?.usageEstimated).toBe(true);
    expect(ledger.detail.filter((s) => s.stepId !== first.stepId).every((s) => s.usageKnown && !s.usageEstimated)).toBe(
      true,
    );
    // Output: what the model wrote, counted independently (gpt-tokenizer's o200k).
    const written = [rest.output.text ?? '', ...rest.output.toolCalls.map((t) => `${t.name}${t.arguments}`)];
    const output = written.reduce((n, text) => n + countTokens(text), 0);
    expect(output).toBeGreaterThan(0);
    expect(step?.tokens).toEqual({
      uncachedInput: expect.any(Number),
      cacheRead: 0,
      cacheWrite: 0,
      output,
      reasoning: 0,
    });
    // Input: at least the system prompt and the user's message went in.
    const input = step?.tokens.uncachedInput ?? 0;
    expect(input).toBeGreaterThanOrEqual(countTokens(`${rest.system ?? ''}`) + 1);
    expect(step?.cost).toBeCloseTo((input * 1 + output * 2) / 1e6, 12);
    expect(ledger.warnings).toContain(
      `step ${first.stepId}: the model call to gpt-4o-mini reported no usage: its tokens are estimated (o200k count of the request and answer: ~${input} input, ~${output} output), and so is its cost`,
    );
    const text = formatLedger(ledger);
    const row = text.split('\n').find((l) => l.trimStart().startsWith(`${first.stepId} `));
    expect(row).toMatch(new RegExp(`~${input}\\s+\\?\\s+\\?\\s+~${output}\\s+\\?\\s+~`));
    expect(text).toMatch(/^total .* ~[\d,]+ .* ~[\d,]+ .* ~/m);
    expect(text).toMatch(/^tokens: ~/m);
    expect(text).toContain(
      `estimated: step ${first.stepId} (no usage reported; their tokens and cost are counted locally with o200k, an estimate)`,
    );
    expect(text).not.toContain('not counted');
  });

  // A call the model server refused (a 429 before the SDK's retry, a 400, a 500) made no completion
  // and is billed nothing: before, it had no usage and so was estimated and costed like a full call.
  // An answered call with no usage, or one that got no answer at all, is still estimated.
  it.each([
    [429, true],
    [400, true],
    [500, true],
    [503, true],
    [200, false],
    [undefined, false],
  ])('a model call answered with HTTP %s and no usage: refused (0 tokens, not billed) %s', (status, refused) => {
    const recording = syntheticRecording({ tools: 1 });
    const first = recording.events.find((e) => e.type === 'model.called');
    if (first?.type !== 'model.called') throw new Error('no model call');
    const { usage: _dropped, ...rest } = first.payload;
    const events = recording.events.map((e) => {
      if (e === first) return { ...first, payload: rest };
      if (e.type !== 'http.exchange' || e.payload.exchangeId !== first.payload.exchangeId) return e;
      const { response, ...exchange } = e.payload;
      return status === undefined
        ? { ...e, payload: { ...exchange, error: { code: 'ECONNRESET', message: 'socket hang up' } } }
        : {
            ...e,
            payload: {
              ...exchange,
              response: { status, headers: {}, body: { size: 2, text: '{}' } },
            },
          };
    });
    const ledger = buildLedger({ ...recording, events });
    const step = ledger.detail.find((s) => s.stepId === first.stepId)!;
    const others = ledger.detail.filter((s) => s.stepId !== first.stepId);
    if (refused) {
      expect(step.tokens).toEqual({ uncachedInput: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 });
      expect(step.cost).toBe(0);
      expect(step.usageEstimated).toBe(false);
      expect(ledger.warnings).toContain(
        `step ${first.stepId}: the model call to gpt-4o-mini was refused (HTTP ${status}) and reported no usage: counted as 0 tokens, not billed`,
      );
      expect(ledger.run.total_cost).toBeCloseTo(
        others.reduce((sum, s) => sum + s.cost, 0),
        12,
      );
    } else {
      expect(step.usageEstimated).toBe(true);
      expect(step.tokens.uncachedInput).toBeGreaterThan(0);
      expect(step.cost).toBeGreaterThan(0);
    }
  });

  it('computes the cost delta between a baseline and its replay', () => {
    const longer = syntheticRecording({ tools: 5, id: 'replay2', replayOf: 'base' });
    const delta = compareLedgers(buildLedger(baseline), buildLedger(longer));
    expect(delta.delta.cost).toBeGreaterThan(0);
    expect(delta.delta.cost).toBeCloseTo(delta.replay.cost - delta.baseline.cost, 12);
    expect(delta.replay.steps - delta.baseline.steps).toBe(4);
    expect(delta.replay.spent).toBe(0); // everything served from the recording
  });
});

describe('token counting for context provenance', () => {
  it('gives the same ledger with the text cache, without it, and with a counter shared across ledgers', () => {
    for (const provider of ['openai', 'anthropic'] as const) {
      const recording = syntheticRecording({ tools: 12, historyWindow: 6, provider });
      const uncached = buildLedger(recording, { counter: new TokenCounter({ cache: false }) });
      expect(buildLedger(recording)).toEqual(uncached);
      const shared = new TokenCounter();
      buildLedger(syntheticRecording({ tools: 5, provider }), { counter: shared });
      expect(buildLedger(recording, { counter: shared })).toEqual(uncached);
    }
  });

  it('puts a call whose text is all one source wholly in that source, counted or not', () => {
    const recording = syntheticRecording({ tools: 0, provider: 'anthropic' });
    // The final answer's call: no system prompt, no tools, only the user's instruction.
    const call = recording.events.find((e) => e.type === 'model.called') as Recording['events'][number] & {
      type: 'model.called';
    };
    call.payload.system = undefined;
    call.payload.tools = undefined;
    const ledger = buildLedger(recording);
    const row = ledger.context[0];
    expect(row?.user_instruction_tokens).toBe(ledger.steps[0]?.input_tokens_total);
    expect(row?.user_instruction_tokens).toBeGreaterThan(0);
    expect(buildLedger(recording, { counter: new TokenCounter({ cache: false }) }).context).toEqual(ledger.context);
  });
});

describe('recordings written by the recording writer', () => {
  it('give the same ledger as the run they were written from', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ledger-writer-'));
    try {
      const options = { tools: 3, id: 'written', provider: 'anthropic' as const };
      const read = await readRecording(await writeSyntheticRecording(join(dir, 'rec'), options));
      const fromDisk = buildLedger(read);
      const inMemory = buildLedger(syntheticRecording(options));
      expect(fromDisk.steps).toEqual(inMemory.steps);
      // The writer stores payloads as canonical JSON (sorted keys), which tokenizes a little
      // differently; each split still sums to the same provider-reported input.
      const sums = (l: typeof fromDisk) =>
        l.context.map((c) =>
          Object.values(c).reduce<number>((n, v) => n + (typeof v === 'number' ? v : 0), -c.step_id),
        );
      expect(sums(fromDisk)).toEqual(sums(inMemory));
      expect(fromDisk.tools.map((t) => [t.step_id, t.tool_name, t.tokens_sent_to_next_llm > 0])).toEqual(
        inMemory.tools.map((t) => [t.step_id, t.tool_name, true]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
