// The travel desk agent on the real `ollama` SDK (Ollama's native /api/chat with tools; streamed
// NDJSON with `--stream` / AGENT_STREAM=1): the system prompt is a `system` message, tool calls
// come back whole in `message.tool_calls` (arguments as an object, no ids) and their results go
// out as `tool` messages naming the tool. Prints the final answer on stdout.
// Env: OLLAMA_HOST, OLLAMA_MODEL; the rest as examples/README.md.
import { Ollama } from 'ollama';
import { config, jsonSchema, MAX_TURNS, runTool, systemPrompt, TOOLS, trace, userMessage } from './tools.mjs';

const ollama = new Ollama({ host: process.env.OLLAMA_HOST ?? 'http://127.0.0.1:11434' });
const model = process.env.OLLAMA_MODEL ?? 'llama3.1:8b';
const tools = TOOLS.map((t) => ({
  type: 'function',
  function: { name: t.name, description: t.description, parameters: jsonSchema(t) },
}));

/** The model's turn: its message, streamed pieces joined (tool calls arrive whole). */
async function chat(messages) {
  if (!config.stream) return (await ollama.chat({ model, messages, tools, stream: false })).message;
  const message = { role: 'assistant', content: '' };
  for await (const part of await ollama.chat({ model, messages, tools, stream: true })) {
    message.content += part.message.content;
    if (part.message.tool_calls?.length)
      message.tool_calls = [...(message.tool_calls ?? []), ...part.message.tool_calls];
  }
  return message;
}

const messages = [
  { role: 'system', content: await systemPrompt() },
  { role: 'user', content: userMessage() },
];
let answered = false;
for (let turn = 1; turn <= MAX_TURNS && !answered; turn++) {
  const message = await chat(messages);
  messages.push(message);
  const calls = message.tool_calls ?? [];
  if (calls.length === 0) {
    process.stdout.write(`${message.content}\n`);
    answered = true;
    break;
  }
  for (const { function: fn } of calls) {
    trace(`${fn.name} ${JSON.stringify(fn.arguments ?? {})}`);
    const output = await runTool(fn.name, fn.arguments ?? {});
    messages.push({ role: 'tool', tool_name: fn.name, content: output });
  }
}
if (!answered) {
  process.stderr.write(`gave up after ${MAX_TURNS} turns\n`);
  process.exitCode = 1;
}
