// A real MCP server over stdio (the MCP SDK's McpServer on StdioServerTransport), as agents start
// them: a Node program the MCP client spawns with an env of its own. Its one tool, get_forecast,
// calls the weather API (WEATHER_URL) with fetch and stamps the answer with a random number and
// the time, so a replay shows whether the server's own calls and values came from the recording.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'weather-stdio', version: '1.0.0' });
server.registerTool(
  'get_forecast',
  { description: 'The weather forecast for a city.', inputSchema: { city: z.string().describe('city name') } },
  async ({ city }) => {
    const res = await fetch(`${process.env.WEATHER_URL}/forecast?city=${encodeURIComponent(city)}`);
    const body = await res.json();
    const stamp = `${Math.random().toFixed(6)} ${new Date().toISOString()}`;
    return { content: [{ type: 'text', text: `${city}: ${body.tempC}C ${body.sky} (${stamp})` }] };
  },
);
await server.connect(new StdioServerTransport());
