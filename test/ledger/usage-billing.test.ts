// The ledger's tokens and cost of one model call, from the response the provider sent (streamed and
// not, with every usage field its API documents) to `tapedeck ledger`'s rows, against a hand
// computation at the bundled prices: the recorder's decoding (decodeModelCall) and buildLedger, as a
// recorded run goes. Cases cover the less common billing: Anthropic/Bedrock 1-hour cache writes,
// server-side tools billed per use (web search, file search, code interpreter, grounding), OpenAI
// predicted outputs and audio details, Gemini tool-use prompts and thoughts, Anthropic streams whose
// usage is split between message_start and message_delta.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { afterAll, describe, expect, it } from 'vitest';
import { buildLedger, formatLedger, loadPrices, type PriceTable } from '../../src/ledger/index.js';
import { snapshotPrices } from '../../src/ledger/prices.js';
import { decodeModelCall, detectProvider } from '../../src/providers/model-call.js';
import type { ProviderResponse } from '../../src/providers/types.js';
import type { ModelCalledPayload, RecordingEvent } from '../../src/recording/types.js';
import { runCli } from './run-cli.js';
import { syntheticRecording, writeSyntheticRecording } from './synthetic.js';

interface Case {
  name: string;
  url: string;
  body: Record<string, unknown>;
  response: Omit<ProviderResponse, 'status' | 'headers'> & { headers?: Record<string, string> };
  prices?: PriceTable;
  tokens: { uncachedInput: number; cacheRead: number; cacheWrite: number; output: number; reasoning: number };
  cacheWrite1h?: number;
  /** Σ tokens × price per million, by hand. */
  llmMicros: number;
  serverTools?: Array<{ tool: string; uses: number; cost: number; priced: boolean }>;
  warning?: RegExp;
}

const sse = (events: Array<[string | undefined, unknown]>): ProviderResponse['chunks'] =>
  events.map(([event, data], i) => ({
    offsetMs: i * 5,
    data: `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`,
  }));

const codec = new EventStreamCodec(
  (bytes) => new TextDecoder().decode(bytes),
  (text) => new TextEncoder().encode(text),
);
const awsFrames = (events: Array<[string, unknown]>): ProviderResponse['chunks'] =>
  events.map(([type, payload], i) => ({
    offsetMs: i * 5,
    encoding: 'base64' as const,
    data: Buffer.from(
      codec.encode({
        headers: {
          ':event-type': { type: 'string', value: type },
          ':message-type': { type: 'string', value: 'event' },
        },
        body: new TextEncoder().encode(JSON.stringify(payload)),
      }),
    ).toString('base64'),
  }));

const ANTHROPIC = 'https://api.anthropic.com/v1/messages';
const anthropicBody = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Find flights' }],
};
// claude-sonnet-4-5: 3 in, 0.3 read, 3.75 5-minute write, 6 1-hour write, 15 out; web search 0.01 a use, web fetch free.
const anthropicMessage = (usage: Record<string, unknown>) => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [
    { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'SFO JFK flights' } },
    { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
    { type: 'text', text: 'FL1 is cheapest.' },
  ],
  stop_reason: 'end_turn',
  usage,
});
const anthropicUsage = {
  input_tokens: 50,
  cache_read_input_tokens: 1000,
  cache_creation_input_tokens: 3000,
  cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
  output_tokens: 200,
  server_tool_use: { web_search_requests: 3, web_fetch_requests: 1 },
  service_tier: 'standard',
};
// A stream's message_start: the input buckets and the 1-hour split; output and tool uses come later.
const anthropicStart: [string, unknown] = [
  'message_start',
  {
    type: 'message_start',
    message: { ...anthropicMessage({ ...anthropicUsage, output_tokens: 1, server_tool_use: null }), content: [] },
  },
];
const SSE = { 'content-type': 'text/event-stream' };
const anthropicStream = { url: ANTHROPIC, body: { ...anthropicBody, stream: true } };
const anthropicTokens = { uncachedInput: 50, cacheRead: 1000, cacheWrite: 3000, output: 200, reasoning: 0 };
const anthropicMicros = 50 * 3 + 1000 * 0.3 + 1000 * 3.75 + 2000 * 6 + 200 * 15;
const anthropicTools = [
  { tool: 'web_fetch', uses: 1, cost: 0, priced: true },
  { tool: 'web_search', uses: 3, cost: 0.03, priced: true },
];
const anthropicExpected = {
  tokens: anthropicTokens,
  cacheWrite1h: 2000,
  llmMicros: anthropicMicros,
  serverTools: anthropicTools,
};

const responsesOutput = [
  { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'SFO JFK' } },
  { type: 'web_search_call', id: 'ws_2', status: 'completed', action: { type: 'search', query: 'SFO JFK Dec 1' } },
  { type: 'file_search_call', id: 'fs_1', status: 'completed', queries: ['fare rules'], results: null },
  { type: 'code_interpreter_call', id: 'ci_1', container_id: 'cntr_1', code: '1+1', outputs: null },
  { type: 'code_interpreter_call', id: 'ci_2', container_id: 'cntr_1', code: '2+2', outputs: null },
  {
    type: 'message',
    id: 'msg_1',
    role: 'assistant',
    content: [{ type: 'output_text', text: 'FL1.', annotations: [] }],
  },
];
const responsesUsage = {
  input_tokens: 3000,
  input_tokens_details: { cached_tokens: 1000 },
  output_tokens: 500,
  output_tokens_details: { reasoning_tokens: 200 },
  total_tokens: 3500,
};
const responsesBody = { id: 'resp_1', object: 'response', model: 'gpt-5-2025-08-07', status: 'completed' };
// gpt-5: 1.25 in, 0.125 read, 10 out and reasoning; web search 0.01, file search 0.0025 a use, 0.03 a container.
const responsesTools = [
  { tool: 'code_interpreter', uses: 1, cost: 0.03, priced: true },
  { tool: 'file_search', uses: 1, cost: 0.0025, priced: true },
  { tool: 'web_search', uses: 2, cost: 0.02, priced: true },
];

const geminiGrounded = (usageMetadata: Record<string, unknown>, text = 'FL1 is cheapest.') => ({
  candidates: [
    {
      index: 0,
      content: { role: 'model', parts: [{ text }] },
      finishReason: 'STOP',
      groundingMetadata: { webSearchQueries: ['SFO JFK flights', 'SFO JFK Dec 1'], groundingChunks: [] },
    },
  ],
  usageMetadata,
  modelVersion: 'gemini-3-pro-preview',
});
const geminiUsage = {
  promptTokenCount: 5000,
  cachedContentTokenCount: 4000,
  toolUsePromptTokenCount: 300,
  candidatesTokenCount: 200,
  thoughtsTokenCount: 100,
  totalTokenCount: 5600,
};

const BEDROCK_MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const bedrockPrices: PriceTable = {
  version: 'test',
  currency: 'USD',
  models: [
    {
      model: BEDROCK_MODEL,
      inputPerMillion: 3,
      cachedInputPerMillion: 0.3,
      cacheWritePerMillion: 3.75,
      cacheWrite1hPerMillion: 6,
      outputPerMillion: 15,
    },
  ],
};
const bedrockUsage = {
  inputTokens: 40,
  outputTokens: 100,
  totalTokens: 3640,
  cacheReadInputTokens: 500,
  cacheWriteInputTokens: 3000,
  cacheDetails: [
    { ttl: '1h', inputTokens: 2000 },
    { ttl: '5m', inputTokens: 1000 },
  ],
};
const bedrockTokens = { uncachedInput: 40, cacheRead: 500, cacheWrite: 3000, output: 100, reasoning: 0 };
const bedrockMicros = 40 * 3 + 500 * 0.3 + 1000 * 3.75 + 2000 * 6 + 100 * 15;

/** A DeepSeek (OpenAI-compatible) answer whose usage has `more` besides its own cache-hit counts. */
function deepseekCase(name: string, more: Record<string, unknown>): Case {
  return {
    name,
    url: 'https://api.deepseek.com/chat/completions',
    body: { model: 'deepseek-chat', messages: [{ role: 'user', content: 'Find flights' }] },
    response: {
      json: {
        id: 'ds-1',
        object: 'chat.completion',
        model: 'deepseek-chat',
        choices: [{ index: 0, message: { role: 'assistant', content: 'FL1.' }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: 3000,
          completion_tokens: 100,
          prompt_cache_hit_tokens: 2560,
          prompt_cache_miss_tokens: 440,
          ...more,
        },
      },
    },
    prices: {
      version: 'test',
      currency: 'USD',
      models: [{ model: 'deepseek-chat', inputPerMillion: 0.56, cachedInputPerMillion: 0.07, outputPerMillion: 1.68 }],
    },
    tokens: { uncachedInput: 440, cacheRead: 2560, cacheWrite: 0, output: 100, reasoning: 0 },
    llmMicros: 440 * 0.56 + 2560 * 0.07 + 100 * 1.68,
  };
}

const CASES: Case[] = [
  {
    name: 'anthropic messages: 1-hour cache writes at 2x input, web searches per use',
    url: ANTHROPIC,
    body: anthropicBody,
    response: { json: anthropicMessage(anthropicUsage) },
    ...anthropicExpected,
  },
  {
    name: 'anthropic stream: input and the 1-hour split in message_start, output and tool uses in message_delta',
    ...anthropicStream,
    response: {
      headers: SSE,
      chunks: sse([
        anthropicStart,
        ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
        [
          'content_block_delta',
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'FL1 is cheapest.' } },
        ],
        ['content_block_stop', { type: 'content_block_stop', index: 0 }],
        [
          'message_delta',
          {
            type: 'message_delta',
            delta: { stop_reason: 'end_turn', stop_sequence: null },
            usage: {
              input_tokens: null,
              cache_creation_input_tokens: null,
              cache_read_input_tokens: null,
              output_tokens: 200,
              server_tool_use: { web_search_requests: 3, web_fetch_requests: 1 },
            },
          },
        ],
        ['message_stop', { type: 'message_stop' }],
      ]),
    },
    ...anthropicExpected,
  },
  {
    name: 'anthropic stream: message_delta restating cumulative input counts keeps the 1-hour split',
    ...anthropicStream,
    response: {
      headers: SSE,
      chunks: sse([
        anthropicStart,
        [
          'message_delta',
          {
            type: 'message_delta',
            delta: { stop_reason: 'end_turn' },
            usage: {
              input_tokens: 50,
              cache_creation_input_tokens: 3000,
              cache_read_input_tokens: 1000,
              output_tokens: 200,
              server_tool_use: { web_search_requests: 3, web_fetch_requests: 1 },
            },
          },
        ],
      ]),
    },
    ...anthropicExpected,
  },
  {
    name: 'openai chat: cached prompt, audio and predicted-output details (rejected predictions are billed output)',
    url: 'https://api.openai.com/v1/chat/completions',
    body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'Find flights' }] },
    response: {
      json: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: 'gpt-4o-2024-08-06',
        choices: [{ index: 0, message: { role: 'assistant', content: 'FL1.' }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: 2000,
          completion_tokens: 300,
          total_tokens: 2300,
          prompt_tokens_details: { cached_tokens: 1500, audio_tokens: 0 },
          completion_tokens_details: {
            reasoning_tokens: 0,
            audio_tokens: 0,
            accepted_prediction_tokens: 50,
            rejected_prediction_tokens: 20,
          },
        },
        service_tier: 'default',
      },
    },
    // gpt-4o: 2.5 in, 1.25 read, 10 out.
    tokens: { uncachedInput: 500, cacheRead: 1500, cacheWrite: 0, output: 300, reasoning: 0 },
    llmMicros: 500 * 2.5 + 1500 * 1.25 + 300 * 10,
  },
  {
    name: 'openai chat stream: usage in the last chunk (choices empty), reasoning apart from visible output',
    url: 'https://api.openai.com/v1/chat/completions',
    body: {
      model: 'gpt-5-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Find flights' }],
    },
    response: {
      headers: { 'content-type': 'text/event-stream' },
      chunks: sse([
        [
          undefined,
          {
            id: 'c1',
            model: 'gpt-5-mini-2025-08-07',
            choices: [{ index: 0, delta: { role: 'assistant', content: 'FL1.' } }],
            usage: null,
          },
        ],
        [
          undefined,
          { id: 'c1', model: 'gpt-5-mini-2025-08-07', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
        ],
        [
          undefined,
          {
            id: 'c1',
            model: 'gpt-5-mini-2025-08-07',
            choices: [],
            usage: {
              prompt_tokens: 1000,
              completion_tokens: 400,
              total_tokens: 1400,
              prompt_tokens_details: { cached_tokens: 256, audio_tokens: 0 },
              completion_tokens_details: {
                reasoning_tokens: 128,
                audio_tokens: 0,
                accepted_prediction_tokens: 0,
                rejected_prediction_tokens: 0,
              },
            },
          },
        ],
        [undefined, '[DONE]'],
      ]),
    },
    // gpt-5-mini: 0.25 in, 0.025 read, 2 out and reasoning.
    tokens: { uncachedInput: 744, cacheRead: 256, cacheWrite: 0, output: 272, reasoning: 128 },
    llmMicros: 744 * 0.25 + 256 * 0.025 + 272 * 2 + 128 * 2,
  },
  {
    name: 'openai responses: built-in tools billed per call (code interpreter per container)',
    url: 'https://api.openai.com/v1/responses',
    body: { model: 'gpt-5', input: 'Find flights', tools: [{ type: 'web_search' }] },
    response: { json: { ...responsesBody, output: responsesOutput, usage: responsesUsage } },
    tokens: { uncachedInput: 2000, cacheRead: 1000, cacheWrite: 0, output: 300, reasoning: 200 },
    llmMicros: 2000 * 1.25 + 1000 * 0.125 + 300 * 10 + 200 * 10,
    serverTools: responsesTools,
  },
  {
    name: 'openai responses stream: the tools and usage of response.completed',
    url: 'https://api.openai.com/v1/responses',
    body: { model: 'gpt-5', input: 'Find flights', stream: true, tools: [{ type: 'web_search' }] },
    response: {
      headers: { 'content-type': 'text/event-stream' },
      chunks: sse([
        [
          'response.created',
          { type: 'response.created', response: { ...responsesBody, status: 'in_progress', output: [], usage: null } },
        ],
        ...responsesOutput.map((item, i): [string, unknown] => [
          'response.output_item.done',
          { type: 'response.output_item.done', output_index: i, item },
        ]),
        [
          'response.completed',
          {
            type: 'response.completed',
            response: { ...responsesBody, output: responsesOutput, usage: responsesUsage },
          },
        ],
      ]),
    },
    tokens: { uncachedInput: 2000, cacheRead: 1000, cacheWrite: 0, output: 300, reasoning: 200 },
    llmMicros: 2000 * 1.25 + 1000 * 0.125 + 300 * 10 + 200 * 10,
    serverTools: responsesTools,
  },
  {
    name: 'gemini: cached content inside the prompt, tool-use prompt and thoughts apart, grounding searches',
    url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-3-pro-preview:generateContent',
    body: { contents: [{ role: 'user', parts: [{ text: 'Find flights' }] }], tools: [{ google_search: {} }] },
    response: { json: geminiGrounded(geminiUsage) },
    // gemini-3-pro-preview: 2 in, 0.2 read, 12 out and thoughts; 0.014 a search query.
    tokens: { uncachedInput: 1300, cacheRead: 4000, cacheWrite: 0, output: 200, reasoning: 100 },
    llmMicros: 1300 * 2 + 4000 * 0.2 + 200 * 12 + 100 * 12,
    serverTools: [{ tool: 'google_search', uses: 2, cost: 0.028, priced: true }],
  },
  {
    name: 'gemini stream: running counts, the last chunk is the call; a grounding with no price is said',
    url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    body: { contents: [{ role: 'user', parts: [{ text: 'Find flights' }] }], tools: [{ google_search: {} }] },
    response: {
      headers: { 'content-type': 'text/event-stream' },
      chunks: sse([
        [
          undefined,
          {
            candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'FL1 ' }] } }],
            usageMetadata: { promptTokenCount: 5000, cachedContentTokenCount: 4000, totalTokenCount: 5000 },
            modelVersion: 'gemini-2.5-flash',
          },
        ],
        [undefined, { ...geminiGrounded(geminiUsage, 'is cheapest.'), modelVersion: 'gemini-2.5-flash' }],
      ]),
    },
    // gemini-2.5-flash: 0.3 in, 0.03 read, 2.5 out and thoughts; grounding billed per prompt: no per-query price.
    tokens: { uncachedInput: 1300, cacheRead: 4000, cacheWrite: 0, output: 200, reasoning: 100 },
    llmMicros: 1300 * 0.3 + 4000 * 0.03 + 200 * 2.5 + 100 * 2.5,
    serverTools: [{ tool: 'google_search', uses: 2, cost: 0, priced: false }],
    warning: /no price for server tool google_search of model gemini-2.5-flash/,
  },
  {
    name: 'bedrock converse: cacheDetails splits the writes by lifetime',
    url: `https://bedrock-runtime.us-east-1.amazonaws.com/model/${encodeURIComponent(BEDROCK_MODEL)}/converse`,
    body: { messages: [{ role: 'user', content: [{ text: 'Find flights' }] }] },
    response: {
      json: {
        output: { message: { role: 'assistant', content: [{ text: 'FL1.' }] } },
        stopReason: 'end_turn',
        usage: bedrockUsage,
        metrics: { latencyMs: 900 },
      },
    },
    prices: bedrockPrices,
    tokens: bedrockTokens,
    cacheWrite1h: 2000,
    llmMicros: bedrockMicros,
  },
  {
    name: 'bedrock converse stream: usage of the metadata event',
    url: `https://bedrock-runtime.us-east-1.amazonaws.com/model/${encodeURIComponent(BEDROCK_MODEL)}/converse-stream`,
    body: { messages: [{ role: 'user', content: [{ text: 'Find flights' }] }] },
    response: {
      headers: { 'content-type': 'application/vnd.amazon.eventstream' },
      chunks: awsFrames([
        ['messageStart', { role: 'assistant' }],
        ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'FL1.' } }],
        ['messageStop', { stopReason: 'end_turn' }],
        ['metadata', { usage: bedrockUsage, metrics: { latencyMs: 900 } }],
      ]),
    },
    prices: bedrockPrices,
    tokens: bedrockTokens,
    cacheWrite1h: 2000,
    llmMicros: bedrockMicros,
  },
  {
    name: 'openai chat flex: the service tier the response names is the price billed (half of standard)',
    url: 'https://api.openai.com/v1/chat/completions',
    body: { model: 'gpt-5-mini', service_tier: 'flex', messages: [{ role: 'user', content: 'Find flights' }] },
    response: {
      json: {
        id: 'chatcmpl-2',
        object: 'chat.completion',
        model: 'gpt-5-mini-2025-08-07',
        service_tier: 'flex',
        choices: [{ index: 0, message: { role: 'assistant', content: 'FL1.' }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: 1000,
          completion_tokens: 400,
          prompt_tokens_details: { cached_tokens: 256 },
          completion_tokens_details: { reasoning_tokens: 128 },
        },
      },
    },
    // gpt-5-mini flex: 0.125 in, 0.0125 read, 1 out and reasoning.
    tokens: { uncachedInput: 744, cacheRead: 256, cacheWrite: 0, output: 272, reasoning: 128 },
    llmMicros: 744 * 0.125 + 256 * 0.0125 + 272 * 1 + 128 * 1,
  },
  {
    name: 'openai responses stream priority: the tier of response.completed',
    url: 'https://api.openai.com/v1/responses',
    body: { model: 'gpt-5', input: 'Find flights', stream: true, service_tier: 'priority' },
    response: {
      headers: SSE,
      chunks: sse([
        [
          'response.completed',
          {
            type: 'response.completed',
            response: {
              ...responsesBody,
              service_tier: 'priority',
              output: responsesOutput.slice(-1),
              usage: responsesUsage,
            },
          },
        ],
      ]),
    },
    // gpt-5 priority: 2.5 in, 0.25 read, 20 out and reasoning.
    tokens: { uncachedInput: 2000, cacheRead: 1000, cacheWrite: 0, output: 300, reasoning: 200 },
    llmMicros: 2000 * 2.5 + 1000 * 0.25 + 300 * 20 + 200 * 20,
  },
  {
    name: 'anthropic priority tier with no price in the table: standard prices, and a warning says so',
    url: ANTHROPIC,
    body: anthropicBody,
    response: {
      json: anthropicMessage({ input_tokens: 100, output_tokens: 20, service_tier: 'priority' }),
    },
    tokens: { uncachedInput: 100, cacheRead: 0, cacheWrite: 0, output: 20, reasoning: 0 },
    llmMicros: 100 * 3 + 20 * 15,
    warning: /no priority-tier price for model claude-sonnet-4-5 .*standard price/,
  },
  {
    name: 'anthropic long context: past 200k input tokens (cache included) every bucket is at the long-context price',
    url: ANTHROPIC,
    body: anthropicBody,
    response: {
      json: anthropicMessage({
        input_tokens: 10_000,
        cache_read_input_tokens: 180_000,
        cache_creation_input_tokens: 20_000,
        cache_creation: { ephemeral_5m_input_tokens: 15_000, ephemeral_1h_input_tokens: 5_000 },
        output_tokens: 1000,
      }),
    },
    // claude-sonnet-4-5 over 200k: 6 in, 0.6 read, 7.5 5-minute write, 12 1-hour write, 22.5 out.
    tokens: { uncachedInput: 10_000, cacheRead: 180_000, cacheWrite: 20_000, output: 1000, reasoning: 0 },
    cacheWrite1h: 5000,
    llmMicros: 10_000 * 6 + 180_000 * 0.6 + 15_000 * 7.5 + 5000 * 12 + 1000 * 22.5,
  },
  {
    name: 'anthropic at 200k input exactly: the standard price',
    url: ANTHROPIC,
    body: anthropicBody,
    response: {
      json: anthropicMessage({ input_tokens: 20_000, cache_read_input_tokens: 180_000, output_tokens: 1000 }),
    },
    tokens: { uncachedInput: 20_000, cacheRead: 180_000, cacheWrite: 0, output: 1000, reasoning: 0 },
    llmMicros: 20_000 * 3 + 180_000 * 0.3 + 1000 * 15,
  },
  {
    name: 'gemini 2.5 pro long context: a prompt past 200k tokens at the higher tier',
    url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent',
    body: { contents: [{ role: 'user', parts: [{ text: 'Summarise' }] }] },
    response: {
      json: {
        candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'Summary.' }] }, finishReason: 'STOP' }],
        usageMetadata: {
          promptTokenCount: 250_000,
          cachedContentTokenCount: 200_000,
          candidatesTokenCount: 2000,
          thoughtsTokenCount: 1000,
        },
        modelVersion: 'gemini-2.5-pro',
      },
    },
    // gemini-2.5-pro over 200k: 2.5 in, 0.25 read, 15 out and thoughts.
    tokens: { uncachedInput: 50_000, cacheRead: 200_000, cacheWrite: 0, output: 2000, reasoning: 1000 },
    llmMicros: 50_000 * 2.5 + 200_000 * 0.25 + 2000 * 15 + 1000 * 15,
  },
  {
    name: 'openai chat stream flex: the tier of the chunks before the usage chunk',
    url: 'https://api.openai.com/v1/chat/completions',
    body: {
      model: 'gpt-5-mini',
      stream: true,
      service_tier: 'flex',
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Find flights' }],
    },
    response: {
      headers: SSE,
      chunks: sse([
        [
          undefined,
          {
            id: 'c2',
            model: 'gpt-5-mini-2025-08-07',
            service_tier: 'flex',
            choices: [{ index: 0, delta: { role: 'assistant', content: 'FL1.' }, finish_reason: 'stop' }],
          },
        ],
        [
          undefined,
          {
            id: 'c2',
            model: 'gpt-5-mini-2025-08-07',
            choices: [],
            usage: {
              prompt_tokens: 1000,
              completion_tokens: 400,
              completion_tokens_details: { reasoning_tokens: 128 },
            },
          },
        ],
      ]),
    },
    tokens: { uncachedInput: 1000, cacheRead: 0, cacheWrite: 0, output: 272, reasoning: 128 },
    llmMicros: 1000 * 0.125 + 272 * 1 + 128 * 1,
  },
  {
    name: 'openai responses: an image the built-in image_generation tool made is a use the table has no price for',
    url: 'https://api.openai.com/v1/responses',
    body: { model: 'gpt-5', input: 'Draw the route', tools: [{ type: 'image_generation' }] },
    response: {
      json: {
        ...responsesBody,
        output: [
          { type: 'image_generation_call', id: 'ig_1', status: 'completed', result: 'iVBORw0KGgo=' },
          ...responsesOutput.slice(-1),
        ],
        usage: responsesUsage,
      },
    },
    tokens: { uncachedInput: 2000, cacheRead: 1000, cacheWrite: 0, output: 300, reasoning: 200 },
    llmMicros: 2000 * 1.25 + 1000 * 0.125 + 300 * 10 + 200 * 10,
    serverTools: [{ tool: 'image_generation', uses: 1, cost: 0, priced: false }],
    warning: /no price for server tool image_generation of model gpt-5/,
  },
  {
    name: 'openai-compatible (Groq) stream: the usage of the last chunk is in x_groq',
    url: 'https://api.groq.com/openai/v1/chat/completions',
    body: { model: 'llama-3.3-70b-versatile', stream: true, messages: [{ role: 'user', content: 'Find flights' }] },
    response: {
      headers: SSE,
      chunks: sse([
        [
          undefined,
          {
            id: 'g1',
            model: 'llama-3.3-70b-versatile',
            choices: [{ index: 0, delta: { role: 'assistant', content: 'FL1.' } }],
            x_groq: { id: 'req_1' },
          },
        ],
        [
          undefined,
          {
            id: 'g1',
            model: 'llama-3.3-70b-versatile',
            choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
            x_groq: {
              id: 'req_1',
              usage: { prompt_tokens: 900, completion_tokens: 50, total_tokens: 950, queue_time: 0.01 },
            },
          },
        ],
        [undefined, '[DONE]'],
      ]),
    },
    prices: {
      version: 'test',
      currency: 'USD',
      models: [
        {
          model: 'llama-3.3-70b-versatile',
          inputPerMillion: 0.59,
          cachedInputPerMillion: 0.59,
          outputPerMillion: 0.79,
        },
      ],
    },
    tokens: { uncachedInput: 900, cacheRead: 0, cacheWrite: 0, output: 50, reasoning: 0 },
    llmMicros: 900 * 0.59 + 50 * 0.79,
  },
  deepseekCase('openai-compatible (DeepSeek): prompt_cache_hit_tokens are cache reads', {
    prompt_tokens_details: { cached_tokens: 2560 },
  }),
  deepseekCase('openai-compatible (DeepSeek) with only prompt_cache_hit_tokens: still cache reads', {}),
];

/** A recorded run of one model call answered by `response`, decoded as the recorder decodes it. */
function recordedCall(c: Case) {
  const url = new URL(c.url);
  const request = { method: 'POST', url, headers: { 'content-type': 'application/json' }, json: c.body };
  const provider = detectProvider(request);
  if (!provider) throw new Error(`no provider speaks ${c.url}`);
  const decoded = decodeModelCall(provider, request, {
    status: 200,
    headers: c.response.headers ?? { 'content-type': 'application/json' },
    ...c.response,
  });
  const recording = syntheticRecording({ tools: 0, provider: 'openai', model: decoded.model });
  recording.events = recording.events.map((e: RecordingEvent): RecordingEvent => {
    if (e.type !== 'model.called') return e;
    const { firstTokenOffsetMs: _, ...call } = decoded;
    const payload: ModelCalledPayload = { ...call, exchangeId: e.payload.exchangeId, latencyMs: 50 };
    return { ...e, payload } as RecordingEvent;
  });
  return { decoded, recording };
}

describe('ledger: each provider usage field in its bucket and at its price', () => {
  it.each(CASES)('$name', (c) => {
    const { decoded, recording } = recordedCall(c);
    expect(decoded.usage, 'the call reported usage').toBeDefined();
    const ledger = buildLedger(recording, c.prices ? { prices: c.prices } : {});
    const step = ledger.detail.find((s) => s.model !== null);
    if (!step) throw new Error('no model step');
    expect(step.isPriced).toBe(true);
    const { cacheWrite1h, ...tokens } = step.tokens;
    expect(tokens).toEqual(c.tokens);
    expect(cacheWrite1h ?? 0).toBe(c.cacheWrite1h ?? 0);
    expect(step.llm.total).toBeCloseTo(c.llmMicros / 1e6, 12);
    expect(step.serverTools).toEqual((c.serverTools ?? []).map((t) => expect.objectContaining(t)));
    const toolCost = (c.serverTools ?? []).reduce((n, t) => n + t.cost, 0);
    const row = ledger.steps.find((r) => r.step_id === step.stepId);
    expect(row?.llm_cost).toBeCloseTo(c.llmMicros / 1e6, 10);
    expect(row?.tool_cost).toBeCloseTo(toolCost, 10);
    expect(row?.state_cost).toBeCloseTo(c.llmMicros / 1e6 + toolCost, 10);
    expect(ledger.run.total_tool_cost).toBeCloseTo(toolCost, 10);
    expect(ledger.run.total_cost).toBeCloseTo(c.llmMicros / 1e6 + toolCost, 10);
    if (c.warning) expect(ledger.warnings.join('\n')).toMatch(c.warning);
    else expect(ledger.warnings).toEqual([]);
  });

  it('prints the provider-run tools with their uses and cost, and says which have no price', () => {
    const grounded = CASES.find((c) => c.warning) as Case;
    const text = formatLedger(buildLedger(recordedCall(grounded).recording));
    expect(text).toContain("tools include the provider's own: google_search ×2 no price");
    const searched = formatLedger(buildLedger(recordedCall(CASES[0] as Case).recording));
    expect(searched).toContain("tools include the provider's own: web_fetch ×1 0, web_search ×3 0.03");
  });

  it('bills 1-hour writes as 5-minute ones, and says so, when the table has no 1-hour price', () => {
    const { recording } = recordedCall(CASES[0] as Case);
    const table = loadPrices();
    const prices: PriceTable = {
      ...table,
      models: table.models.map(({ cacheWrite1hPerMillion: _, ...m }) => m),
    };
    const ledger = buildLedger(recording, { prices });
    const step = ledger.detail.find((s) => s.model !== null);
    expect(step?.llm.total).toBeCloseTo((50 * 3 + 1000 * 0.3 + 3000 * 3.75 + 200 * 15) / 1e6, 12);
    expect(ledger.warnings.join('\n')).toMatch(/no 1-hour cache-write price for model claude-sonnet-4-5/);
  });

  const tmp = mkdtempSync(join(tmpdir(), 'tapedeck-usage-billing-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('tapedeck ledger, text and --json, on a recording written to disk with its price snapshot', async () => {
    const c = CASES[0] as Case;
    const { decoded } = recordedCall(c);
    const usage = decoded.usage;
    if (!usage) throw new Error('no usage');
    const dir = await writeSyntheticRecording(join(tmp, 'anthropic'), {
      tools: 0,
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      usage: () => usage,
      prices: snapshotPrices(loadPrices(), ['claude-sonnet-4-5']),
    });
    const json = JSON.parse(await runCli('ledger', dir, '--json'));
    const cost = c.llmMicros / 1e6;
    expect(json.priceSource).toBe('manifest');
    expect(json.steps[0]).toMatchObject({ input_tokens_cache_write: 3000 });
    expect(json.steps[0].llm_cost).toBeCloseTo(cost, 10);
    expect(json.steps[0].tool_cost).toBeCloseTo(0.03, 10);
    expect(json.run.total_tool_cost).toBeCloseTo(0.03, 10);
    expect(json.run.total_cost).toBeCloseTo(cost + 0.03, 10);
    expect(json.totals.serverTools).toEqual(anthropicTools);
    expect(json.prices[0]).toMatchObject({
      price_cache_write_1h_per_million: 6,
      price_server_tool_per_call: { web_search: 0.01, web_fetch: 0 },
    });
    const text = await runCli('ledger', dir);
    expect(text).toContain("tools include the provider's own: web_fetch ×1 0, web_search ×3 0.03");
    expect(text).toMatch(/tools 0\.03 \+ compute/);
    expect(text).toContain('(incl. 3,000 cache-write, 2,000 of it kept 1 hour)');
  });
});
