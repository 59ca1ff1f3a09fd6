// The travel desk agent on the real `@aws-sdk/client-bedrock-runtime` SDK (Bedrock's Converse API
// with tools; ConverseStream, an AWS event stream, with `--stream` / AGENT_STREAM=1): the system
// prompt is `system: [{ text }, { cachePoint }]`, tool calls come back as `toolUse` blocks and go out
// as `toolResult` blocks. Requests are SigV4-signed with the credentials in the environment.
// Prints the final answer on stdout. Env: BEDROCK_ENDPOINT, AWS_REGION, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, BEDROCK_MODEL, BEDROCK_HTTP1; the rest as examples/README.md.
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { config, jsonSchema, MAX_TURNS, runTool, systemPrompt, TOOLS, trace, userMessage } from './tools.mjs';

const client = new BedrockRuntimeClient({
  region: process.env.AWS_REGION ?? 'us-east-1',
  ...(process.env.BEDROCK_ENDPOINT ? { endpoint: process.env.BEDROCK_ENDPOINT } : {}),
  // BEDROCK_HTTP1=1: over HTTP/1.1 (node:http), as a client given a NodeHttpHandler sends it.
  ...(process.env.BEDROCK_HTTP1 === '1' ? { requestHandler: new NodeHttpHandler() } : {}),
});
const modelId = process.env.BEDROCK_MODEL ?? 'anthropic.claude-3-5-haiku-20241022-v1:0';
const request = {
  modelId,
  system: [{ text: await systemPrompt() }, { cachePoint: { type: 'default' } }],
  toolConfig: {
    tools: TOOLS.map((t) => ({
      toolSpec: { name: t.name, description: t.description, inputSchema: { json: jsonSchema(t) } },
    })),
  },
  inferenceConfig: { maxTokens: 1024 },
};

/** The model's turn: its message, streamed blocks assembled (tool input arrives as JSON text in pieces). */
async function converse(messages) {
  if (!config.stream) return (await client.send(new ConverseCommand({ ...request, messages }))).output?.message;
  const response = await client.send(new ConverseStreamCommand({ ...request, messages }));
  const content = [];
  for await (const event of response.stream ?? []) {
    if (event.contentBlockStart?.start?.toolUse) {
      const { toolUseId, name } = event.contentBlockStart.start.toolUse;
      content[event.contentBlockStart.contentBlockIndex] = { toolUse: { toolUseId, name, input: '' } };
    } else if (event.contentBlockDelta) {
      const { contentBlockIndex: i, delta } = event.contentBlockDelta;
      if (delta.text !== undefined) content[i] = { text: (content[i]?.text ?? '') + delta.text };
      else if (delta.toolUse) content[i].toolUse.input += delta.toolUse.input;
    }
  }
  for (const block of content) if (block?.toolUse) block.toolUse.input = JSON.parse(block.toolUse.input || '{}');
  return { role: 'assistant', content: content.filter(Boolean) };
}

const messages = [{ role: 'user', content: [{ text: userMessage() }] }];
let answered = false;
for (let turn = 1; turn <= MAX_TURNS && !answered; turn++) {
  const message = await converse(messages);
  messages.push(message);
  const uses = (message?.content ?? []).filter((block) => block.toolUse);
  if (uses.length === 0) {
    const text = (message?.content ?? []).map((block) => block.text ?? '').join('');
    process.stdout.write(`${text}\n`);
    answered = true;
    break;
  }
  const results = [];
  for (const { toolUse } of uses) {
    trace(`${toolUse.name} ${JSON.stringify(toolUse.input ?? {})}`);
    const output = await runTool(toolUse.name, toolUse.input ?? {});
    results.push({ toolResult: { toolUseId: toolUse.toolUseId, content: [{ text: output }] } });
  }
  messages.push({ role: 'user', content: results });
}
if (!answered) {
  process.stderr.write(`gave up after ${MAX_TURNS} turns\n`);
  process.exitCode = 1;
}
