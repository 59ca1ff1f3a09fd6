// One conformance suite, run against every registered provider: real recordings made by the
// recorder (streamed and not, tool calls, usage buckets) of an agent on the provider's real SDK
// against the FAKE model server (make-fixtures.ts), checked against what the server meant to
// send and what the agent was given — never against another decoder.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  decodeModelCall,
  detectProvider,
  PROVIDERS,
  type Provider,
  type RecordedModelCall,
  toolsOf,
  turnsOf,
} from '../../src/providers/index.js';
import { readRecording } from '../../src/recording/index.js';
import { canonical, keysOf } from '../../src/replay/normalize.js';
import { type Fixture, loadFixtures, type ModelExchange, providerView, travelAgent } from './fixtures.js';

let fixtures: Fixture[];
let agent: Awaited<ReturnType<typeof travelAgent>>;
beforeAll(async () => {
  fixtures = await loadFixtures();
  agent = await travelAgent();
});

const callsOf = (provider: Provider): ModelExchange[] =>
  fixtures.flatMap((f) =>
    f.calls.filter((c) => c.recorded.provider === provider.provider && c.recorded.api === provider.api),
  );

/** A recorded call as the provider reads a request body (what turns and tools are read from). */
function callOf(provider: Provider, exchange: ModelExchange, body: Record<string, unknown>): RecordedModelCall {
  return { provider: provider.provider, api: provider.api, ...provider.readInput(body, exchange.request) };
}

describe('the registry', () => {
  it('lists each provider once, named <provider>.<api>', () => {
    expect(new Set(PROVIDERS.map((p) => p.id)).size).toBe(PROVIDERS.length);
    for (const p of PROVIDERS) expect(p.id).toBe(`${p.provider}.${p.api}`);
  });

  it('claims no request that is not a model call (the agents’ tool calls)', () => {
    const others = fixtures.flatMap((f) => f.others.map((x) => ({ f, x })));
    expect(others.length).toBeGreaterThan(10);
    for (const { f, x } of others) expect(detectProvider(providerView(x, f.recording).request)).toBeUndefined();
  });

  it('re-decodes the committed recordings made before the registry to the model calls they hold', async () => {
    const root = path.resolve(import.meta.dirname, '../../recordings/examples');
    let checked = 0;
    for (const name of readdirSync(root)) {
      const recording = await readRecording(path.join(root, name));
      const exchanges = new Map(
        recording.events.flatMap((e) => (e.type === 'http.exchange' ? [[e.payload.exchangeId, e.payload]] : [])),
      );
      for (const e of recording.events) {
        if (e.type !== 'model.called') continue;
        const exchange = exchanges.get(e.payload.exchangeId ?? '');
        if (!exchange) continue;
        const { request, response } = providerView(exchange, recording);
        const provider = detectProvider(request);
        expect(provider?.id).toBe(`${e.payload.provider}.${e.payload.api}`);
        if (!provider) continue;
        const { firstTokenOffsetMs: _offset, ...decoded } = decodeModelCall(provider, request, response);
        const { exchangeId: _id, latencyMs: _latency, ttftMs: _ttft, ...held } = e.payload;
        expect(decoded).toEqual(held);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(20);
  });
});

/** Chat APIs whose usage has no cache bucket. */
const REPORTS_NO_CACHE = new Set(['ollama.chat']);

/**
 * Chat APIs that take no tools, which the travel agents (tool users) cannot speak: Ollama's
 * /api/generate, a prompt and a completion. Its own suite records it on the real SDK:
 * test/sdks/ollama-generate.test.ts.
 */
const NO_TOOLS = new Set(['ollama.generate']);

describe.each(PROVIDERS.filter((p) => p.kind === 'chat' && !NO_TOOLS.has(p.id)).map((p) => [p.id, p] as const))(
  'provider %s',
  (_id, provider) => {
    it('has fixtures recorded by the recorder: streamed and not, tool calls, several in one turn, a final answer', () => {
      const calls = callsOf(provider);
      expect(calls.some((c) => c.recorded.streamed)).toBe(true);
      expect(calls.some((c) => !c.recorded.streamed)).toBe(true);
      expect(calls.some((c) => c.meant.toolCalls.length > 1)).toBe(true);
      expect(calls.some((c) => c.meant.toolCalls.length === 0 && c.meant.text !== undefined)).toBe(true);
      // Ollama reports no cache (a prefix it kept evaluated is simply not counted): nothing to read.
      if (!REPORTS_NO_CACHE.has(provider.id)) expect(calls.some((c) => c.meant.usage.cacheRead > 0)).toBe(true);
    });

    it('detects its own requests, and no other provider claims them', () => {
      for (const c of callsOf(provider)) {
        expect(detectProvider(c.request)?.id, `${c.fixture} #${c.index}`).toBe(provider.id);
        for (const other of PROVIDERS) if (other !== provider) expect(other.detect(c.request)).toBe(false);
      }
    });

    it('decodes text, tool calls and usage buckets as the server meant them', () => {
      for (const c of callsOf(provider)) {
        const where = `${c.fixture} #${c.index}`;
        const decoded = decodeModelCall(provider, c.request, c.response);
        expect(decoded.model, where).toBe(c.meant.model);
        expect(decoded.streamed, where).toBe(c.stream);
        expect(decoded.output.text, where).toBe(c.meant.text);
        expect(
          decoded.output.toolCalls.map((t) => ({ name: t.name, arguments: t.arguments })),
          where,
        ).toEqual(c.meant.toolCalls);
        expect(decoded.usage, where).toEqual(c.meant.usage);
        // A stream recorded chunk by chunk has its first output token's offset, for time to first
        // token; a binary stream kept whole (Bedrock's) has none to tell.
        expect(decoded.firstTokenOffsetMs !== undefined, where).toBe(c.response.chunks !== undefined);
        // What the recorder wrote is what the registry decodes.
        const { firstTokenOffsetMs: _o, ...rest } = decoded;
        const { exchangeId: _x, latencyMs: _l, ttftMs: _t, ...recorded } = c.recorded;
        expect(rest, where).toEqual(recorded);
      }
    });

    it('reads the turns: the system prompt, the task, and every tool call answered by its result', () => {
      const fixtureNames = new Set(callsOf(provider).map((c) => c.fixture));
      for (const fixture of fixtures.filter((f) => fixtureNames.has(f.name))) {
        for (const [k, c] of fixture.calls.entries()) {
          const where = `${fixture.name} #${k}`;
          const turns = turnsOf(c.recorded);
          expect(turns[0], where).toEqual({ role: 'system', parts: [{ kind: 'text', text: fixture.system }] });
          expect(
            turns.filter((t) => t.role === 'system'),
            where,
          ).toHaveLength(1);
          expect(turns[1], where).toEqual({ role: 'user', parts: [{ kind: 'text', text: agent.task }] });
          // Every call of every earlier turn is in this conversation, with its id, and a result answers it.
          const earlier = fixture.calls.slice(0, k).flatMap((p) => p.recorded.output.toolCalls);
          const parts = turns.flatMap((t) => t.parts.map((p) => ({ role: t.role, ...p })));
          for (const call of earlier) {
            expect(parts, where).toContainEqual({
              role: 'assistant',
              kind: 'tool-call',
              id: call.id,
              name: call.name,
              arguments: expect.any(String),
            });
            const result = parts.find((p) => p.kind === 'tool-result' && p.callId === call.id);
            expect(result, `${where}: a result for ${call.name} ${call.id}`).toBeDefined();
            expect(result?.kind === 'tool-result' && result.text.length > 0).toBe(true);
            // A result that names its tool names this call's tool.
            if (result?.kind === 'tool-result' && result.name !== undefined) expect(result.name, where).toBe(call.name);
          }
          const calls = parts.filter((p) => p.kind === 'tool-call');
          expect(
            calls.map((p) => p.kind === 'tool-call' && JSON.parse(p.arguments)),
            where,
          ).toEqual(earlier.map((t) => JSON.parse(t.arguments)));
          // The flight search's answer is what the agent handed back.
          const search = earlier.find((t) => t.name === 'search_flights');
          if (search) {
            const result = parts.find((p) => p.kind === 'tool-result' && p.callId === search.id);
            expect(result?.kind === 'tool-result' && result.text, where).toContain('"FL-102"');
          }
        }
      }
    });

    it('reads the offered tools and their required arguments', () => {
      for (const c of callsOf(provider)) {
        const tools = toolsOf(c.recorded);
        expect(tools.map((t) => t.name)).toEqual(agent.tools.map((t) => t.name));
        expect(tools.map((t) => (t.parameters as { required?: string[] }).required)).toEqual(
          agent.tools.map((t) => t.required),
        );
      }
    });

    it('round-trips a prompt override: the new prompt is read back, nothing else changes', () => {
      for (const c of callsOf(provider)) {
        const where = `${c.fixture} #${c.index}`;
        const original = provider.systemPrompt(c.body);
        expect(original, where).toBe(c.recorded.system);
        const rewritten = provider.withSystemPrompt(c.body, 'You are a terse travel desk.');
        expect(provider.systemPrompt(rewritten), where).toBe('You are a terse travel desk.');
        expect(provider.readInput(rewritten, c.request).system, where).toBe('You are a terse travel desk.');
        const rest = (body: Record<string, unknown>) =>
          turnsOf(callOf(provider, c, body)).filter((t) => t.role !== 'system');
        expect(rest(rewritten), where).toEqual(rest(c.body));
        expect(canonical(provider.withSystemPrompt(rewritten, original ?? '')), where).toBe(canonical(c.body));
        expect(c.body, where).toEqual(JSON.parse(JSON.stringify(c.body))); // the input was not mutated
      }
    });

    it('drops its volatile fields in the normalised match; the structural match keeps the conversation', () => {
      const c = callsOf(provider)[0] as ModelExchange;
      const live = (body: Record<string, unknown>) => ({
        method: c.exchange.request.method,
        url: c.exchange.request.url,
        headers: c.exchange.request.headers,
        bodyText: JSON.stringify(body),
      });
      const keys = keysOf(live(c.body));
      for (const field of provider.volatile) {
        const a = keysOf(live({ ...c.body, [field]: 'first' }));
        const b = keysOf(live({ ...c.body, [field]: 'second' }));
        expect(a.exact).not.toBe(b.exact);
        expect(a.normalised, field).toBe(b.normalised);
        expect(a.normalised, field).toBe(keys.normalised);
      }
      const structural = provider.structural(c.body);
      expect(provider.structural(structural)).toEqual(structural);
      expect(turnsOf(callOf(provider, c, structural))).toEqual(turnsOf(callOf(provider, c, c.body)));
      // A different conversation is a different structural key.
      const other = provider.withSystemPrompt(c.body, 'Another prompt.');
      expect(keysOf(live(other)).structural).not.toBe(keys.structural);
    });
  },
);
