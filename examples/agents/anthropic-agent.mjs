// The travel desk agent on the real `@anthropic-ai/sdk` (Messages with tool_use), streaming
// with `--stream` or AGENT_STREAM=1. Prints the final answer on stdout. Env: see examples/README.md.
import Anthropic from '@anthropic-ai/sdk';
import { config, jsonSchema, MAX_TURNS, runTool, systemPrompt, TOOLS, trace, userMessage } from './tools.mjs';

const client = new Anthropic({
  baseURL: process.env.ANTHROPIC_BASE_URL,
  apiKey: process.env.ANTHROPIC_API_KEY ?? 'fake-key',
  maxRetries: 0,
});
const model = process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-5';
const tools = TOOLS.map((t) => ({ name: t.name, description: t.description, input_schema: jsonSchema(t) }));
const system = await systemPrompt();

async function complete(messages) {
  const params = { model, max_tokens: 1024, system, messages, tools };
  if (!config.stream) return await client.messages.create(params);
  return await client.messages.stream(params).finalMessage();
}

const messages = [{ role: 'user', content: userMessage() }];
for (let turn = 1; turn <= MAX_TURNS; turn++) {
  const message = await complete(messages);
  messages.push({ role: 'assistant', content: message.content });
  const uses = message.content.filter((b) => b.type === 'tool_use');
  if (uses.length === 0) {
    const text = message.content
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join('');
    process.stdout.write(`${text}\n`);
    break;
  }
  const results = [];
  for (const use of uses) {
    trace(`${use.name} ${JSON.stringify(use.input)}`);
    results.push({ type: 'tool_result', tool_use_id: use.id, content: await runTool(use.name, use.input) });
  }
  messages.push({ role: 'user', content: results });
}
if (messages.at(-1)?.role !== 'assistant') {
  process.stderr.write(`gave up after ${MAX_TURNS} turns\n`);
  process.exitCode = 1;
}
