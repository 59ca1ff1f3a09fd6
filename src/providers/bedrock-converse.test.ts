// A ConverseStream answer decodes the same whether it was recorded chunk by chunk (over HTTP/2, the
// Bedrock client's default) or kept whole as the body's bytes (the HTTP/1.1 capture layers keep a
// binary stream whole): only the time to first token needs the chunks.
import { EventStreamCodec } from '@smithy/core/event-streams';
import { describe, expect, it } from 'vitest';
import { bedrockConverse } from './bedrock-converse.js';
import { decodeModelCall } from './model-call.js';

const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);
const frame = (type: string, payload: unknown) =>
  Buffer.from(
    codec.encode({
      headers: { ':event-type': { type: 'string', value: type }, ':message-type': { type: 'string', value: 'event' } },
      body: new TextEncoder().encode(JSON.stringify(payload)),
    }),
  );
const frames = [
  frame('messageStart', { role: 'assistant' }),
  frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Booking.' } }),
  frame('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't1', name: 'book_flight' } } }),
  frame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"flight_id":' } } }),
  frame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '"FL-102"}' } } }),
  frame('messageStop', { stopReason: 'tool_use' }),
  frame('metadata', { usage: { inputTokens: 9, outputTokens: 4, cacheReadInputTokens: 64, cacheWriteInputTokens: 0 } }),
];
const request = {
  method: 'POST',
  url: new URL(
    'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream',
  ),
  headers: {},
  json: { messages: [{ role: 'user', content: [{ text: 'Book it' }] }], system: [{ text: 'You book.' }] },
};
const headers = { 'content-type': 'application/vnd.amazon.eventstream' };

describe('bedrock.converse streams', () => {
  it('decodes chunks and a whole body alike; only chunks tell the first token', () => {
    const chunked = decodeModelCall(bedrockConverse, request, {
      status: 200,
      headers,
      chunks: frames.map((f, i) => ({ offsetMs: i * 10, data: f.toString('base64'), encoding: 'base64' as const })),
    });
    const whole = decodeModelCall(bedrockConverse, request, { status: 200, headers, bytes: Buffer.concat(frames) });
    const { firstTokenOffsetMs, ...rest } = chunked;
    expect(firstTokenOffsetMs).toBe(10);
    expect(whole).toEqual(rest);
    expect(whole).toMatchObject({
      model: 'anthropic.claude-3-5-haiku-20241022-v1:0',
      streamed: true,
      system: 'You book.',
      output: { text: 'Booking.', toolCalls: [{ id: 't1', name: 'book_flight', arguments: '{"flight_id":"FL-102"}' }] },
      stopReason: 'tool_use',
      usage: { inputUncached: 9, cacheRead: 64, cacheWrite: 0, output: 4, reasoning: 0 },
    });
  });
});
