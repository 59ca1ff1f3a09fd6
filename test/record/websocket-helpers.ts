// Helpers for the WebSocket tests (record and replay): a real ws server on 127.0.0.1, the agent
// that holds a conversation with it (fixtures/websocket-agent.mjs), recorded.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { WebSocketServer } from 'ws';
import { FIXTURES } from './helpers.js';

const AGENT = path.join(FIXTURES, 'websocket-agent.mjs');
export const TOKEN = 'sk-live-websocket-secret-0123456789abcdef';

export interface WsServer {
  url: string;
  /** wss://: the CA its certificate is signed by (a file the agent is given as NODE_EXTRA_CA_CERTS). */
  caFile?: string;
  /** The Authorization header of each upgrade the server accepted. */
  seen: string[];
  /** Sends a message to every connected client (a push no message of theirs asked for). */
  push(text: string): void;
  close(): Promise<void>;
}

/**
 * A ws server on 127.0.0.1 that pushes a welcome, then echoes text, sums JSON, answers JSON-RPC and
 * reverses bytes. `tls`: wss://, its certificate signed by a CA written to `tls.dir`; with
 * `tls.host` (a name, such as localhost) the certificate is that name's and a client that does not
 * ask for it by SNI is cut off, and the URL names it.
 */
export async function startWsServer(options: { tls?: { dir: string; host?: string } } = {}): Promise<WsServer> {
  let https: http.Server | undefined;
  let listener: net.Server | undefined;
  let caFile: string | undefined;
  if (options.tls) {
    // TLS over each socket with the certificate for 127.0.0.1 (a client sends no SNI for an IP).
    const { createRunCa } = await import('../../sandbox/proxy/ca.js');
    const ca = await createRunCa('tapedeck test server CA');
    caFile = path.join(options.tls.dir, 'ws-server-ca.pem');
    writeFileSync(caFile, ca.certPem);
    const host = options.tls.host;
    const secureContext = await ca.contextFor(host ?? '127.0.0.1');
    const server = http.createServer();
    https = server;
    listener = net.createServer((raw) => {
      const socket = new tls.TLSSocket(raw, { isServer: true, secureContext });
      socket.on('error', () => raw.destroy());
      // Named: a client that did not ask for the name (SNI) is no client of this server's.
      socket.on('secure', () => {
        if (host !== undefined && (socket as tls.TLSSocket & { servername?: string | false }).servername !== host)
          socket.destroy();
      });
      server.emit('connection', socket);
    });
    const tcp = listener;
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
  }
  const wss = https ? new WebSocketServer({ server: https }) : new WebSocketServer({ port: 0, host: '127.0.0.1' });
  const seen: string[] = [];
  wss.on('connection', (socket, req) => {
    seen.push(String(req.headers.authorization));
    socket.send('welcome');
    socket.on('message', (data: Buffer, isBinary) => {
      if (isBinary) return socket.send(Buffer.from([...data].reverse()));
      const text = String(data);
      if (text.startsWith('{')) {
        const { args, id, jsonrpc } = JSON.parse(text) as { args: [number, number]; id: number; jsonrpc?: string };
        // MCP over a WebSocket: a JSON-RPC answer to a tools/call.
        if (jsonrpc === '2.0')
          return socket.send(JSON.stringify({ jsonrpc, id, result: { content: [{ type: 'text', text: 'sunny' }] } }));
        return socket.send(JSON.stringify({ sum: args[0] + args[1], id }));
      }
      socket.send(`echo ${text}`);
    });
  });
  if (!https) await new Promise((resolve) => wss.on('listening', resolve));
  const port = ((listener ?? wss).address() as net.AddressInfo).port;
  return {
    url: `${https ? 'wss' : 'ws'}://${options.tls?.host ?? '127.0.0.1'}:${port}/live?room=1`,
    ...(caFile === undefined ? {} : { caFile }),
    seen,
    push: (text) => {
      for (const client of wss.clients) client.send(text);
    },
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise((resolve) => wss.close(resolve));
      const tcp = listener;
      if (tcp) await new Promise((resolve) => tcp.close(resolve));
    },
  };
}

/** Records the agent holding its conversation with `url` (CLIENT, MESSAGE in `env`). */
export async function recordConversation(
  out: string,
  url: string,
  env: Record<string, string> = {},
  fsRoot?: string,
  how: { isolate?: boolean; command?: string[] } = {},
) {
  const { recordCommand } = await import('../../src/record/index.js');
  let stdout = '';
  const result = await recordCommand({
    command: how.command ?? [process.execPath, AGENT],
    ...(how.isolate ? { isolate: true } : {}),
    env: { WS_URL: url, WS_TOKEN: TOKEN, ...env },
    out,
    stdio: 'pipe',
    ...(fsRoot === undefined ? {} : { fsRoot }),
    onSpawn: (child) => child.stdout?.on('data', (d: Buffer) => (stdout += d.toString())),
  });
  return { result, got: JSON.parse(stdout || 'null') as string[] };
}

/** Every file of a folder, as text (a secret must be in none of them). */
export function allText(dir: string): string {
  let text = '';
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    text += statSync(file).isDirectory() ? allText(file) : readFileSync(file, 'latin1');
  }
  return text;
}

export const CONVERSATION = ['welcome', 'echo hello', '{"sum":3,', 'bytes 255,3,2,1', 'echo bye', 'closed 1000'];
