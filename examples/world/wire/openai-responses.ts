// OpenAI Responses (POST /v1/responses), streamed (typed SSE events) and not: `instructions` and
// system/developer input items are the system prompt, `function_call` / `function_call_output`
// items carry the tool calls and their results.
import type { Conversation, ToolCallSeen } from '../fake-policy.js';
import {
  CREATED,
  type Meant,
  type Obj,
  outputText,
  parseArgs,
  pieces,
  prefixTokens,
  reasoningTokens,
  textOf,
  tokens,
  type Wire,
  wordPieces,
} from './shared.js';

function items(body: Obj): Obj[] {
  if (typeof body.input === 'string') return [{ role: 'user', content: body.input }];
  return Array.isArray(body.input) ? (body.input as Obj[]) : [];
}

function conversation(body: Obj): { conv: Conversation; hasHistory: boolean } {
  const input = items(body);
  const system = [
    ...(typeof body.instructions === 'string' ? [body.instructions] : []),
    ...input.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content)),
  ].join('\n');
  const userText = input
    .filter((m) => m.role === 'user')
    .map((m) => textOf(m.content))
    .join('\n');
  const calls: ToolCallSeen[] = [];
  for (const item of input) {
    if (item.type === 'function_call') {
      calls.push({ id: String(item.call_id), name: String(item.name), args: parseArgs(item.arguments) });
    } else if (item.type === 'function_call_output') {
      const target = calls.find((c) => c.id === item.call_id);
      if (target) target.result = typeof item.output === 'string' ? item.output : textOf(item.output);
    }
  }
  const toolNames = ((body.tools ?? []) as Obj[]).filter((t) => t.type === 'function').map((t) => String(t.name));
  const hasHistory = input.some((m) => m.type === 'function_call' || m.role === 'assistant');
  return { conv: { system, userText, calls, toolNames }, hasHistory };
}

export const openaiResponsesWire: Wire = {
  api: 'openai-responses',
  route: (path) => (path === '/v1/responses' ? {} : undefined),
  reply(body, { hash, policy }) {
    const { conv, hasHistory } = conversation(body);
    const decision = policy(conv);
    const model = String(body.model ?? 'fake-model');
    const output: Obj[] =
      decision.kind === 'final'
        ? [
            {
              id: `msg_${hash}`,
              type: 'message',
              status: 'completed',
              role: 'assistant',
              content: [{ type: 'output_text', text: decision.text, annotations: [], logprobs: [] }],
            },
          ]
        : decision.calls.map((c, i) => ({
            id: `fc_${hash.slice(0, 12)}${i}`,
            type: 'function_call',
            status: 'completed',
            arguments: JSON.stringify(c.args),
            call_id: `call_${hash.slice(0, 12)}${i}`,
            name: c.name,
          }));
    const input = tokens(
      JSON.stringify({ instructions: body.instructions, input: body.input, tools: body.tools ?? [] }),
    );
    // Fake prompt caching as OpenAI reports it: the instructions and tools, in 64-token blocks,
    // once the conversation has history.
    const cached = hasHistory ? Math.min(input, Math.floor(prefixTokens(body.instructions, body.tools) / 64) * 64) : 0;
    const reasoning = reasoningTokens(decision);
    const outputTokens = tokens(outputText(decision)) + reasoning;
    const usage = {
      input_tokens: input,
      input_tokens_details: { cached_tokens: cached },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: reasoning },
      total_tokens: input + outputTokens,
    };
    const meant: Meant = {
      model,
      ...(decision.kind === 'final' ? { text: decision.text } : {}),
      toolCalls: output
        .filter((o) => o.type === 'function_call')
        .map((o) => ({ name: String(o.name), arguments: String(o.arguments) })),
      usage: {
        inputUncached: input - cached,
        cacheRead: cached,
        cacheWrite: 0,
        output: outputTokens - reasoning,
        reasoning,
      },
    };
    const response = {
      id: `resp_${hash}`,
      object: 'response',
      created_at: CREATED,
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: body.instructions ?? null,
      model,
      output,
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: Array.isArray(body.tools) ? body.tools : [],
      usage,
    };
    return {
      meant,
      json: () => response,
      sse: () => {
        let seq = 0;
        let out = '';
        const emit = (type: string, data: Obj) => {
          out += `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
        };
        const pending = { ...response, status: 'in_progress', output: [], usage: null };
        emit('response.created', { response: pending });
        emit('response.in_progress', { response: pending });
        output.forEach((item, index) => {
          if (item.type === 'message') {
            const text = String(((item.content as Obj[])[0] as Obj).text);
            emit('response.output_item.added', {
              output_index: index,
              item: { ...item, status: 'in_progress', content: [] },
            });
            const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
            const at = { item_id: item.id, output_index: index, content_index: 0 };
            emit('response.content_part.added', { ...at, part });
            for (const delta of wordPieces(text)) emit('response.output_text.delta', { ...at, delta, logprobs: [] });
            emit('response.output_text.done', { ...at, text, logprobs: [] });
            emit('response.content_part.done', { ...at, part: { ...part, text } });
          } else {
            const args = String(item.arguments);
            emit('response.output_item.added', {
              output_index: index,
              item: { ...item, status: 'in_progress', arguments: '' },
            });
            for (const delta of pieces(args, 24))
              emit('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta });
            emit('response.function_call_arguments.done', { item_id: item.id, output_index: index, arguments: args });
          }
          emit('response.output_item.done', { output_index: index, item });
        });
        emit('response.completed', { response });
        return out;
      },
    };
  },
};
