// Claude on Bedrock InvokeModel and on Vertex AI: only the platform's requests are claimed (not
// another model family's body on the same route, not Vertex's token counting), the model is the
// path's id whatever the answer names, a Bedrock stream's chunks unwrap to Anthropic's events
// whether recorded chunk by chunk or whole, and the prompt override rewrites the platform's body.
import { EventStreamCodec } from '@smithy/core/event-streams';
import { describe, expect, it } from 'vitest';
import { bedrockInvoke, vertexAnthropic } from './anthropic-platforms.js';
import { decodeModelCall, detectProvider, systemPromptOf, withSystemPrompt } from './model-call.js';
import type { ProviderRequest } from './types.js';

const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);
const frame = (type: string, payload: unknown, kind = ':event-type') =>
  Buffer.from(
    codec.encode({
      headers: { [kind]: { type: 'string', value: type }, ':message-type': { type: 'string', value: 'event' } },
      body: new TextEncoder().encode(JSON.stringify(payload)),
    }),
  );
const chunk = (event: Record<string, unknown>) =>
  frame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: 'abcdefghij' });

const answerModel = 'claude-3-5-haiku-20241022';
const frames = [
  chunk({
    type: 'message_start',
    message: {
      model: answerModel,
      usage: { input_tokens: 12, cache_read_input_tokens: 300, cache_creation_input_tokens: 0, output_tokens: 1 },
    },
  }),
  chunk({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Booking.' } }),
  chunk({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'book' } }),
  chunk({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"flight":' } }),
  chunk({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"FL-102"}' } }),
  frame('internalServerException', { message: 'ignored' }, ':exception-type'),
  chunk({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }),
  chunk({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 12, outputTokenCount: 9 } }),
];
const body = {
  anthropic_version: 'bedrock-2023-05-31',
  max_tokens: 512,
  system: [{ type: 'text', text: 'You book flights.', cache_control: { type: 'ephemeral' } }],
  messages: [{ role: 'user', content: 'Book FL-102' }],
};
const bedrock = (path: string, json: unknown = body): ProviderRequest => ({
  method: 'POST',
  url: new URL(`https://bedrock-runtime.us-east-1.amazonaws.com${path}`),
  headers: {},
  json,
});
const vertexPath = '/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-3-5-haiku@20241022';
const vertex = (
  path: string,
  json: unknown = { ...body, anthropic_version: 'vertex-2023-10-16' },
): ProviderRequest => ({
  method: 'POST',
  url: new URL(`https://us-east5-aiplatform.googleapis.com${path}`),
  headers: {},
  json,
});
const stream = { 'content-type': 'application/vnd.amazon.eventstream' };

describe('Claude on Bedrock InvokeModel and Vertex AI', () => {
  it('claims the platforms’ Claude calls, and not another model family’s body on the same route nor token counting', () => {
    const profile = '/model/us.anthropic.claude-3-5-haiku-20241022-v1%3A0';
    expect(detectProvider(bedrock(`${profile}/invoke`))?.id).toBe('bedrock.anthropic.messages');
    expect(detectProvider(bedrock(`${profile}/invoke-with-response-stream`))?.id).toBe('bedrock.anthropic.messages');
    expect(detectProvider(vertex(`${vertexPath}:rawPredict`))?.id).toBe('vertex.anthropic.messages');
    expect(detectProvider(vertex(`${vertexPath}:streamRawPredict`))?.id).toBe('vertex.anthropic.messages');
    // Llama, Titan, Mistral on InvokeModel: their own bodies, not Claude's.
    expect(detectProvider(bedrock('/model/meta.llama3-8b-instruct-v1%3A0/invoke', { prompt: 'hi' }))).toBeUndefined();
    expect(detectProvider(bedrock('/model/amazon.titan-text-v1/invoke', { inputText: 'hi' }))).toBeUndefined();
    const mistral = { messages: [{ role: 'user', content: 'hi' }], max_tokens: 9 };
    expect(detectProvider(bedrock('/model/mistral.mistral-large-2402-v1%3A0/invoke', mistral))).toBeUndefined();
    const counting = { ...body, anthropic_version: 'vertex-2023-10-16', model: 'claude-3-5-haiku@20241022' };
    const countPath = '/v1/projects/p/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict';
    expect(detectProvider(vertex(countPath, counting))).toBeUndefined();
  });

  it('names the call by the path’s model id (an inference profile, an ARN), not the answer’s name of it', () => {
    const arn = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0';
    const answer = {
      model: answerModel,
      content: [{ type: 'text', text: 'Done.' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 5, output_tokens: 2, cache_creation_input_tokens: 40, cache_read_input_tokens: 0 },
    };
    const response = { status: 200, headers: {}, json: answer };
    const call = decodeModelCall(bedrockInvoke, bedrock(`/model/${encodeURIComponent(arn)}/invoke`), response);
    expect(call).toMatchObject({
      provider: 'bedrock',
      api: 'anthropic.messages',
      model: arn,
      system: 'You book flights.',
    });
    expect(call.usage).toEqual({ inputUncached: 5, cacheRead: 0, cacheWrite: 40, output: 2, reasoning: 0 });
    const onVertex = decodeModelCall(vertexAnthropic, vertex(`${vertexPath}:rawPredict`), response);
    expect(onVertex).toMatchObject({
      provider: 'vertex',
      model: 'claude-3-5-haiku@20241022',
      output: { text: 'Done.' },
    });
    // A recording is untrusted: a malformed escape in the path is kept as it is, never a throw.
    expect(decodeModelCall(bedrockInvoke, bedrock('/model/claude%zz/invoke'), response).model).toBe('claude%zz');
  });

  it('unwraps a response stream’s chunks to Anthropic’s events, recorded chunk by chunk or kept whole', () => {
    const request = bedrock('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke-with-response-stream');
    const chunks = frames.map((f, i) => ({
      offsetMs: 10 * i,
      data: f.toString('base64'),
      encoding: 'base64' as const,
    }));
    const byChunks = decodeModelCall(bedrockInvoke, request, { status: 200, headers: stream, chunks });
    const whole = decodeModelCall(bedrockInvoke, request, {
      status: 200,
      headers: stream,
      bytes: Buffer.concat(frames),
    });
    expect(byChunks).toMatchObject({
      model: 'anthropic.claude-3-5-haiku-20241022-v1:0',
      streamed: true,
      output: { text: 'Booking.', toolCalls: [{ id: 'toolu_1', name: 'book', arguments: '{"flight":"FL-102"}' }] },
      stopReason: 'tool_use',
      usage: { inputUncached: 12, cacheRead: 300, cacheWrite: 0, output: 9, reasoning: 0 },
      firstTokenOffsetMs: 20,
    });
    const { firstTokenOffsetMs: _, ...rest } = byChunks;
    expect(whole).toEqual(rest);
  });

  it('rewrites the system prompt where the platform’s body keeps it, and gives none to a body without one', () => {
    const bedrockId = 'bedrock.anthropic.messages';
    const next = withSystemPrompt(bedrockId, body, 'You book flights for the named traveler.');
    expect(next).toEqual({
      ...body,
      system: [
        { type: 'text', text: 'You book flights for the named traveler.', cache_control: { type: 'ephemeral' } },
      ],
    });
    expect(systemPromptOf(bedrockId, next)).toBe('You book flights for the named traveler.');
    const onVertex = { anthropic_version: 'vertex-2023-10-16', system: 'Old.', messages: [], max_tokens: 9 };
    expect(withSystemPrompt('vertex.anthropic.messages', onVertex, 'New.')).toEqual({ ...onVertex, system: 'New.' });
    const { system: _s, ...bare } = onVertex;
    expect(withSystemPrompt('vertex.anthropic.messages', bare, 'New.')).toBe(bare);
  });
});
