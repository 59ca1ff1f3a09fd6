// A deterministic FAKE model server — not a language model. It speaks OpenAI Chat Completions
// (POST /v1/chat/completions) and Anthropic Messages (POST /v1/messages), streaming and not,
// with provider-style usage, and answers from a scripted policy: the travel desk's
// (fake-policy.ts) by default, or the one a world passes in (`policy`). Token counts come from
// text lengths; ids from a hash of the request; every exchange is logged.
import { createHash } from 'node:crypto';
import { appendFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Conversation, type Decision, decide, type ToolCallSeen } from './fake-policy.js';

/** A fixed creation time (2026-11-24T09:00:00Z) so responses are byte-identical across runs. */
const CREATED = 1795510800;

export interface ModelServer {
  url: string;
  server: Server;
  /** One JSON line per exchange, in order: `{ seq, api, path, stream, request, response }`. */
  log: string[];
  /** Forget the log (e.g. between runs in one world); the log file is truncated too. */
  clearLog(): void;
  close(): Promise<void>;
}

type Obj = Record<string, unknown>;

/** A world's scripted model: the next move given the conversation so far. Pure and deterministic. */
export type ScriptedPolicy = (conversation: Conversation) => Decision;

export interface ModelServerOptions {
  port?: number;
  logFile?: string;
  /** The scripted policy that decides each answer (default: the travel desk's `decide`). */
  policy?: ScriptedPolicy;
}

export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const policy = options.policy ?? decide;
  const log: string[] = [];
  if (options.logFile) writeFileSync(options.logFile, '');
  const record = (entry: Obj) => {
    const line = JSON.stringify({ seq: log.length + 1, ...entry });
    log.push(line);
    if (options.logFile) appendFileSync(options.logFile, `${line}\n`);
  };
  const server = createServer((req, res) => {
    serve(req, res, record, policy).catch((err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      if (!res.headersSent) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', message } }));
      } else res.end();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    log,
    clearLog() {
      log.length = 0;
      if (options.logFile) writeFileSync(options.logFile, '');
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  record: (e: Obj) => void,
  policy: ScriptedPolicy,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (req.method === 'GET' && path === '/health') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
    return;
  }
  if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/v1/messages')) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { type: 'not_found_error', message: `no route for ${req.method} ${path}` } }));
    return;
  }
  const body = JSON.parse(raw) as Obj;
  const hash = createHash('sha256').update(raw).digest('hex').slice(0, 24);
  const api = path === '/v1/messages' ? 'anthropic' : 'openai';
  const stream = body.stream === true;
  const reply = api === 'openai' ? openaiReply(body, hash, policy) : anthropicReply(body, hash, policy);
  if (stream) {
    const sse = reply.sse();
    record({ api, path, stream, request: body, response: { sse } });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    // Write event by event, with a pause, so clients (and recorders) see real chunk boundaries
    // instead of one coalesced buffer.
    for (const event of sse.split(/(?<=\n\n)/)) {
      res.write(event);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    res.end();
  } else {
    const json = reply.json();
    record({ api, path, stream, request: body, response: json });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(json));
  }
}

/** Tokens are a length measure: one per 4 characters, rounded up. */
export function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: Obj) => (typeof part.text === 'string' ? part.text : typeof part === 'string' ? part : ''))
      .join('');
  }
  return '';
}

function parseArgs(text: unknown): Obj {
  if (typeof text !== 'string') return (text ?? {}) as Obj;
  try {
    return JSON.parse(text) as Obj;
  } catch {
    return {};
  }
}

/** Split a string into pieces of `size` characters (tool-call arguments arrive in several deltas). */
function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [''];
}

/** Text deltas at word boundaries, a few words each. */
function wordPieces(text: string): string[] {
  const words = text.split(/(?<= )/);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 3) out.push(words.slice(i, i + 3).join(''));
  return out.length > 0 ? out : [''];
}

interface Reply {
  json(): Obj;
  sse(): string;
}

// ---------------------------------------------------------------- OpenAI Chat Completions

function openaiConversation(body: Obj): { conv: Conversation; hasHistory: boolean } {
  const messages = (body.messages ?? []) as Obj[];
  const system = messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => textOf(m.content))
    .join('\n');
  const userText = messages
    .filter((m) => m.role === 'user')
    .map((m) => textOf(m.content))
    .join('\n');
  const calls: ToolCallSeen[] = [];
  for (const m of messages) {
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
      for (const tc of m.tool_calls as Obj[]) {
        const fn = (tc.function ?? {}) as Obj;
        calls.push({ id: String(tc.id), name: String(fn.name), args: parseArgs(fn.arguments) });
      }
    }
    if (m.role === 'tool') {
      const target = calls.find((c) => c.id === m.tool_call_id);
      if (target) target.result = textOf(m.content);
    }
  }
  const toolNames = ((body.tools ?? []) as Obj[]).map((t) => String((t.function as Obj | undefined)?.name ?? t.name));
  return { conv: { system, userText, calls, toolNames }, hasHistory: messages.some((m) => m.role === 'assistant') };
}

function openaiReply(body: Obj, hash: string, policy: ScriptedPolicy): Reply {
  const { conv, hasHistory } = openaiConversation(body);
  const decision = policy(conv);
  const model = String(body.model ?? 'fake-model');
  const id = `chatcmpl-${hash}`;
  const toolCalls =
    decision.kind === 'tool_calls'
      ? decision.calls.map((c, i) => ({
          id: `call_${hash.slice(0, 12)}${i}`,
          type: 'function' as const,
          function: { name: c.name, arguments: JSON.stringify(c.args) },
        }))
      : [];
  const content = decision.kind === 'final' ? decision.text : null;
  const finish = decision.kind === 'final' ? 'stop' : 'tool_calls';
  const usage = openaiUsage(body, decision, hasHistory);
  const base = { id, created: CREATED, model, service_tier: 'default', system_fingerprint: 'fp_tapedeck_fake' };
  return {
    json: () => ({
      ...base,
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content,
            refusal: null,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          logprobs: null,
          finish_reason: finish,
        },
      ],
      usage,
    }),
    sse: () => {
      // As OpenAI does: with include_usage every chunk carries `usage: null`, and a last chunk
      // with no choices carries the usage.
      const includeUsage = (body.stream_options as Obj | undefined)?.include_usage === true;
      const tail = includeUsage ? { usage: null } : {};
      const chunk = (delta: Obj, finishReason: string | null = null) =>
        `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...tail })}\n\n`;
      let out = chunk({ role: 'assistant', content: content === null ? null : '', refusal: null });
      if (content !== null) for (const piece of wordPieces(content)) out += chunk({ content: piece });
      toolCalls.forEach((tc, index) => {
        out += chunk({
          tool_calls: [{ index, id: tc.id, type: 'function', function: { name: tc.function.name, arguments: '' } }],
        });
        for (const piece of pieces(tc.function.arguments, 24)) {
          out += chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
        }
      });
      out += chunk({}, finish);
      if (includeUsage)
        out += `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`;
      return `${out}data: [DONE]\n\n`;
    },
  };
}

function prefixTokens(system: unknown, tools: unknown): number {
  return tokens(JSON.stringify({ system, tools: tools ?? [] }));
}

function outputText(decision: Decision): string {
  return decision.kind === 'final'
    ? decision.text
    : `${decision.say}${decision.calls.map((c) => `${c.name}${JSON.stringify(c.args)}`).join('')}`;
}

function openaiUsage(body: Obj, decision: Decision, hasHistory: boolean): Obj {
  const prompt = tokens(JSON.stringify({ messages: body.messages, tools: body.tools ?? [] }));
  const messages = (body.messages ?? []) as Obj[];
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => m.content);
  // Fake prompt caching: after the first call of a conversation the system prompt and tool
  // definitions are "cached", in 64-token blocks as OpenAI reports them.
  const cached = hasHistory ? Math.min(prompt, Math.floor(prefixTokens(system, body.tools) / 64) * 64) : 0;
  const reasoning = decision.kind === 'tool_calls' ? 16 * decision.calls.length : 8;
  const completion = tokens(outputText(decision)) + reasoning;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

// ---------------------------------------------------------------- Anthropic Messages

function anthropicConversation(body: Obj): { conv: Conversation; hasHistory: boolean } {
  const system = textOf(body.system);
  const messages = (body.messages ?? []) as Obj[];
  const calls: ToolCallSeen[] = [];
  const userTexts: string[] = [];
  for (const m of messages) {
    const blocks: Obj[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content as Obj[]);
    for (const block of blocks) {
      if (m.role === 'user' && block.type === 'text') userTexts.push(String(block.text));
      if (m.role === 'assistant' && block.type === 'tool_use') {
        calls.push({ id: String(block.id), name: String(block.name), args: (block.input ?? {}) as Obj });
      }
      if (m.role === 'user' && block.type === 'tool_result') {
        const target = calls.find((c) => c.id === block.tool_use_id);
        if (target) target.result = textOf(block.content);
      }
    }
  }
  const toolNames = ((body.tools ?? []) as Obj[]).map((t) => String(t.name));
  return {
    conv: { system, userText: userTexts.join('\n'), calls, toolNames },
    hasHistory: messages.some((m) => m.role === 'assistant'),
  };
}

function anthropicReply(body: Obj, hash: string, policy: ScriptedPolicy): Reply {
  const { conv, hasHistory } = anthropicConversation(body);
  const decision = policy(conv);
  const model = String(body.model ?? 'fake-model');
  const id = `msg_${hash}`;
  const content: Obj[] =
    decision.kind === 'final'
      ? [{ type: 'text', text: decision.text }]
      : [
          { type: 'text', text: decision.say },
          ...decision.calls.map((c, i) => ({
            type: 'tool_use',
            id: `toolu_${hash.slice(0, 12)}${i}`,
            name: c.name,
            input: c.args,
          })),
        ];
  const stopReason = decision.kind === 'final' ? 'end_turn' : 'tool_use';
  const total = tokens(JSON.stringify({ system: body.system, messages: body.messages, tools: body.tools ?? [] }));
  const prefix = Math.min(total, prefixTokens(body.system, body.tools));
  // Fake prompt caching: the first call of a conversation writes the system+tools prefix to
  // the cache, later calls read it. input_tokens is the uncached rest, as Anthropic reports it.
  const usage = {
    input_tokens: total - prefix,
    cache_creation_input_tokens: hasHistory ? 0 : prefix,
    cache_read_input_tokens: hasHistory ? prefix : 0,
    output_tokens: tokens(outputText(decision)),
  };
  const message = {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
  };
  return {
    json: () => ({ ...message, usage }),
    sse: () => {
      const event = (type: string, data: Obj) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      let out = event('message_start', {
        message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
      });
      out += event('ping', {});
      content.forEach((block, index) => {
        if (block.type === 'text') {
          out += event('content_block_start', { index, content_block: { type: 'text', text: '' } });
          for (const piece of wordPieces(String(block.text))) {
            out += event('content_block_delta', { index, delta: { type: 'text_delta', text: piece } });
          }
        } else {
          out += event('content_block_start', {
            index,
            content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
          });
          for (const piece of pieces(JSON.stringify(block.input), 24)) {
            out += event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
          }
        }
        out += event('content_block_stop', { index });
      });
      out += event('message_delta', {
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      });
      return out + event('message_stop', {});
    },
  };
}
