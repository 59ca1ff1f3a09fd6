// Prompt overrides rewrite the system prompt where each provider API keeps it.
import { createPatch } from 'diff';
import { describe, expect, it } from 'vitest';
import { promptSimilarity, systemPromptOf } from '../providers/index.js';
import { TapedeckError } from '../recording/index.js';
import { applyOverride, isTargetPrompt, overrideRequestBody, type PromptOverride, promptTarget } from './prompt.js';

describe('prompt overrides', () => {
  it('replaces the system message of a Chat Completions request, folding several into one', () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'system', content: 'old' },
        { role: 'system', content: [{ type: 'text', text: 'more' }] },
        { role: 'user', content: 'hi' },
      ],
    };
    expect(systemPromptOf('openai.chat.completions', body)).toBe('old\n\nmore');
    const out = JSON.parse(
      overrideRequestBody('openai.chat.completions', JSON.stringify(body), { kind: 'replace', text: 'new' }),
    );
    expect(out.messages).toEqual([
      { role: 'system', content: 'new' },
      { role: 'user', content: 'hi' },
    ]);
  });

  // Instructions and memory sent as separate system messages (as frameworks with memory do): a change of one
  // leaves the others as they were.
  it('keeps several Chat Completions system messages several, changing only the one the override changes', () => {
    const instructions = {
      role: 'system',
      content: [{ type: 'text', text: 'You are a desk.', cache_control: { type: 'ephemeral' } }],
    };
    const body = JSON.stringify({
      model: 'm',
      messages: [instructions, { role: 'system', content: 'Memory: none.' }, { role: 'user', content: 'hi' }],
    });
    const recorded = 'You are a desk.\n\nMemory: none.';
    expect(systemPromptOf('openai.chat.completions', JSON.parse(body))).toBe(recorded);
    const memory = createPatch('p', recorded, recorded.replace('none', 'Paris'));
    expect(
      JSON.parse(overrideRequestBody('openai.chat.completions', body, { kind: 'patch', patch: memory })).messages,
    ).toEqual([instructions, { role: 'system', content: 'Memory: Paris.' }, { role: 'user', content: 'hi' }]);
    const desk = createPatch('p', recorded, recorded.replace('a desk', 'a terse desk'));
    expect(
      JSON.parse(overrideRequestBody('openai.chat.completions', body, { kind: 'patch', patch: desk })).messages,
    ).toEqual([
      { role: 'system', content: 'You are a terse desk.' },
      { role: 'system', content: 'Memory: none.' },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('keeps the developer role', () => {
    const dev = { messages: [{ role: 'developer', content: 'old' }] };
    expect(
      JSON.parse(overrideRequestBody('openai.chat.completions', JSON.stringify(dev), { kind: 'replace', text: 'new' }))
        .messages,
    ).toEqual([{ role: 'developer', content: 'new' }]);
  });

  it('leaves a request with no system prompt byte for byte as it was, whatever the provider and the override', () => {
    // A call inside a tool (a RAG answer writer) never had a prompt: neither a new one nor a patch gives it one.
    const none: Array<[string, unknown]> = [
      ['openai.chat.completions', { model: 'm', messages: [{ role: 'user', content: 'Context: …' }] }],
      ['openai.responses', { model: 'm', input: [{ role: 'user', content: 'hi' }] }],
      ['openai.responses', { model: 'm', input: 'hi' }],
      ['anthropic.messages', { model: 'c', max_tokens: 9, messages: [{ role: 'user', content: 'hi' }] }],
      ['google.generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }],
    ];
    const patch = createPatch('prompt', 'Paris\n', 'Oslo\n');
    for (const [api, body] of none) {
      const text = `${JSON.stringify(body, null, 1)}\n`;
      expect(overrideRequestBody(api, text, { kind: 'replace', text: 'new' }), api).toBe(text);
      expect(overrideRequestBody(api, text, { kind: 'patch', patch }), api).toBe(text);
    }
  });

  it('sets Responses instructions and Anthropic system (keeping cache_control)', () => {
    const responses = { model: 'm', instructions: 'old', input: 'hi' };
    expect(
      JSON.parse(overrideRequestBody('openai.responses', JSON.stringify(responses), { kind: 'replace', text: 'new' }))
        .instructions,
    ).toBe('new');
    const anthropic = {
      model: 'c',
      system: [{ type: 'text', text: 'old', cache_control: { type: 'ephemeral' } }],
      messages: [],
    };
    expect(
      JSON.parse(overrideRequestBody('anthropic.messages', JSON.stringify(anthropic), { kind: 'replace', text: 'new' }))
        .system,
    ).toEqual([{ type: 'text', text: 'new', cache_control: { type: 'ephemeral' } }]);
  });

  // An Anthropic system prompt given as several blocks (a long cached instruction, then a short
  // per-run one) stays a list of blocks: the blocks an override leaves whole keep their text and
  // cache breakpoints, only the changed text takes the place of the blocks it changed.
  it('keeps an Anthropic system of several blocks a list, each unchanged block with its cache_control', () => {
    const cached = {
      type: 'text',
      text: 'You are a travel desk.\nBook only for the traveler on file.',
      cache_control: { type: 'ephemeral' },
    };
    const today = { type: 'text', text: 'Today is 2026-11-24.' };
    const body = JSON.stringify({ model: 'c', system: [cached, today], messages: [{ role: 'user', content: 'hi' }] });
    const recorded = systemPromptOf('anthropic.messages', JSON.parse(body));
    expect(recorded).toBe(`${cached.text}\n${today.text}`);
    const systemAfter = (override: PromptOverride) =>
      JSON.parse(overrideRequestBody('anthropic.messages', body, override)).system as unknown[];
    // A patch of the per-run block: the cached block goes out as it was.
    const date = createPatch('p', recorded ?? '', (recorded ?? '').replace('2026-11-24', '2026-11-25'));
    expect(systemAfter({ kind: 'patch', patch: date })).toEqual([
      cached,
      { type: 'text', text: 'Today is 2026-11-25.' },
    ]);
    // A patch of the cached block: its breakpoint stays on it, the per-run block is untouched.
    const rule = createPatch('p', recorded ?? '', (recorded ?? '').replace('on file.', 'on file, once.'));
    expect(systemAfter({ kind: 'patch', patch: rule })).toEqual([
      { ...cached, text: 'You are a travel desk.\nBook only for the traveler on file, once.' },
      today,
    ]);
    // A new prompt that keeps the per-run block at its end.
    expect(systemAfter({ kind: 'replace', text: `You are a terse travel desk.\n${today.text}` })).toEqual([
      { type: 'text', text: 'You are a terse travel desk.', cache_control: { type: 'ephemeral' } },
      today,
    ]);
    // A wholly new prompt: one block, with the breakpoint the replaced blocks had.
    expect(systemAfter({ kind: 'replace', text: 'New.' })).toEqual([
      { type: 'text', text: 'New.', cache_control: { type: 'ephemeral' } },
    ]);
    // The same prompt: the same blocks.
    expect(systemAfter({ kind: 'replace', text: recorded ?? '' })).toEqual([cached, today]);
  });

  it('applies a unified diff to the recorded prompt, and says so when it does not apply', () => {
    const old = 'Work quickly.\nBook the cheapest flight.\n';
    const patch = createPatch(
      'prompt',
      old,
      'Work quickly.\nLook up the passenger first.\nBook the cheapest flight.\n',
    );
    expect(applyOverride(old, { kind: 'patch', patch })).toBe(
      'Work quickly.\nLook up the passenger first.\nBook the cheapest flight.\n',
    );
    expect(() => applyOverride('Something else entirely.\n', { kind: 'patch', patch })).toThrow(TapedeckError);
    // An agent that read the patched prompt from SYSTEM_PROMPT already sends it: it is not patched twice.
    const result = applyOverride(old, { kind: 'patch', patch });
    expect(applyOverride(result, { kind: 'patch', patch, result })).toBe(result);
  });

  it("changes one agent's prompt in a run of several; the others' requests go out byte for byte", () => {
    const desk = 'You are the front desk of Hotel Nord. Today is 2026-11-28. Ask the forecaster, then answer politely.';
    const forecaster = 'You are the forecaster. Call get_forecast and report the sky in one line.';
    const override = {
      kind: 'replace',
      text: 'new',
      target: promptTarget(desk, [desk, forecaster, forecaster, desk]),
    } as const;
    expect(override.target.others).toEqual([forecaster]);
    const body = (system: string) =>
      JSON.stringify({
        model: 'm',
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: 'hi' },
        ],
      });
    const sent = (system: string) =>
      systemPromptOf(
        'openai.chat.completions',
        JSON.parse(overrideRequestBody('openai.chat.completions', body(system), override)),
      );
    expect(sent(desk)).toBe('new');
    expect(overrideRequestBody('openai.chat.completions', body(forecaster), override)).toBe(body(forecaster));
    // The desk's prompt on another day is still the desk's; the forecaster's, reworded a little, still the forecaster's.
    expect(sent(desk.replace('2026-11-28', '2026-11-29'))).toBe('new');
    expect(sent(forecaster.replace('one line', 'a single line'))).toBe(forecaster.replace('one line', 'a single line'));
    // With one agent in the run, every prompt is its own, however it varies.
    const alone = { kind: 'replace', text: 'new', target: promptTarget(desk, [desk]) } as const;
    expect(isTargetPrompt('Something else entirely', alone)).toBe(true);
  });

  it('tells prompts of one agent from those of two by their word pairs', () => {
    const a = 'You are a careful travel agent. Book the cheapest flight and confirm with the passenger.';
    expect(promptSimilarity(a, a)).toBe(1);
    expect(promptSimilarity(a, a.replace('cheapest', 'earliest'))).toBeGreaterThan(0.6);
    expect(promptSimilarity(a, 'You are a refunds clerk. Refund the order if the policy allows it.')).toBeLessThan(0.3);
    expect(promptSimilarity('', a)).toBe(0);
  });
});
