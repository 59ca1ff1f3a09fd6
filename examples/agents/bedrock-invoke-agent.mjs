// The travel desk agent on Claude through Bedrock's InvokeModel API, on the real
// `@aws-sdk/client-bedrock-runtime` SDK: InvokeModelCommand, and InvokeModelWithResponseStreamCommand
// with `--stream` / AGENT_STREAM=1 (an AWS event stream whose `chunk` events carry the Anthropic
// stream's events as bytes). The body is Anthropic's Messages body with `anthropic_version:
// "bedrock-2023-05-31"` and no `model` (the model id is the command's `modelId`, in the path), as
// `@anthropic-ai/bedrock-sdk` and LangChain's Bedrock chat send it; the system prompt is a text
// block with a cache breakpoint. Requests are SigV4-signed with the credentials in the environment.
// Prints the final answer on stdout. Env: BEDROCK_ENDPOINT, AWS_REGION, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, BEDROCK_MODEL; the rest as examples/README.md.
import {
  BedrockRuntimeClient,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { anthropicTools, runAnthropicTurns } from './anthropic-loop.mjs';
import { config, systemPrompt } from './tools.mjs';

const client = new BedrockRuntimeClient({
  region: process.env.AWS_REGION ?? 'us-east-1',
  ...(process.env.BEDROCK_ENDPOINT ? { endpoint: process.env.BEDROCK_ENDPOINT } : {}),
});
const modelId = process.env.BEDROCK_MODEL ?? 'us.anthropic.claude-3-5-haiku-20241022-v1:0';
const params = {
  anthropic_version: 'bedrock-2023-05-31',
  max_tokens: 1024,
  system: [{ type: 'text', text: await systemPrompt(), cache_control: { type: 'ephemeral' } }],
  tools: anthropicTools,
};
const json = (bytes) => JSON.parse(new TextDecoder().decode(bytes));

/** The model's message: the answer's body, or the stream's events assembled as Anthropic's SDK does. */
async function complete(messages) {
  const input = { modelId, contentType: 'application/json', accept: 'application/json' };
  const body = JSON.stringify({ ...params, messages });
  if (!config.stream) return json((await client.send(new InvokeModelCommand({ ...input, body }))).body);
  const response = await client.send(new InvokeModelWithResponseStreamCommand({ ...input, body }));
  const content = [];
  const partial = [];
  for await (const item of response.body ?? []) {
    if (!item.chunk?.bytes) continue;
    const event = json(item.chunk.bytes);
    if (event.type === 'content_block_start') {
      content[event.index] = { ...event.content_block };
      partial[event.index] = '';
    } else if (event.type === 'content_block_delta' && event.delta.type === 'text_delta')
      content[event.index].text += event.delta.text;
    else if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta')
      partial[event.index] += event.delta.partial_json;
  }
  for (const [i, block] of content.entries())
    if (block?.type === 'tool_use') block.input = JSON.parse(partial[i] || '{}');
  return { role: 'assistant', content: content.filter(Boolean) };
}

await runAnthropicTurns(complete);
