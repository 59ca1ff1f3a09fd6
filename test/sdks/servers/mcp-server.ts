// A real MCP server (the MCP SDK's McpServer over StreamableHTTPServerTransport on node:http,
// stateful sessions, SSE answers — the SDK's defaults) with one tool, `get_forecast`. It counts
// tools/call hits so tests can prove a replay never reached it.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface McpTestServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:PORT/mcp */
  url: string;
  toolCalls(): number;
  close(): Promise<void>;
}

const FORECASTS: Record<string, string> = { paris: '18C cloudy', oslo: '4C snow', lima: '22C sunny' };

function newServer(onCall: () => void): McpServer {
  const server = new McpServer({ name: 'weather-mcp', version: '1.0.0' });
  server.registerTool(
    'get_forecast',
    {
      description: 'The weather forecast for a city.',
      inputSchema: { city: z.string().describe('city name') },
    },
    async ({ city }) => {
      onCall();
      const forecast = FORECASTS[city.toLowerCase()];
      return forecast === undefined
        ? { content: [{ type: 'text', text: `no forecast for ${city}` }], isError: true }
        : { content: [{ type: 'text', text: `${city}: ${forecast}` }] };
    },
  );
  return server;
}

export async function startMcpServer(): Promise<McpTestServer> {
  let calls = 0;
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const httpServer = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const body: unknown = text === '' ? undefined : JSON.parse(text);
        const sessionId = req.headers['mcp-session-id'];
        let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
        if (transport === undefined) {
          if (req.method !== 'POST' || sessionId !== undefined) {
            res.writeHead(400, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no such session' }, id: null }));
            return;
          }
          const created = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (id) => {
              transports.set(id, created);
            },
          });
          created.onclose = () => {
            if (created.sessionId !== undefined) transports.delete(created.sessionId);
          };
          await newServer(() => calls++).connect(created);
          transport = created;
        }
        await transport.handleRequest(req, res, body);
      })().catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500);
        res.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    toolCalls: () => calls,
    close: async () => {
      for (const transport of transports.values()) await transport.close().catch(() => {});
      await new Promise<void>((resolve) => {
        httpServer.closeAllConnections();
        httpServer.close(() => resolve());
      });
    },
  };
}
