// A FAKE OpenAI model server (the only allowed fake): Chat Completions and Responses, each
// streamed (SSE) and not, and Embeddings (floats, or base64 float32s), deterministic. While the conversation holds no tool result and the
// request offers tools, it answers with one call of the first offered tool; then it answers
// with a final text that quotes the last tool result. Usage is a fixed function of the call
// number, with cached and reasoning tokens, so tests can compare bucket by bucket.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeCall {
  path: string;
  stream: boolean;
  body: Record<string, unknown>;
  /** The usage object exactly as the fake sent it. */
  usage: Record<string, unknown>;
  /** The tool call made, or the final text. */
  toolCall?: { name: string; arguments: string };
  text?: string;
  /** An embeddings call: the vectors sent, one per input (as floats, whatever the encoding). */
  vectors?: number[][];
}

export interface FakeOpenAI {
  url: string;
  calls: FakeCall[];
  close(): Promise<void>;
}

export interface FakeOpenAIOptions {
  /** Arguments per tool name (default `{}`). */
  toolArgs?: Record<string, unknown>;
  /**
   * Tools to call in this order, one a turn (turn k calls the k-th while the conversation holds
   * k-1 tool results), then the final text; a name not offered ends the plan early.
   * Default: the first offered tool once.
   */
  toolPlan?: string[];
  /**
   * A streamed Chat Completion carries its usage chunk: 'always' (the default), or as the real API
   * does, only when the request asks with `stream_options.include_usage`.
   */
  streamUsage?: 'always' | 'when-asked';
  /** The final text (default: one that quotes the last tool result). */
  finalText?: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The usage numbers of call n (1-based), before they are shaped per API. */
export function fakeTokens(n: number) {
  return { input: 200 + 17 * n, cached: 64 * n, output: 30 + n, reasoning: 4 + n };
}

function toolNames(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  return tools
    .map((t) => (isObject(t) ? (isObject(t.function) ? t.function.name : t.name) : undefined))
    .filter((n): n is string => typeof n === 'string');
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined ? '' : JSON.stringify(content);
  return content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

/** How many tool results the conversation holds. */
function toolResultCount(body: Json): number {
  if (Array.isArray(body.messages)) return body.messages.filter((m) => isObject(m) && m.role === 'tool').length;
  if (Array.isArray(body.input))
    return body.input.filter((m) => isObject(m) && m.type === 'function_call_output').length;
  return 0;
}

/** The last tool result in the conversation (Chat `tool` message or Responses `function_call_output`). */
function lastToolResult(body: Json): string | undefined {
  if (Array.isArray(body.messages)) {
    const results = body.messages.filter((m) => isObject(m) && m.role === 'tool');
    const last = results.at(-1);
    return isObject(last) ? contentText(last.content) : undefined;
  }
  if (Array.isArray(body.input)) {
    const results = body.input.filter((m) => isObject(m) && m.type === 'function_call_output');
    const last = results.at(-1);
    return isObject(last) ? contentText(last.output) : undefined;
  }
  return undefined;
}

/** Writes one SSE event, then yields a moment so events reach the client as separate chunks. */
const sse = async (res: http.ServerResponse, data: unknown, event?: string) => {
  res.write(`${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`);
  await new Promise((resolve) => setTimeout(resolve, 1));
};

async function chat(
  res: http.ServerResponse,
  n: number,
  body: Json,
  call: FakeCall,
  streamUsage: FakeOpenAIOptions['streamUsage'],
): Promise<void> {
  const t = fakeTokens(n);
  const usage = {
    prompt_tokens: t.input,
    completion_tokens: t.output + t.reasoning,
    total_tokens: t.input + t.output + t.reasoning,
    prompt_tokens_details: { cached_tokens: t.cached, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: t.reasoning, audio_tokens: 0 },
  };
  call.usage = usage;
  const base = { id: `chatcmpl-fake-${n}`, created: 1_700_000_000 + n, model: 'fake-gpt-1' };
  const tc =
    call.toolCall === undefined ? undefined : { id: `call_fake_${n}`, type: 'function', function: call.toolCall };
  const finish = tc === undefined ? 'stop' : 'tool_calls';
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: call.text ?? null, ...(tc ? { tool_calls: [tc] } : {}) },
            finish_reason: finish,
            logprobs: null,
          },
        ],
        usage,
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: unknown, finishReason: string | null) =>
    sse(res, { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finishReason }] });
  await chunk({ role: 'assistant', content: '' }, null);
  if (tc !== undefined) {
    await chunk(
      { tool_calls: [{ index: 0, id: tc.id, type: 'function', function: { name: tc.function.name, arguments: '' } }] },
      null,
    );
    const args = tc.function.arguments;
    const half = Math.ceil(args.length / 2);
    await chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, half) } }] }, null);
    await chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] }, null);
  } else {
    for (const word of (call.text ?? '').split(/(?= )/)) await chunk({ content: word }, null);
  }
  await chunk({}, finish);
  const asked = isObject(body.stream_options) && body.stream_options.include_usage === true;
  if (streamUsage === 'when-asked' && !asked) call.usage = {};
  else await sse(res, { ...base, object: 'chat.completion.chunk', choices: [], usage });
  res.end('data: [DONE]\n\n');
}

async function responses(res: http.ServerResponse, n: number, body: Json, call: FakeCall): Promise<void> {
  const t = fakeTokens(n);
  const usage = {
    input_tokens: t.input,
    input_tokens_details: { cached_tokens: t.cached },
    output_tokens: t.output + t.reasoning,
    output_tokens_details: { reasoning_tokens: t.reasoning },
    total_tokens: t.input + t.output + t.reasoning,
  };
  call.usage = usage;
  const item =
    call.toolCall === undefined
      ? {
          id: `msg_fake_${n}`,
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: call.text ?? '', annotations: [], logprobs: [] }],
        }
      : {
          id: `fc_fake_${n}`,
          type: 'function_call',
          status: 'completed',
          call_id: `call_fake_${n}`,
          name: call.toolCall.name,
          arguments: call.toolCall.arguments,
        };
  const response = {
    id: `resp_fake_${n}`,
    object: 'response',
    created_at: 1_700_000_000 + n,
    status: 'completed',
    model: 'fake-gpt-1',
    instructions: body.instructions ?? null,
    output: [item],
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: Array.isArray(body.tools) ? body.tools : [],
    error: null,
    incomplete_details: null,
    usage,
  };
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(response));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let seq = 0;
  const emit = (type: string, data: Json) => sse(res, { type, sequence_number: seq++, ...data }, type);
  await emit('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } });
  await emit('response.in_progress', { response: { ...response, status: 'in_progress', output: [], usage: null } });
  if (item.type === 'message') {
    const text = call.text ?? '';
    await emit('response.output_item.added', {
      output_index: 0,
      item: { ...item, status: 'in_progress', content: [] },
    });
    const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    await emit('response.content_part.added', { item_id: item.id, output_index: 0, content_index: 0, part });
    for (const word of text.split(/(?= )/)) {
      await emit('response.output_text.delta', {
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        delta: word,
        logprobs: [],
      });
    }
    await emit('response.output_text.done', {
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      text,
      logprobs: [],
    });
    await emit('response.content_part.done', {
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      part: { ...part, text },
    });
  } else {
    const args = String(item.arguments);
    await emit('response.output_item.added', {
      output_index: 0,
      item: { ...item, status: 'in_progress', arguments: '' },
    });
    await emit('response.function_call_arguments.delta', { item_id: item.id, output_index: 0, delta: args });
    await emit('response.function_call_arguments.done', { item_id: item.id, output_index: 0, arguments: args });
  }
  await emit('response.output_item.done', { output_index: 0, item });
  await emit('response.completed', { response });
  res.end();
}

/** Dimensions of the FAKE embeddings. */
export const FAKE_DIMENSIONS = 8;

/** The FAKE vector of a text: a fixed function of its characters, exact in float32. */
export function fakeVector(text: string): number[] {
  const v = new Array<number>(FAKE_DIMENSIONS).fill(0);
  for (const [i, ch] of [...text].entries())
    v[i % FAKE_DIMENSIONS] = ((v[i % FAKE_DIMENSIONS] ?? 0) + (ch.codePointAt(0) ?? 0)) % 256;
  return v.map((x) => x / 256);
}

/** Usage of an embeddings call: 3 tokens per input plus its words (OpenAI sends prompt and total only). */
export function fakeEmbeddingTokens(inputs: string[]): number {
  return inputs.reduce((n, text) => n + 3 + text.split(/\s+/).filter(Boolean).length, 0);
}

function embeddings(res: http.ServerResponse, body: Json, call: FakeCall): void {
  const inputs = (Array.isArray(body.input) ? body.input : [body.input]).map((x) => String(x));
  const vectors = inputs.map(fakeVector);
  const tokens = fakeEmbeddingTokens(inputs);
  call.usage = { prompt_tokens: tokens, total_tokens: tokens };
  call.vectors = vectors;
  const base64 = body.encoding_format === 'base64';
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      object: 'list',
      data: vectors.map((v, index) => ({
        object: 'embedding',
        index,
        embedding: base64 ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v,
      })),
      model: body.model,
      usage: call.usage,
    }),
  );
}

/** Starts the FAKE model on 127.0.0.1 (port 0). Base URL for SDKs: `${url}/v1`. */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const calls: FakeCall[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://fake').pathname;
      let body: Json = {};
      try {
        const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        if (isObject(parsed)) body = parsed;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"bad json"}}');
        return;
      }
      const isChat = path.endsWith('/chat/completions');
      if (req.method === 'POST' && path.endsWith('/embeddings')) {
        const call: FakeCall = { path, stream: false, body, usage: {} };
        calls.push(call);
        embeddings(res, body, call);
        return;
      }
      if (req.method !== 'POST' || (!isChat && !path.endsWith('/responses'))) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `fake model: no route ${req.method} ${path}` } }));
        return;
      }
      const n = calls.length + 1;
      const result = lastToolResult(body);
      const offered = toolNames(body.tools);
      const planned = options.toolPlan?.[toolResultCount(body)];
      const tool = options.toolPlan
        ? planned !== undefined && offered.includes(planned)
          ? planned
          : undefined
        : offered[0];
      const call: FakeCall = { path, stream: body.stream === true, body, usage: {} };
      if ((result === undefined || options.toolPlan) && tool !== undefined) {
        call.toolCall = { name: tool, arguments: JSON.stringify(options.toolArgs?.[tool] ?? {}) };
      } else {
        call.text =
          options.finalText ?? (result === undefined ? 'FAKE says hello.' : `FAKE final: the tool said ${result}`);
      }
      calls.push(call);
      void (isChat ? chat(res, n, body, call, options.streamUsage) : responses(res, n, body, call));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
