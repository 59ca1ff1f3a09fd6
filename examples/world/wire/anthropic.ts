// Anthropic Messages (POST /v1/messages), streamed and not, with fake prompt caching (cache
// writes on a conversation's first call, reads after).
import type { Conversation, ToolCallSeen } from '../fake-policy.js';
import {
  type Meant,
  type Obj,
  outputText,
  pieces,
  prefixTokens,
  textOf,
  tokens,
  type Wire,
  wordPieces,
} from './shared.js';

function conversation(body: Obj): { conv: Conversation; hasHistory: boolean } {
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

export const anthropicWire: Wire = {
  api: 'anthropic',
  route: (path) => (path === '/v1/messages' ? {} : undefined),
  reply(body, { hash, policy }) {
    const { conv, hasHistory } = conversation(body);
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
    const text = content
      .filter((b) => b.type === 'text')
      .map((b) => String(b.text))
      .join('');
    const meant: Meant = {
      model,
      text,
      toolCalls: content
        .filter((b) => b.type === 'tool_use')
        .map((b) => ({ name: String(b.name), arguments: JSON.stringify(b.input) })),
      usage: {
        inputUncached: usage.input_tokens,
        cacheRead: usage.cache_read_input_tokens,
        cacheWrite: usage.cache_creation_input_tokens,
        output: usage.output_tokens,
        reasoning: 0,
      },
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
      meant,
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
  },
};
