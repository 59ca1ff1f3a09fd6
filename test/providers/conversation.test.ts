// The model calls of WebSocket conversations, decoded message by message (src/providers/
// conversation.ts): OpenAI Realtime in its beta event names too, a response the server began itself
// (its VAD), an out-of-band response, audio transcripts as text; Gemini Live (JSON in binary frames,
// snake_case keys, a tool call, usageMetadata's responseTokenCount); a conversation that speaks no
// model API gives none. The recorded calls read back (turns, tools) as their HTTP siblings' do.
import { describe, expect, it } from 'vitest';
import { ConversationCalls, toolsOf, turnsOf, type WireMessage } from '../../src/providers/index.js';

const agent = (json: object, atMs: number): WireMessage => ({ from: 'agent', data: JSON.stringify(json), atMs });
const server = (json: object, atMs: number): WireMessage => ({ from: 'server', data: JSON.stringify(json), atMs });

describe('OpenAI Realtime conversations', () => {
  it('decodes beta events, a server-begun response and audio transcripts, across turns', () => {
    const calls = new ConversationCalls();
    const url = 'wss://api.example/v1/realtime?model=gpt-4o-realtime-preview';
    expect(
      calls.turn('c1', url, [
        server({ type: 'session.created', session: { object: 'realtime.session', instructions: 'Be brief.' } }, 0),
      ]),
    ).toEqual([]);
    // The user spoke; the server's VAD committed the audio, transcribed it and began a response.
    const turn = calls.turn('c1', url, [
      server(
        {
          type: 'conversation.item.created',
          item: { id: 'u1', type: 'message', role: 'user', content: [{ type: 'input_audio' }] },
        },
        100,
      ),
      server(
        {
          type: 'conversation.item.input_audio_transcription.completed',
          item_id: 'u1',
          content_index: 0,
          transcript: 'hi there',
        },
        110,
      ),
      server({ type: 'response.created', response: { id: 'r1' } }, 120),
      server({ type: 'response.audio_transcript.delta', response_id: 'r1', delta: 'Hello' }, 150),
      server({ type: 'response.audio.delta', response_id: 'r1', delta: 'AAAA' }, 151),
    ]);
    expect(turn).toEqual([]);
    const [call] = calls.turn('c1', url, [
      server(
        {
          type: 'response.done',
          response: {
            id: 'r1',
            status: 'completed',
            output: [
              { id: 'a1', type: 'message', role: 'assistant', content: [{ type: 'audio', transcript: 'Hello!' }] },
            ],
            usage: {
              input_tokens: 50,
              output_tokens: 30,
              input_token_details: { cached_tokens: 10, audio_tokens: 40 },
              output_token_details: { audio_tokens: 25, text_tokens: 5 },
            },
          },
        },
        400,
      ),
    ]);
    expect(call).toMatchObject({
      api: 'realtime',
      model: 'gpt-4o-realtime-preview',
      system: 'Be brief.',
      output: { text: 'Hello!', toolCalls: [] },
      stopReason: 'completed',
      usage: { inputUncached: 40, cacheRead: 10, cacheWrite: 0, output: 30, reasoning: 0 },
      latencyMs: 280,
      ttftMs: 30,
    });
    // The user's audio is read by its transcript.
    expect(turnsOf(call as NonNullable<typeof call>).map((t) => [t.role, t.parts])).toEqual([
      ['system', [{ kind: 'text', text: 'Be brief.' }]],
      ['user', [{ kind: 'text', text: 'hi there' }]],
    ]);
  });

  it('an out-of-band response reads its own input and instructions, and leaves the conversation as it was', () => {
    const calls = new ConversationCalls();
    const url = 'ws://127.0.0.1:9/openai/realtime?deployment=gpt-realtime&api-version=x';
    calls.turn('c', url, [
      agent(
        {
          type: 'session.update',
          session: { instructions: 'Main.', tools: [{ type: 'function', name: 'lookup', parameters: {} }] },
        },
        0,
      ),
      agent(
        {
          type: 'conversation.item.create',
          item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Q1' }] },
        },
        1,
      ),
    ]);
    const [side] = calls.turn('c', url, [
      agent(
        {
          type: 'response.create',
          response: {
            conversation: 'none',
            instructions: 'Classify.',
            input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'X' }] }],
          },
        },
        10,
      ),
      server({ type: 'response.created', response: { id: 'oob' } }, 20),
      server(
        {
          type: 'response.done',
          response: {
            id: 'oob',
            status: 'completed',
            output: [{ id: 'o', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'spam' }] }],
          },
        },
        60,
      ),
    ]);
    expect(side).toMatchObject({ model: 'gpt-realtime', system: 'Classify.', output: { text: 'spam' }, latencyMs: 50 });
    expect(side?.messages).toHaveLength(1);
    expect(side?.usage).toBeUndefined();
    const [main] = calls.turn('c', url, [
      agent({ type: 'response.create' }, 100),
      server({ type: 'response.function_call_arguments.done', call_id: 'k1', name: 'lookup', arguments: '{}' }, 130),
      server({ type: 'response.done', response: { status: 'completed', output: [] } }, 140),
    ]);
    expect(main).toMatchObject({
      system: 'Main.',
      output: { toolCalls: [{ id: 'k1', name: 'lookup', arguments: '{}' }] },
      stopReason: 'tool_calls',
    });
    // Only Q1: the out-of-band answer did not join the conversation.
    expect(main?.messages).toEqual([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Q1' }] }]);
    expect(toolsOf(main as NonNullable<typeof main>).map((t) => t.name)).toEqual(['lookup']);
  });

  it('a conversation that speaks no model API, or a message that is not JSON, gives no model call', () => {
    const calls = new ConversationCalls();
    const feed = [
      server({ type: 'response.done', response: { status: 'completed' } }, 1),
      { from: 'server' as const, data: new Uint8Array([0xff, 0xfe]), atMs: 2 },
    ];
    expect(calls.turn('f', 'wss://feed.example/prices', feed)).toEqual([]);
    expect(calls.turn('g', 'not a url', feed)).toEqual([]);
  });
});

describe('Gemini Live conversations', () => {
  it('decodes a model turn with a tool call, then the answer, from binary JSON frames and snake_case keys', () => {
    const calls = new ConversationCalls();
    const url =
      'wss://generativelanguage.example/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent';
    const bin = (json: object, atMs: number): WireMessage => ({
      from: 'server',
      data: new TextEncoder().encode(JSON.stringify(json)),
      atMs,
    });
    calls.turn('g', url, [
      agent(
        {
          setup: {
            model: 'models/gemini-2.0-flash-live-001',
            system_instruction: { parts: [{ text: 'Be a guide.' }] },
            tools: [{ functionDeclarations: [{ name: 'find' }] }],
          },
        },
        0,
      ),
      bin({ setupComplete: {} }, 5),
    ]);
    const [decided] = calls.turn('g', url, [
      agent(
        { client_content: { turns: [{ role: 'user', parts: [{ text: 'Find a museum' }] }], turn_complete: true } },
        10,
      ),
      bin(
        {
          toolCall: { functionCalls: [{ id: 'f1', name: 'find', args: { kind: 'museum' } }] },
          usageMetadata: { promptTokenCount: 30, responseTokenCount: 6, totalTokenCount: 36 },
        },
        70,
      ),
    ]);
    expect(decided).toMatchObject({
      provider: 'google',
      api: 'live',
      model: 'gemini-2.0-flash-live-001',
      system: 'Be a guide.',
      output: { toolCalls: [{ id: 'f1', name: 'find', arguments: '{"kind":"museum"}' }] },
      stopReason: 'tool_calls',
      usage: { inputUncached: 30, cacheRead: 0, output: 6 },
      latencyMs: 60,
    });
    const [answered] = calls.turn('g', url, [
      agent({ toolResponse: { functionResponses: [{ id: 'f1', name: 'find', response: { name: 'Louvre' } }] } }, 100),
      bin({ serverContent: { modelTurn: { parts: [{ text: 'Try the ' }] } } }, 120),
      bin(
        {
          serverContent: { modelTurn: { parts: [{ text: 'Louvre.' }] }, turnComplete: true },
          usageMetadata: { promptTokenCount: 50, cachedContentTokenCount: 20, responseTokenCount: 4 },
        },
        150,
      ),
    ]);
    expect(answered).toMatchObject({
      output: { text: 'Try the Louvre.', toolCalls: [] },
      stopReason: 'turn_complete',
      usage: { inputUncached: 30, cacheRead: 20, output: 4 },
      latencyMs: 50,
      ttftMs: 20,
    });
    // Read as a generateContent call's contents: the question, the model's call, the tool's answer.
    expect(turnsOf(answered as NonNullable<typeof answered>).map((t) => t.parts.map((p) => p.kind).join())).toEqual([
      'text',
      'text',
      'tool-call',
      'tool-result',
    ]);
  });
});
