// The travel desk agent on the real `openai` SDK (Chat Completions with tools), streaming with
// `--stream` or AGENT_STREAM=1. Prints the final answer on stdout. Env: see examples/README.md.
import OpenAI from 'openai';
import { config, jsonSchema, MAX_TURNS, runTool, systemPrompt, TOOLS, trace, userMessage } from './tools.mjs';

const client = new OpenAI({
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY ?? 'fake-key',
  maxRetries: 0,
});
const model = process.env.OPENAI_MODEL ?? 'gpt-4.1-mini';
const tools = TOOLS.map((t) => ({
  type: 'function',
  function: { name: t.name, description: t.description, parameters: jsonSchema(t) },
}));

/** One model call; returns the assistant message (content + tool_calls), streamed or not. */
async function complete(messages) {
  if (!config.stream) {
    const res = await client.chat.completions.create({ model, messages, tools });
    return res.choices[0].message;
  }
  const stream = await client.chat.completions.create({
    model,
    messages,
    tools,
    stream: true,
    stream_options: { include_usage: true },
  });
  let content = null;
  const calls = [];
  for await (const chunk of stream) {
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
  { role: 'system', content: await systemPrompt() },
  { role: 'user', content: userMessage() },
];
for (let turn = 1; turn <= MAX_TURNS; turn++) {
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
  process.stderr.write(`gave up after ${MAX_TURNS} turns\n`);
  process.exitCode = 1;
}
