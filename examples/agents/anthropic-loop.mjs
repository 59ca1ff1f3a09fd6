// The travel desk's turns on Claude's Messages shapes, shared by the agents that speak them (the
// Anthropic API, Vertex AI, Bedrock InvokeModel): the tools as Anthropic declares them, a client's
// `messages.create` / `messages.stream().finalMessage()` as one call, and the loop: ask the model,
// run the `tool_use` blocks it returns, hand back `tool_result` blocks, until it answers with text
// (printed on stdout).
import { config, jsonSchema, MAX_TURNS, runTool, systemPrompt, TOOLS, trace, userMessage } from './tools.mjs';

export const anthropicTools = TOOLS.map((t) => ({
  name: t.name,
  description: t.description,
  input_schema: jsonSchema(t),
}));

/** The model's message for `messages` from an Anthropic SDK client (streamed with `--stream`). */
export async function completerOf(client, model) {
  const system = await systemPrompt();
  return async (messages) => {
    const params = { model, max_tokens: 1024, system, messages, tools: anthropicTools };
    if (!config.stream) return await client.messages.create(params);
    return await client.messages.stream(params).finalMessage();
  };
}

/** Runs the conversation: `complete(messages)` is the model's next message. */
export async function runAnthropicTurns(complete) {
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
      return;
    }
    const results = [];
    for (const use of uses) {
      trace(`${use.name} ${JSON.stringify(use.input)}`);
      results.push({ type: 'tool_result', tool_use_id: use.id, content: await runTool(use.name, use.input) });
    }
    messages.push({ role: 'user', content: results });
  }
  process.stderr.write(`gave up after ${MAX_TURNS} turns\n`);
  process.exitCode = 1;
}
