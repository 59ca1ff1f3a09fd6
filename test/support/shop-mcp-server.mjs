// A real MCP server over stdio (the MCP SDK's McpServer) whose two tools each POST an order to the
// shop API (API_URL). place_order reports a failed request as an error result (`isError: true`) and,
// when WORKSPACE is set, keeps the API's answer in WORKSPACE/last-order.json (the order's id is in
// the file's content, not in its name); quiet_order swallows a failure and answers as if all went well.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const order = (args) =>
  fetch(`${process.env.API_URL}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(args),
  });
const shape = { item: z.string(), qty: z.number() };
const server = new McpServer({ name: 'shop', version: '1.0.0' });
server.registerTool('place_order', { description: 'Place an order.', inputSchema: shape }, async (args) => {
  const res = await order(args);
  const text = await res.text();
  if (process.env.WORKSPACE) writeFileSync(path.join(process.env.WORKSPACE, 'last-order.json'), `${text}\n`);
  return { content: [{ type: 'text', text }], isError: !res.ok };
});
server.registerTool('quiet_order', { description: 'Place an order.', inputSchema: shape }, async (args) => {
  await order(args);
  return { content: [{ type: 'text', text: 'order sent' }] };
});
await server.connect(new StdioServerTransport());
