import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ModelCalledPayload } from '../recording/types.js';
import { contextBreakdown, contextSegments, scaleToTotal } from './provenance.js';

const call = (over: Partial<ModelCalledPayload>): ModelCalledPayload => ({
  provider: 'openai',
  api: 'chat.completions',
  model: 'm',
  streamed: false,
  messages: [],
  output: { toolCalls: [] },
  latencyMs: 1,
  ...over,
});

describe('context provenance', () => {
  it('scales local counts to exactly the provider total', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(5000), { minLength: 1, maxLength: 9 }), fc.nat(200000), (counts, total) => {
        const scaled = scaleToTotal(counts, total);
        expect(scaled.reduce((a, b) => a + b, 0)).toBe(total);
        expect(scaled.every((n) => n >= 0)).toBe(true);
      }),
    );
    expect(scaleToTotal([1, 3], 8)).toEqual([2, 6]);
  });

  it('classifies an OpenAI conversation: system, tool specs, instruction, history, tool results', () => {
    const segments = contextSegments(
      call({
        system: 'sys',
        tools: [{ type: 'function', function: { name: 'search' } }],
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'book a flight' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', function: { name: 'search', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: '[{"id":"FL1"}]' },
          { role: 'user', content: 'and a hotel' },
        ],
      }),
    );
    expect(segments.map((s) => s.source)).toEqual([
      'skill_instruction',
      'system_prompt',
      'user_instruction',
      'history',
      'tool_result',
      'history',
    ]);
    expect(segments.find((s) => s.source === 'tool_result')?.toolCallId).toBe('c1');
  });

  it('classifies Anthropic messages with a separate system prompt and tool_result blocks', () => {
    const segments = contextSegments(
      call({
        provider: 'anthropic',
        api: 'messages',
        system: 'You are a desk agent.',
        messages: [
          { role: 'user', content: 'book a flight' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'search', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'FL1' }] },
        ],
      }),
    );
    expect(segments.map((s) => [s.source, s.text])).toEqual([
      ['system_prompt', 'You are a desk agent.'],
      ['user_instruction', 'book a flight'],
      ['history', 'search{}'],
      ['tool_result', 'FL1'],
    ]);
  });

  it('sums a breakdown to the provider-reported input', () => {
    const breakdown = contextBreakdown(
      [
        { source: 'system_prompt', tokens: 10 },
        { source: 'user_instruction', tokens: 5 },
        { source: 'tool_result', tokens: 25 },
      ],
      120,
    );
    expect(Object.values(breakdown).reduce((a, b) => a + b, 0)).toBe(120);
    expect(breakdown.tool_result).toBe(75);
  });
});
