import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyHunks, ddminPromptHunks, promptHunks } from './ddmin.js';

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
