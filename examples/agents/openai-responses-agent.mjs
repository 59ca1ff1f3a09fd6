// The travel desk agent on the real `openai` SDK's Responses API (`responses.create`, or
// `responses.stream(...).finalResponse()` with `--stream` / AGENT_STREAM=1): the system prompt is
// `instructions`, tool calls come back as `function_call` items and go out as
// `function_call_output` items. Prints the final answer on stdout. Env: see examples/README.md.
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
  name: t.name,
  description: t.description,
  parameters: jsonSchema(t),
  strict: false,
}));
const instructions = await systemPrompt();

async function respond(input) {
  const params = { model, instructions, input, tools };
  if (!config.stream) return await client.responses.create(params);
  return await client.responses.stream(params).finalResponse();
}

const input = [{ role: 'user', content: userMessage() }];
let answered = false;
for (let turn = 1; turn <= MAX_TURNS && !answered; turn++) {
  const response = await respond(input);
  input.push(...response.output);
  const calls = response.output.filter((item) => item.type === 'function_call');
  if (calls.length === 0) {
    const text = response.output
      .filter((item) => item.type === 'message')
      .flatMap((item) => item.content)
      .filter((part) => part.type === 'output_text')
      .map((part) => part.text)
      .join('');
    process.stdout.write(`${text}\n`);
    answered = true;
    break;
  }
  for (const call of calls) {
    trace(`${call.name} ${call.arguments}`);
    const output = await runTool(call.name, JSON.parse(call.arguments || '{}'));
    input.push({ type: 'function_call_output', call_id: call.call_id, output });
  }
}
if (!answered) {
  process.stderr.write(`gave up after ${MAX_TURNS} turns\n`);
  process.exitCode = 1;
}
