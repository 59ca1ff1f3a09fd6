import { describe, expect, it } from 'vitest';
import { wireOf, wireOfText } from './protocol.js';

describe('wireOfText', () => {
  it("is wireOf of the text's UTF-8 bytes, for any text", () => {
    const texts = [
      '',
      'plain ascii {"ok":true}',
      'Grüße, 東京, 💸 and \u0000 and \u2028',
      '\ud800 lone high',
      'lone low \udc00',
      '\udbff\udfff paired',
      `${'y'.repeat(5000)}\ud83d`,
    ];
    for (const text of texts) expect(wireOfText(text), JSON.stringify(text)).toEqual(wireOf(Buffer.from(text, 'utf8')));
  });
});
