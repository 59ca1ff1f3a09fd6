// A plain tool-calling loop on the real `openai` SDK (Chat Completions with tools), shared by the
// example worlds' agents: each world brings its tools, its prompt and its task. Streaming with
// `stream: true`. Prints the final answer on stdout and sets a non-zero exit code when it gives up.
import OpenAI from 'openai';
import { jsonSchema } from './json-schema.mjs';

/**
 * Run the loop until the model answers without tool calls (or `maxTurns` model calls).
 * `tools`: [{ name, description, parameters, required }]; `runTool(name, args)` returns the text
 * handed back to the model; `trace(line)` logs to stderr.
 */
export async function runOpenAiAgent({
  tools,
  runTool,
  system,
  user,
  stream = false,
  trace = () => {},
  maxTurns = 20,
}) {
  const client = new OpenAI({
    baseURL: process.env.OPENAI_BASE_URL,
    apiKey: process.env.OPENAI_API_KEY ?? 'fake-key',
    maxRetries: 0,
  });
  const model = process.env.OPENAI_MODEL ?? 'gpt-4.1-mini';
  const toolDefs = tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: jsonSchema(t) },
  }));

  /** One model call; returns the assistant message (content + tool_calls), streamed or not. */
  async function complete(messages) {
    if (!stream) {
      const res = await client.chat.completions.create({ model, messages, tools: toolDefs });
      return res.choices[0].message;
    }
    const chunks = await client.chat.completions.create({
      model,
      messages,
      tools: toolDefs,
      stream: true,
      stream_options: { include_usage: true },
    });
    let content = null;
    const calls = [];
    for await (const chunk of chunks) {
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (typeof delta.content === 'string') content = (content ?? '') + delta.content;
      for (const tc of delta.tool_calls ?? []) {
        calls[tc.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
        const call = calls[tc.index];
        if (tc.id) call.id = tc.id;
        if (tc.function?.name) call.function.name += tc.function.name;
        if (tc.function?.arguments) call.function.arguments += tc.function.arguments;
      }
    }
    return { role: 'assistant', content, ...(calls.length > 0 ? { tool_calls: calls } : {}) };
  }

  const messages = [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
  for (let turn = 1; turn <= maxTurns; turn++) {
    const message = await complete(messages);
    messages.push(message);
    if (!message.tool_calls?.length) {
      process.stdout.write(`${message.content ?? ''}\n`);
      break;
    }
    for (const call of message.tool_calls) {
      const args = JSON.parse(call.function.arguments || '{}');
      trace(`${call.function.name} ${call.function.arguments}`);
      messages.push({ role: 'tool', tool_call_id: call.id, content: await runTool(call.function.name, args) });
    }
  }
  if (messages.at(-1)?.role !== 'assistant') {
    process.stderr.write(`gave up after ${maxTurns} turns\n`);
    process.exitCode = 1;
  }
}
