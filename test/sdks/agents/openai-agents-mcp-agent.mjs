// An OpenAI Agents SDK agent whose tools come from an MCP server (`MCPServerStreamableHttp`),
// over the Responses API. Unchanged by tapedeck. Env: OPENAI_BASE_URL, OPENAI_API_KEY, MCP_URL.
// Prints `FINAL: <finalOutput>`.
import { Agent, MCPServerStreamableHttp, run, setTracingDisabled } from '@openai/agents';

setTracingDisabled(true);

const weather = new MCPServerStreamableHttp({ url: process.env.MCP_URL, name: 'weather-mcp' });
await weather.connect();
try {
  const agent = new Agent({
    name: 'Weather desk',
    instructions: 'You are a weather desk. Use the MCP tools before answering.',
    model: 'fake-gpt-1',
    mcpServers: [weather],
  });
  const result = await run(agent, 'What is the weather in Lima today?');
  process.stdout.write(`FINAL: ${result.finalOutput}\n`);
} finally {
  await weather.close();
}
