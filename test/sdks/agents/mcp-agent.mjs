// An agent that gets its tools from an MCP server over Streamable HTTP (`@modelcontextprotocol/sdk`
// Client) and its decisions from an OpenAI-compatible model (`openai` SDK, Chat Completions):
// it lists the MCP tools, offers them to the model, runs each tool call with tools/call and
// returns the result to the model until it answers. Unchanged by tapedeck.
// Env: OPENAI_BASE_URL, OPENAI_API_KEY, MCP_URL. Prints `FINAL: <text>`; MCP transport errors on stderr.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';

const mcp = new Client({ name: 'weather-agent', version: '1.0.0' });
// Transport errors are logged, as agents do: a replay must show the same ones at the same moments.
mcp.onerror = (error) => process.stderr.write(`MCP ERROR: ${error.message}\n`);
const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL));
await mcp.connect(transport);
const { tools } = await mcp.listTools();

const openai = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY, maxRetries: 0 });
const messages = [
  { role: 'system', content: 'You are a weather desk. Use the MCP tools before answering.' },
  { role: 'user', content: 'What is the weather in Lima today?' },
];
const functions = tools.map((t) => ({
  type: 'function',
  function: { name: t.name, description: t.description ?? '', parameters: t.inputSchema },
}));

for (let turn = 0; turn < 4; turn++) {
  const completion = await openai.chat.completions.create({ model: 'fake-gpt-1', messages, tools: functions });
  const message = completion.choices[0].message;
  messages.push(message);
  if (!message.tool_calls?.length) {
    process.stdout.write(`FINAL: ${message.content}\n`);
    break;
  }
  for (const call of message.tool_calls) {
    const result = await mcp.callTool({ name: call.function.name, arguments: JSON.parse(call.function.arguments) });
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    messages.push({ role: 'tool', tool_call_id: call.id, content: text });
  }
}
// With --end-session, end the MCP session first (HTTP DELETE; the server then ends the stream).
if (process.argv.includes('--end-session')) await transport.terminateSession();
await mcp.close();
