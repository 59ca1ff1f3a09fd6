// The FAKE model server through the real SDKs: OpenAI Chat Completions and Responses, Anthropic
// Messages and Google Gemini, streaming and not, provider-style usage, and a policy that follows
// the system prompt.
import { readFile } from 'node:fs/promises';
import Anthropic from '@anthropic-ai/sdk';
import { type Content, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROMPTS, startModelServer } from '../../examples/world/index.js';
import type { ModelServer } from '../../examples/world/model-server.js';

let server: ModelServer;
let openai: OpenAI;
let anthropic: Anthropic;
let gemini: GoogleGenAI;
let baseline: string;
let fixed: string;
const user = "Today is 2026-11-24. Hi, it's Dana Reyes. Book me a flight to Denver tomorrow under $300.";
const flightsResult = JSON.stringify({
  flights: [
    {
      id: 'FL-101',
      airline: 'United',
      flight_no: 'UA 455',
      origin: 'SFO',
      destination: 'DEN',
      depart_date: '2026-11-25',
      depart_time: '07:30',
      price_usd: 279,
    },
    {
      id: 'FL-102',
      airline: 'Frontier',
      flight_no: 'F9 1021',
      origin: 'SFO',
      destination: 'DEN',
      depart_date: '2026-11-25',
      depart_time: '13:05',
      price_usd: 189,
    },
  ],
});
const fn = (name: string) => ({
  type: 'function' as const,
  function: { name, parameters: { type: 'object', properties: {} } },
});
const openaiTools = ['search_flights', 'book_flight', 'read_file', 'search_policies'].map(fn);
const anthropicTools = ['search_flights', 'book_flight', 'read_file', 'search_policies'].map((name) => ({
  name,
  input_schema: { type: 'object' as const, properties: {} },
}));

beforeAll(async () => {
  server = await startModelServer();
  openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'fake', maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: server.url, apiKey: 'fake', maxRetries: 0 });
  gemini = new GoogleGenAI({ apiKey: 'fake', httpOptions: { baseUrl: server.url } });
  baseline = await readFile(PROMPTS.baseline, 'utf8');
  fixed = await readFile(PROMPTS.fixed, 'utf8');
});
afterAll(async () => {
  await server?.close();
});

describe('OpenAI Chat Completions (fake)', () => {
  const first = () =>
    [
      { role: 'system' as const, content: baseline },
      { role: 'user' as const, content: user },
    ] satisfies OpenAI.ChatCompletionMessageParam[];

  it('streams a tool call with its arguments split across chunks and a final usage chunk', async () => {
    const stream = await openai.chat.completions.create({
      model: 'gpt-4.1-mini',
      messages: first(),
      tools: openaiTools,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const argPieces = chunks
      .flatMap((c) => c.choices[0]?.delta.tool_calls ?? [])
      .map((t) => t.function?.arguments ?? '');
    expect(argPieces.filter((p) => p !== '').length).toBeGreaterThan(1);
    expect(JSON.parse(argPieces.join(''))).toEqual({ to: 'DEN', date: '2026-11-25', max_price: 300 });
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('tool_calls');
    const last = chunks.at(-1);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(last?.choices).toEqual([]);
    expect(last?.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(last?.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    expect(last?.usage?.completion_tokens_details?.reasoning_tokens).toBeGreaterThan(0);
  });

  it('answers the same decision without streaming, and reports cached tokens once there is history', async () => {
    const res = await openai.chat.completions.create({ model: 'gpt-4.1-mini', messages: first(), tools: openaiTools });
    const call = res.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function.name).toBe('search_flights');
    const next = await openai.chat.completions.create({
      model: 'gpt-4.1-mini',
      tools: openaiTools,
      messages: [...first(), res.choices[0]!.message, { role: 'tool', tool_call_id: call!.id, content: flightsResult }],
    });
    const booking = next.choices[0]?.message.tool_calls?.[0];
    expect(booking?.type === 'function' && JSON.parse(booking.function.arguments)).toEqual({
      flight_id: 'FL-102',
      passenger_id: 'P-100',
    });
    expect(next.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
    expect(next.usage!.prompt_tokens_details!.cached_tokens!).toBeLessThanOrEqual(next.usage!.prompt_tokens);
  });
});

describe('Anthropic Messages (fake)', () => {
  const params = (system: string, messages: Anthropic.MessageParam[]) => ({
    model: 'claude-sonnet-4-5',
    max_tokens: 512,
    system,
    tools: anthropicTools,
    messages,
  });

  it('streams message_start … input_json_delta … message_stop and matches the non-streaming reply', async () => {
    const types: string[] = [];
    const stream = anthropic.messages.stream(params(baseline, [{ role: 'user', content: user }]));
    stream.on('streamEvent', (event) => {
      types.push(event.type === 'content_block_delta' ? `${event.type}:${event.delta.type}` : event.type);
    });
    const streamed = await stream.finalMessage();
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(types).toContain('content_block_delta:text_delta');
    expect(types.filter((t) => t === 'content_block_delta:input_json_delta').length).toBeGreaterThan(1);
    const plain = await anthropic.messages.create(params(baseline, [{ role: 'user', content: user }]));
    const strip = (m: Anthropic.Message) => m.content.map((b) => (b.type === 'tool_use' ? { ...b, id: '' } : b));
    expect(strip(streamed)).toEqual(strip(plain));
    expect(streamed.stop_reason).toBe('tool_use');
    expect(streamed.usage).toMatchObject({ output_tokens: plain.usage.output_tokens, cache_read_input_tokens: 0 });
    expect(plain.usage.cache_creation_input_tokens).toBeGreaterThan(0);
  });

  it('follows the system prompt: the fixed prompt reads the profile and the policy before booking', async () => {
    const first = await anthropic.messages.create(params(fixed, [{ role: 'user', content: user }]));
    const use = first.content.find((b) => b.type === 'tool_use');
    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: user },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use!.id, content: flightsResult }] },
    ];
    const next = await anthropic.messages.create(params(fixed, history));
    expect(next.content.filter((b) => b.type === 'tool_use').map((b) => b.type === 'tool_use' && b.name)).toEqual([
      'read_file',
      'search_policies',
    ]);
    expect(next.usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(next.usage.cache_creation_input_tokens).toBe(0);
    const rushed = await anthropic.messages.create(params(baseline, history));
    expect(rushed.content.find((b) => b.type === 'tool_use')).toMatchObject({
      name: 'book_flight',
      input: { flight_id: 'FL-102', passenger_id: 'P-100' },
    });
  });
});

describe('OpenAI Responses (fake)', () => {
  const tools = ['search_flights', 'book_flight', 'read_file', 'search_policies'].map((name) => ({
    type: 'function' as const,
    name,
    parameters: { type: 'object', properties: {} },
    strict: false,
  }));

  it('streams function_call items with argument deltas, then response.completed with usage; the same as not streamed', async () => {
    const params = { model: 'gpt-4.1-mini', instructions: baseline, input: user, tools };
    const types: string[] = [];
    const stream = openai.responses.stream(params);
    stream.on('event', (event) => types.push(event.type));
    const streamed = await stream.finalResponse();
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(types.filter((t) => t === 'response.function_call_arguments.delta').length).toBeGreaterThan(1);
    const plain = await openai.responses.create(params);
    // Ids come from a hash of the request, which says `stream: true` in one of them.
    const strip = (items: OpenAI.Responses.ResponseOutputItem[]) =>
      items.map((item) =>
        item.type === 'function_call' ? { ...item, id: '', call_id: '', parsed_arguments: null } : item,
      );
    expect(strip(plain.output)).toEqual(strip(streamed.output));
    expect(plain.output[0]).toMatchObject({ type: 'function_call', name: 'search_flights' });
    expect(plain.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    expect(plain.usage?.input_tokens_details.cached_tokens).toBe(0);
  });

  it('reads function_call_output items back and reports cached tokens once there is history', async () => {
    const first = await openai.responses.create({ model: 'gpt-4.1-mini', instructions: baseline, input: user, tools });
    const call = first.output.find((item) => item.type === 'function_call');
    const next = await openai.responses.create({
      model: 'gpt-4.1-mini',
      instructions: baseline,
      tools,
      input: [
        { role: 'user', content: user },
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        {
          type: 'function_call_output',
          call_id: call?.type === 'function_call' ? call.call_id : '',
          output: flightsResult,
        },
      ],
    });
    const booking = next.output.find((item) => item.type === 'function_call');
    expect(booking?.type === 'function_call' && JSON.parse(booking.arguments)).toEqual({
      flight_id: 'FL-102',
      passenger_id: 'P-100',
    });
    expect(next.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);
  });
});

describe('Google Gemini (fake)', () => {
  const config = (system: string) => ({
    systemInstruction: system,
    tools: [
      {
        functionDeclarations: ['search_flights', 'book_flight', 'read_file', 'search_policies'].map((name) => ({
          name,
          parametersJsonSchema: { type: 'object', properties: {} },
        })),
      },
    ],
    thinkingConfig: { includeThoughts: true },
  });
  const first: Content[] = [{ role: 'user', parts: [{ text: user }] }];

  it('streams SSE chunks whose parts join to the non-streamed answer; usage with thinking tokens', async () => {
    const plain = await gemini.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: first,
      config: config(baseline),
    });
    const chunks = [];
    for await (const chunk of await gemini.models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents: first,
      config: config(baseline),
    }))
      chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(2);
    const streamedCalls = chunks.flatMap((c) => c.functionCalls ?? []);
    expect(streamedCalls).toEqual(plain.functionCalls);
    expect(plain.functionCalls).toEqual([
      { name: 'search_flights', args: { to: 'DEN', date: '2026-11-25', max_price: 300 } },
    ]);
    const texts = (parts: Array<{ text?: string; thought?: boolean }>, thought: boolean) =>
      parts
        .filter((p) => p.text !== undefined && !!p.thought === thought)
        .map((p) => p.text)
        .join('');
    const streamedParts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
    const plainParts = plain.candidates?.[0]?.content?.parts ?? [];
    expect(texts(streamedParts, false)).toBe(texts(plainParts, false));
    expect(texts(plainParts, true)).toMatch(/^Thinking: /);
    expect(chunks.at(-1)?.usageMetadata).toEqual(plain.usageMetadata);
    expect(plain.usageMetadata?.thoughtsTokenCount).toBeGreaterThan(0);
    expect(plain.usageMetadata?.cachedContentTokenCount).toBeUndefined();
    expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe('STOP');
  });

  it('pairs functionResponse parts with the calls by name, follows the prompt, reports cached tokens', async () => {
    const plain = await gemini.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: first,
      config: config(fixed),
    });
    const history: Content[] = [
      ...first,
      { role: 'model', parts: (plain.candidates?.[0]?.content?.parts ?? []).filter((p) => !p.thought) },
      { role: 'user', parts: [{ functionResponse: { name: 'search_flights', response: { output: flightsResult } } }] },
    ];
    const next = await gemini.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: history,
      config: config(fixed),
    });
    expect(next.functionCalls?.map((c) => c.name)).toEqual(['read_file', 'search_policies']);
    expect(next.usageMetadata?.cachedContentTokenCount).toBeGreaterThan(0);
    const rushed = await gemini.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: history,
      config: config(baseline),
    });
    expect(rushed.functionCalls).toEqual([
      { name: 'book_flight', args: { flight_id: 'FL-102', passenger_id: 'P-100' } },
    ]);
  });
});

describe('the exchange log', () => {
  it('logs one JSON line per exchange, identical for identical requests', async () => {
    server.clearLog();
    const req = { model: 'gpt-4.1-mini', messages: [{ role: 'user' as const, content: user }], tools: openaiTools };
    await openai.chat.completions.create(req);
    await openai.chat.completions.create(req);
    const [a, b] = server.log.map((line) => JSON.parse(line) as { seq: number; response: unknown });
    expect(server.log).toHaveLength(2);
    expect([a?.seq, b?.seq]).toEqual([1, 2]);
    expect(b?.response).toEqual(a?.response);
  });
});

describe('tools the request does not offer', () => {
  it('are never called: the fake says which tool it lacks', async () => {
    const res = await openai.chat.completions.create({
      model: 'gpt-4.1-mini',
      messages: [{ role: 'user', content: user }],
      tools: [fn('book_flight')],
    });
    expect(res.choices[0]?.message.tool_calls).toBeUndefined();
    expect(res.choices[0]?.message.content).toBe('I need the search_flights tool to do this, and it is not available.');
  });
});
