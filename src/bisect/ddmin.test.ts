import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyHunks, ddminPromptHunks, promptHunks, splitHunks } from './ddmin.js';

const OLD = [
  'You are a travel desk agent.',
  'Greet the user politely.',
  'Search flights before booking.',
  'Prefer the cheapest flight.',
  'Use metric units.',
  'Keep answers short.',
  'Confirm the passenger name.',
  'Do not book without consent.',
  'Sign off with "Safe travels".',
  'Quote prices in USD.',
  'Mention the baggage policy.',
  'End the conversation when done.',
  '',
].join('\n');

// Six separated edits; only the one about failed bookings fixes the run.
const NEW = OLD.replace('Greet the user politely.', 'Greet the user warmly.')
  .replace(
    'Prefer the cheapest flight.',
    'Prefer the cheapest flight.\nIf a booking fails, book the next cheapest flight and say so.',
  )
  .replace('Keep answers short.', 'Keep answers brief.')
  .replace('Do not book without consent.', 'Never book without consent.')
  .replace('Quote prices in USD.', 'Quote prices in the user currency.')
  .replace('End the conversation when done.', 'End when the user is done.');

const FIX = 'If a booking fails, book the next cheapest flight';

describe('promptHunks / applyHunks', () => {
  it('applies all hunks to get the new prompt and none to keep the old', () => {
    const hunks = promptHunks(OLD, NEW);
    expect(hunks.length).toBeGreaterThanOrEqual(6);
    expect(applyHunks(OLD, hunks)).toBe(NEW);
    expect(applyHunks(OLD, [])).toBe(OLD);
  });

  it('round-trips any pair of texts', () => {
    const line = fc.constantFrom('a', 'b', 'c', 'd', '', 'e f');
    const text = fc
      .array(line, { maxLength: 12 })
      .chain((lines) => fc.boolean().map((nl) => lines.join('\n') + (nl ? '\n' : '')));
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(applyHunks(a, promptHunks(a, b))).toBe(b);
        expect(applyHunks(a, splitHunks(promptHunks(a, b)))).toBe(b);
      }),
    );
  });
});

describe('ddminPromptHunks', () => {
  it('returns the one fixing hunk alone out of six or more', async () => {
    const result = await ddminPromptHunks({
      from: OLD,
      to: NEW,
      recordingId: 'baseline',
      probe: async (text) => ({ ok: text.includes(FIX), cost: 0.01 }),
    });
    expect(result.hunks.length).toBeGreaterThanOrEqual(6);
    expect(result.minimal).toHaveLength(1);
    const hunk = result.hunks[result.minimal[0]!]!;
    expect(hunk.lines.join('\n')).toContain(FIX);
    expect(result.prompt).toContain(FIX);
    expect(result.prompt).toContain('Greet the user politely.');
    expect(result.fromOk).toBe(false);
    expect(result.toOk).toBe(true);
    expect(result.stats.cost).toBeCloseTo(result.stats.replays * 0.01);
  });

  it('finds a pair of hunks that only flip the outcome together', async () => {
    const result = await ddminPromptHunks({
      from: OLD,
      to: NEW,
      recordingId: 'baseline',
      probe: async (text) => ({ ok: text.includes('Keep answers brief.') && text.includes('user currency') }),
    });
    expect(result.minimal).toHaveLength(2);
    expect(result.prompt).toContain('Keep answers brief.');
    expect(result.prompt).toContain('user currency');
  });

  it('refuses when both prompts have the same outcome', async () => {
    await expect(
      ddminPromptHunks({ from: OLD, to: NEW, recordingId: 'r', probe: async () => ({ ok: true }) }),
    ).rejects.toThrow(/both prompts pass/);
  });
});

describe('ddmin on the example prompts (baseline -> fixed adds three rules in one hunk)', () => {
  const dir = resolve(import.meta.dirname, '../../examples/prompts');
  const from = readFileSync(resolve(dir, 'baseline.txt'), 'utf8');
  const to = readFileSync(resolve(dir, 'fixed.txt'), 'utf8');

  it('splits the one hunk into lines and finds the rule that flips the outcome alone', async () => {
    // Deterministic probe standing in for a replay: the run passes when the prompt forbids assumed ids.
    const result = await ddminPromptHunks({
      from,
      to,
      recordingId: 'openai-baseline',
      probe: async (text) => ({ ok: /use only ids returned by tools/.test(text) }),
    });
    expect(promptHunks(from, to)).toHaveLength(1);
    expect(result.hunks).toHaveLength(3);
    expect(result.minimal).toHaveLength(1);
    expect(result.prompt).toMatch(/use only ids returned by tools/);
    expect(result.prompt).not.toMatch(/search_policies|get_booking/);
  });

  it('keeps whole hunks when asked to', async () => {
    const result = await ddminPromptHunks({
      from,
      to,
      granularity: 'hunk',
      recordingId: 'openai-baseline',
      probe: async (text) => ({ ok: /use only ids returned by tools/.test(text) }),
    });
    expect(result.hunks).toHaveLength(1);
    expect(result.prompt).toBe(to);
  });
});
