import fc from 'fast-check';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';
import { describe, expect, it } from 'vitest';
import { asciiPieceEnd, isAsciiText } from './pretokenize.js';

const regex = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'gu');
const scan = (text: string): string[] => {
  const pieces: string[] = [];
  for (let p = 0; p < text.length; ) {
    const end = asciiPieceEnd(text, p);
    expect(end).toBeGreaterThan(p);
    pieces.push(text.slice(p, end));
    p = end;
  }
  return pieces;
};
const split = (text: string): string[] => text.match(regex) ?? [];

describe('the ASCII pre-tokenizer scanner', () => {
  it('splits text into the same pieces as the o200k pattern', () => {
    for (const text of [
      '{"flights":[{"id":"FL1-0","price":215}],"note":"page 1"}',
      "Don't SHOUT, it's 2026! HTTPServer's URLs\n\n  indented\r\n\tx  ",
      'a  b   c \n/ !\n/x // \v\f end ',
    ]) {
      expect(scan(text)).toEqual(split(text));
    }
    // Characters chosen so every alternative and its edge (prefix, contraction, CR/LF, slash) meets.
    const chars = fc.constantFrom(...' \t\n\r\v\f/\'"{}[]:,.-_!?aAbBzZsStTdDlLvVeErRmM0129xX');
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 30 }), (parts) => {
        const text = parts.join('');
        expect(scan(text)).toEqual(split(text));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 40 }), (text) => {
        expect(scan(text)).toEqual(split(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('tells ASCII text from the rest', () => {
    expect(isAsciiText('plain {"json": 1}\n')).toBe(true);
    expect(isAsciiText('café')).toBe(false);
    expect(isAsciiText('')).toBe(true);
  });
});
