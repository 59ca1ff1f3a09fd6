// The stream framings a provider can name, decoded from recorded chunks: an event split across
// chunks is one event stamped with the chunk that completed it, and a damaged stream (a recording is
// untrusted input) yields the events before the damage, never a throw.
import { EventStreamCodec } from '@smithy/core/event-streams';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StreamChunk } from '../recording/types.js';
import { streamEvents } from './framing.js';

const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);
const frame = (type: string, payload: unknown): Buffer =>
  Buffer.from(
    codec.encode({
      headers: {
        ':event-type': { type: 'string', value: type },
        ':message-type': { type: 'string', value: 'event' },
      },
      body: new TextEncoder().encode(JSON.stringify(payload)),
    }),
  );

/** `bytes` cut at `cuts`, each piece a base64 chunk at offset = its index. */
function cut(bytes: Buffer, cuts: number[]): StreamChunk[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const edges = [0, ...at, bytes.length];
  return edges.slice(1).map((end, i) => ({
    offsetMs: i,
    data: bytes.subarray(edges[i], end).toString('base64'),
    encoding: 'base64' as const,
  }));
}

describe('NDJSON', () => {
  it('makes one event per line, wherever the chunks cut, stamped with the chunk that ended it', () => {
    const events = streamEvents('ndjson', [
      { offsetMs: 1, data: '{"a":1}\n{"b"' },
      { offsetMs: 5, data: ':2}\n\n' },
      { offsetMs: 9, data: '{"c":3}' },
    ]);
    expect(events).toEqual([
      { data: '{"a":1}', offsetMs: 1 },
      { data: '{"b":2}', offsetMs: 5 },
      { data: '{"c":3}', offsetMs: 9 },
    ]);
  });
});

describe('the AWS event stream', () => {
  const messages = [
    frame('messageStart', { role: 'assistant' }),
    frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hé, ' } }),
    frame('metadata', { usage: { inputTokens: 3, outputTokens: 2 } }),
  ];
  const whole = Buffer.concat(messages);

  it('decodes the same events however the bytes are cut into chunks', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
        const events = streamEvents('aws-eventstream', cut(whole, cuts));
        expect(events.map((e) => [e.event, JSON.parse(e.data)])).toEqual([
          ['messageStart', { role: 'assistant' }],
          ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hé, ' } }],
          ['metadata', { usage: { inputTokens: 3, outputTokens: 2 } }],
        ]);
      }),
    );
  });

  it('stops at a damaged message (a checksum that fails, a cut, a length past the end) without throwing', () => {
    const damaged = Buffer.from(whole);
    const second = (messages[0] as Buffer).length;
    damaged[second + 20] = (damaged[second + 20] as number) ^ 0xff;
    expect(streamEvents('aws-eventstream', cut(damaged, [])).map((e) => e.event)).toEqual(['messageStart']);
    expect(streamEvents('aws-eventstream', cut(whole.subarray(0, whole.length - 3), [])).map((e) => e.event)).toEqual([
      'messageStart',
      'contentBlockDelta',
    ]);
    const huge = Buffer.from(whole);
    huge.writeUInt32BE(0xfffffff0, second);
    expect(streamEvents('aws-eventstream', cut(huge, [])).map((e) => e.event)).toEqual(['messageStart']);
    expect(streamEvents('aws-eventstream', [{ offsetMs: 0, data: 'not an event stream' }])).toEqual([]);
  });
});
