// An OpenAI Agents SDK agent whose tools come from an MCP server, over the Responses API.
// Unchanged by tapedeck. By default the server is at MCP_URL (`MCPServerStreamableHttp`); with
// `--stdio` the agent starts it itself over stdio (`MCPServerStdio`: the MCP SDK's stdio
// transport, which gives the server PATH, HOME and four more variables plus the `env` it is
// handed): test/sdks/servers/mcp-stdio-server.mjs, which calls WEATHER_URL.
// Env: OPENAI_BASE_URL, OPENAI_API_KEY, MCP_URL or WEATHER_URL. Prints `FINAL: <finalOutput>`.
import { fileURLToPath } from 'node:url';
import { Agent, MCPServerStdio, MCPServerStreamableHttp, run, setTracingDisabled } from '@openai/agents';

setTracingDisabled(true);

const weather = process.argv.includes('--stdio')
  ? new MCPServerStdio({
      name: 'weather-stdio',
      command: process.execPath,
      args: [fileURLToPath(new URL('../servers/mcp-stdio-server.mjs', import.meta.url))],
      env: { WEATHER_URL: process.env.WEATHER_URL },
    })
  : new MCPServerStreamableHttp({ url: process.env.MCP_URL, name: 'weather-mcp' });
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
