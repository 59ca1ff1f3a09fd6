// OpenAI Chat Completions (POST /v1/chat/completions), streamed and not.
import type { Conversation, Decision, ToolCallSeen } from '../fake-policy.js';
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

function conversation(body: Obj): { conv: Conversation; hasHistory: boolean } {
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

function usageOf(body: Obj, decision: Decision, hasHistory: boolean) {
  const prompt = tokens(JSON.stringify({ messages: body.messages, tools: body.tools ?? [] }));
  const messages = (body.messages ?? []) as Obj[];
  const system = messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => m.content);
  // Fake prompt caching: after the first call of a conversation the system prompt and tool
  // definitions are "cached", in 64-token blocks as OpenAI reports them.
  const cached = hasHistory ? Math.min(prompt, Math.floor(prefixTokens(system, body.tools) / 64) * 64) : 0;
  const reasoning = reasoningTokens(decision);
  const completion = tokens(outputText(decision)) + reasoning;
  return { prompt, cached, completion, reasoning };
}

export const openaiChatWire: Wire = {
  api: 'openai',
  route: (path) => (path === '/v1/chat/completions' ? {} : undefined),
  reply(body, { hash, policy }) {
    const { conv, hasHistory } = conversation(body);
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
    const u = usageOf(body, decision, hasHistory);
    const usage = {
      prompt_tokens: u.prompt,
      completion_tokens: u.completion,
      total_tokens: u.prompt + u.completion,
      prompt_tokens_details: { cached_tokens: u.cached, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: u.reasoning,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    };
    const meant: Meant = {
      model,
      ...(content === null ? {} : { text: content }),
      toolCalls: toolCalls.map((c) => ({ name: c.function.name, arguments: c.function.arguments })),
      usage: {
        inputUncached: u.prompt - u.cached,
        cacheRead: u.cached,
        cacheWrite: 0,
        output: u.completion - u.reasoning,
        reasoning: u.reasoning,
      },
    };
    const base = { id, created: CREATED, model, service_tier: 'default', system_fingerprint: 'fp_tapedeck_fake' };
    return {
      meant,
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
  },
};
