import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import type { ModelCalledPayload } from '../recording/types.js';
import { contextBreakdown, contextSegments, scaleToTotal, TokenCounter } from './provenance.js';

/** The largest-remainder split as first written (sort by fraction, then by index), as a reference. */
function scaleBySort(counts: readonly number[], total: number): number[] {
  const sum = counts.reduce((a, b) => a + b, 0);
  if (counts.length === 0) return [];
  if (sum === 0) return counts.map((_, i) => (i === counts.length - 1 ? total : 0));
  const exact = counts.map((c) => (c * total) / sum);
  const floors = exact.map(Math.floor);
  let left = total - floors.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (const [, i] of order) {
    if (left <= 0) break;
    floors[i] = (floors[i] ?? 0) + 1;
    left--;
  }
  return floors;
}

const NO_SPECIAL = { disallowedSpecial: new Set<string>() };
/** Texts where the tokenizer's pre-split is delicate: whitespace before words and at the end,
 * newlines, contractions, digit runs, JSON, non-Latin scripts, combining marks, emoji, special tokens. */
const TRICKY = [
  'hello world',
  '   leading and trailing   ',
  'a  b   c\n\n  d\r\n\te',
  "don't I'M we'll THEY'RE it's o'clock",
  '1234567 3.14159 -42 1e10',
  '{"flights":[{"id":"FL1-0","from":"SFO","price":215}],"note":"page 1"}',
  'Straße naïve café résumé',
  'e\u0301 combining a\u0308',
  '東京から大阪まで新幹線で',
  'Привет, мир! مرحبا',
  'emoji 🚀✈️👩‍💻 done',
  'tabs\tand\u00a0nbsp',
  'a<|endoftext|>b <|im_start|>user',
  '\n',
  ' ',
  'x',
];

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

  it('splits the remainder exactly as sorting by fraction does', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(5000), { minLength: 0, maxLength: 9 }), fc.nat(200000), (counts, total) => {
        expect(scaleToTotal(counts, total)).toEqual(scaleBySort(counts, total));
      }),
    );
    expect(scaleToTotal([1, 1, 1], 2)).toEqual([1, 1, 0]);
  });

  it('counts every text as gpt-tokenizer does, with and without its cache', () => {
    const cached = new TokenCounter();
    const fresh = new TokenCounter({ cache: false });
    const check = (text: string): void => {
      const expected = countTokens(text, NO_SPECIAL);
      expect(cached.count(text)).toBe(expected);
      expect(cached.count(text)).toBe(expected); // a cache hit
      expect(fresh.count(text)).toBe(expected);
    };
    for (const text of TRICKY) check(text);
    check(TRICKY.join(' '));
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 80 }), check), { numRuns: 150 });
    fc.assert(fc.property(fc.string({ unit: 'binary-ascii', maxLength: 80 }), check), { numRuns: 150 });
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...TRICKY, ' ', '\n', "'s", '9'), { maxLength: 12 }), (parts) =>
        check(parts.join('')),
      ),
      { numRuns: 150 },
    );
  });

  it('counts special-token text as plain text instead of failing', () => {
    expect(() => countTokens('<|endoftext|>')).toThrow();
    expect(new TokenCounter().count('<|endoftext|>')).toBe(countTokens('<|endoftext|>', NO_SPECIAL));
    expect(new TokenCounter().count('<|endoftext|>')).toBeGreaterThan(1);
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
