// A FAKE Anthropic Messages server (POST /v1/messages), not a language model: it plays a scripted
// multi-turn, tool-using conversation. Turn k is chosen by how many assistant messages the request
// already holds, so a replay that calls it again with a changed prompt gets the same decisions.
// A turn calls one or more tools at once (parallel tool_use blocks) or answers with a final text
// built from the tool results so far. Streamed (SSE, as the real API: message_start with input
// usage, text and input_json deltas, message_delta with output usage) and not. Usage is a fixed
// function of the request, with cache reads after the first turn, so tests compare bucket by bucket.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

export interface ScriptedCall {
  name: string;
  input: Json;
}

/** One turn of the script: tool calls (with a line of text before them), or the final answer. */
export type ScriptedTurn =
  | { say?: string; calls: ScriptedCall[] }
  | { final: (results: Array<{ name: string; content: string; isError: boolean }>) => string };

export interface AnthropicCall {
  stream: boolean;
  body: Json;
  /** The usage exactly as sent (the streamed one merged from message_start and message_delta). */
  usage: {
    input_tokens: number;
    cache_read_input_tokens: number;
    cache_creation_input_tokens: number;
    output_tokens: number;
  };
  toolCalls: Array<{ id: string; name: string; input: Json }>;
  text: string;
}

export interface FakeAnthropic {
  url: string;
  calls: AnthropicCall[];
  close(): Promise<void>;
}

const tokens = (text: string) => Math.ceil(text.length / 4);

/** The tool results of the conversation, each with the name of the tool_use it answers. */
function toolResults(messages: Json[]): Array<{ name: string; content: string; isError: boolean }> {
  const names = new Map<string, string>();
  const out: Array<{ name: string; content: string; isError: boolean }> = [];
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content as Json[]) {
      if (b.type === 'tool_use') names.set(String(b.id), String(b.name));
      if (b.type === 'tool_result') {
        const c = b.content;
        const content =
          typeof c === 'string' ? c : Array.isArray(c) ? c.map((p: Json) => String(p.text ?? '')).join('') : '';
        out.push({ name: names.get(String(b.tool_use_id)) ?? '?', content, isError: b.is_error === true });
      }
    }
  }
  return out;
}

/**
 * `script`: the turns, or the turns a system prompt gets (a changed prompt that changes the
 * model's decisions, for a counterfactual replay that parts from the recording).
 */
export async function startFakeAnthropic(
  script: ScriptedTurn[] | ((system: string) => ScriptedTurn[]),
  model = 'claude-fake-1',
): Promise<FakeAnthropic> {
  const calls: AnthropicCall[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Json;
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages') || !Array.isArray(body.messages)) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'FAKE: no such route' } }));
        return;
      }
      const messages = body.messages as Json[];
      const turnIndex = messages.filter((m) => m.role === 'assistant').length;
      const turns = typeof script === 'function' ? script(anthropicSystem(body) ?? '') : script;
      const turn = turns[Math.min(turnIndex, turns.length - 1)] as ScriptedTurn;
      const content: Json[] =
        'final' in turn
          ? [{ type: 'text', text: `FAKE final: ${turn.final(toolResults(messages))}` }]
          : [
              ...(turn.say ? [{ type: 'text', text: turn.say }] : []),
              ...turn.calls.map((c, i) => ({
                type: 'tool_use',
                id: `toolu_fake_${turnIndex + 1}_${i + 1}`,
                name: c.name,
                input: c.input,
              })),
            ];
      const stopReason = 'final' in turn ? 'end_turn' : 'tool_use';
      const prefix = tokens(JSON.stringify({ system: body.system, tools: body.tools ?? [] }));
      const total = tokens(JSON.stringify({ system: body.system, messages, tools: body.tools ?? [] }));
      const usage = {
        input_tokens: total - prefix,
        cache_read_input_tokens: turnIndex > 0 ? prefix : 0,
        cache_creation_input_tokens: turnIndex > 0 ? 0 : prefix,
        output_tokens: tokens(JSON.stringify(content)),
      };
      const text = content.flatMap((b) => (b.type === 'text' ? [String(b.text)] : [])).join('');
      const toolCalls = content.flatMap((b) =>
        b.type === 'tool_use' ? [{ id: String(b.id), name: String(b.name), input: b.input as Json }] : [],
      );
      const stream = body.stream === true;
      calls.push({ stream, body, usage, toolCalls, text });
      const message = {
        id: `msg_fake_${turnIndex + 1}`,
        type: 'message',
        role: 'assistant',
        model: String(body.model ?? model),
      };
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_fake_${calls.length}` });
        res.end(JSON.stringify({ ...message, content, stop_reason: stopReason, stop_sequence: null, usage }));
        return;
      }
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'request-id': `req_fake_${calls.length}`,
      });
      const event = (type: string, data: Json) =>
        res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      event('message_start', {
        message: {
          ...message,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      });
      event('ping', {});
      content.forEach((block, index) => {
        if (block.type === 'text') {
          event('content_block_start', { index, content_block: { type: 'text', text: '' } });
          const words = String(block.text).split(/(?<= )/);
          for (let i = 0; i < words.length; i += 3) {
            event('content_block_delta', {
              index,
              delta: { type: 'text_delta', text: words.slice(i, i + 3).join('') },
            });
          }
        } else {
          event('content_block_start', { index, content_block: { ...block, input: {} } });
          const json = JSON.stringify(block.input);
          for (let i = 0; i < json.length; i += 16) {
            event('content_block_delta', {
              index,
              delta: { type: 'input_json_delta', partial_json: json.slice(i, i + 16) },
            });
          }
        }
        event('content_block_stop', { index });
      });
      event('message_delta', {
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      });
      event('message_stop', {});
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The system prompt of a Messages request, as one text (a string, or text blocks joined). */
export function anthropicSystem(body: Json): string | undefined {
  const s = body.system;
  if (typeof s === 'string') return s;
  if (Array.isArray(s)) return s.map((b) => (isObject(b) ? String(b.text ?? '') : '')).join('');
  return undefined;
}
