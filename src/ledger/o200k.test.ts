import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { describe, expect, it } from 'vitest';
import { countPieceTokens, deserializeRankTable, parseTiktoken, serializeRankTable } from './o200k.js';

const NO_SPECIAL = { disallowedSpecial: new Set<string>() };
const split = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'gu');
const count = (text: string): number => (text.match(split) ?? []).reduce((n, p) => n + countPieceTokens(p), 0);

// Fragments that exercise every pre-tokenizer class and BPE path: ASCII words and JSON, digits,
// whitespace runs, accents (precomposed and combining), CJK, emoji (astral, ZWJ), a lone surrogate,
// special-token text, and long single-class runs.
const FRAGMENTS = [
  'a',
  'Z',
  'the',
  ' Hello',
  "'s",
  '{"id":',
  '":',
  ',',
  ' ',
  '  ',
  '\n',
  '\r\n',
  '\t',
  '0',
  '123',
  '4567',
  'é',
  'e\u0301',
  'ß',
  'ą',
  '—',
  '日本語',
  '한국어',
  'Привет',
  '🙂',
  '👩‍💻',
  '\uD83D',
  '<|endoftext|>',
  'x'.repeat(40),
  ' '.repeat(17),
  '9'.repeat(12),
  '!?'.repeat(9),
];

describe('o200k piece counting', () => {
  it('counts any text exactly as gpt-tokenizer does', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 30 }),
        fc.string({ maxLength: 40 }),
        (parts, noise) => {
          const text = parts.join('') + noise;
          expect(count(text)).toBe(countTokens(text, NO_SPECIAL));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('counts the example recordings’ bodies as gpt-tokenizer does', () => {
    const events = readFileSync('recordings/examples/openai-baseline/events.jsonl', 'utf8');
    for (const line of events.split('\n').filter(Boolean)) expect(count(line)).toBe(countTokens(line, NO_SPECIAL));
  });

  it('a long run of one character costs n log n, not n²', () => {
    const t0 = performance.now();
    expect(countPieceTokens('a'.repeat(200_000))).toBe(25_000);
    expect(countPieceTokens('a'.repeat(5000))).toBe(countTokens('a'.repeat(5000)));
    expect(performance.now() - t0).toBeLessThan(20_000);
  });

  it('the prebuilt table holds what the text file holds', () => {
    const text = readFileSync(createRequire(import.meta.url).resolve('gpt-tokenizer/data/o200k_base.tiktoken'));
    const table = parseTiktoken(text);
    expect(table.ranks.length).toBe(text.toString('latin1').trim().split('\n').length);
    const back = deserializeRankTable(serializeRankTable(table, text.length), text.length);
    expect(back?.ranks).toEqual(table.ranks);
    expect(back?.offsets).toEqual(table.offsets);
    expect(back?.slots).toEqual(table.slots);
    expect(Buffer.from(back?.bytes ?? []).equals(Buffer.from(table.bytes))).toBe(true);
    // A table built from another version of the text file is not used.
    expect(deserializeRankTable(serializeRankTable(table, text.length), text.length + 1)).toBeUndefined();
    // Without a size to check (dist/: the table and the bundled tokenizer code come from one build).
    expect(deserializeRankTable(serializeRankTable(table, text.length))?.ranks).toEqual(table.ranks);
    expect(deserializeRankTable(new Uint8Array(64))).toBeUndefined();
  });
});
