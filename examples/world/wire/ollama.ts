// Ollama's native chat API (POST /api/chat), as an Ollama server answers: `message` with content
// and `tool_calls` (arguments as an object, no call ids: results come back as `tool` messages,
// by `tool_name` when the client says), `prompt_eval_count` / `eval_count` and durations in
// nanoseconds; streamed (the default of the API, `stream: false` asks for one body) as NDJSON,
// one JSON object a line, the counts on the last (`done: true`).
import type { Conversation, ToolCallSeen } from '../fake-policy.js';
import { type Meant, type Obj, outputText, textOf, tokens, type Wire, wordPieces } from './shared.js';

/** A fixed creation time, as Ollama writes `created_at`, so answers are byte-identical across runs. */
const CREATED_AT = '2026-11-24T09:00:00.000000000Z';

function conversation(body: Obj): Conversation {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Obj[];
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => textOf(m.content))
    .join('\n');
  const userText = messages
    .filter((m) => m.role === 'user')
    .map((m) => textOf(m.content))
    .join('\n');
  const calls: ToolCallSeen[] = [];
  for (const m of messages) {
    if (m.role === 'assistant' && Array.isArray(m.tool_calls))
      for (const tc of m.tool_calls as Obj[]) {
        const fn = (tc.function ?? {}) as Obj;
        const name = String(fn.name);
        const n = calls.filter((c) => c.name === name).length;
        calls.push({ id: `${name}#${n}`, name, args: (fn.arguments ?? {}) as Obj });
      }
    if (m.role === 'tool') {
      const name = typeof m.tool_name === 'string' ? m.tool_name : undefined;
      const target = calls.find((c) => c.result === undefined && (name === undefined || c.name === name));
      if (target) target.result = textOf(m.content);
    }
  }
  const toolNames = ((body.tools ?? []) as Obj[]).map((t) => String((t.function as Obj | undefined)?.name));
  return { system, userText, calls, toolNames };
}

export const ollamaWire: Wire = {
  api: 'ollama',
  route: (path) => (path === '/api/chat' ? {} : undefined),
  streamsByDefault: true,
  reply(body, { policy }) {
    const decision = policy(conversation(body));
    const model = String(body.model ?? 'fake-model');
    const content = decision.kind === 'final' ? decision.text : decision.say;
    const toolCalls =
      decision.kind === 'tool_calls'
        ? decision.calls.map((c) => ({ function: { name: c.name, arguments: c.args } }))
        : [];
    const prompt = tokens(JSON.stringify({ messages: body.messages, tools: body.tools ?? [] }));
    const output = tokens(outputText(decision));
    const meant: Meant = {
      model,
      text: content,
      toolCalls: toolCalls.map((c) => ({ name: c.function.name, arguments: JSON.stringify(c.function.arguments) })),
      usage: { inputUncached: prompt, cacheRead: 0, cacheWrite: 0, output, reasoning: 0 },
    };
    const done = {
      done: true,
      done_reason: 'stop',
      total_duration: 1_500_000_000 + output * 20_000_000,
      load_duration: 12_000_000,
      prompt_eval_count: prompt,
      prompt_eval_duration: prompt * 400_000,
      eval_count: output,
      eval_duration: output * 20_000_000,
    };
    const message = (text: string, calls: Obj[]) => ({
      role: 'assistant',
      content: text,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    });
    return {
      meant,
      json: () => ({ model, created_at: CREATED_AT, message: message(content, toolCalls), ...done }),
      sse: () => '',
      stream: () => {
        // As Ollama streams: text pieces with done:false, the tool calls whole in a chunk of their
        // own, then an empty message with done:true and the counts.
        const lines: Obj[] = wordPieces(content).map((piece) => ({
          model,
          created_at: CREATED_AT,
          message: message(piece, []),
          done: false,
        }));
        if (toolCalls.length > 0)
          lines.push({ model, created_at: CREATED_AT, message: message('', toolCalls), done: false });
        lines.push({ model, created_at: CREATED_AT, message: message('', []), ...done });
        return { contentType: 'application/x-ndjson', parts: lines.map((line) => `${JSON.stringify(line)}\n`) };
      },
    };
  },
};
