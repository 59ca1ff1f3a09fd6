// A deterministic FAKE model server — not a language model. It speaks OpenAI Chat Completions
// (POST /v1/chat/completions), OpenAI Responses (POST /v1/responses), Anthropic Messages
// (POST /v1/messages), Google Gemini (POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse), Ollama (POST /api/chat, NDJSON; /api/generate; /api/embed) and Bedrock Converse
// (POST /model/{id}/converse and /converse-stream, AWS event stream), Claude on Bedrock InvokeModel
// and on Vertex AI (wire/anthropic-platforms.ts), streaming and not, with provider-style usage (one module per
// wire API in wire/), and answers from a scripted policy: the travel desk's (fake-policy.ts) by
// default, or the one a world passes in (`policy`). Token counts come from text lengths; ids
// from a hash of the request; every exchange is logged with what the server meant to say.
import { createHash } from 'node:crypto';
import { appendFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import http2 from 'node:http2';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { decide } from './fake-policy.js';
import { anthropicWire } from './wire/anthropic.js';
import { bedrockInvokeWire, vertexAnthropicWire } from './wire/anthropic-platforms.js';
import { bedrockWire } from './wire/bedrock.js';
import { geminiWire } from './wire/gemini.js';
import { ollamaWire } from './wire/ollama.js';
import { ollamaEmbedWire } from './wire/ollama-embed.js';
import { ollamaGenerateWire } from './wire/ollama-generate.js';
import { openaiChatWire } from './wire/openai-chat.js';
import { openaiResponsesWire } from './wire/openai-responses.js';
import type { Obj, ScriptedPolicy, Wire } from './wire/shared.js';

export type { Meant, ScriptedPolicy } from './wire/shared.js';
export { tokens } from './wire/shared.js';

/** The wire APIs the server speaks. */
const WIRES: readonly Wire[] = [
  openaiChatWire,
  openaiResponsesWire,
  anthropicWire,
  geminiWire,
  ollamaWire,
  ollamaEmbedWire,
  ollamaGenerateWire,
  bedrockWire,
  bedrockInvokeWire,
  vertexAnthropicWire,
];

export interface ModelServer {
  url: string;
  server: Server;
  /**
   * One JSON line per exchange, in order: `{ seq, api, path, stream, request, response, meant }`
   * (`meant`: the text, tool calls and usage buckets the server meant, provider-independent).
   */
  log: string[];
  /** Forget the log (e.g. between runs in one world); the log file is truncated too. */
  clearLog(): void;
  close(): Promise<void>;
}

export interface ModelServerOptions {
  port?: number;
  logFile?: string;
  /** The scripted policy that decides each answer (default: the travel desk's `decide`). */
  policy?: ScriptedPolicy;
  /**
   * Milliseconds before each answer starts, as a real model takes time to think (default 0); a
   * function is asked again for each answer (a wait that varies, as a hosted model's does).
   */
  latencyMs?: number | (() => number);
}

export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const policy = options.policy ?? decide;
  const log: string[] = [];
  if (options.logFile) writeFileSync(options.logFile, '');
  const record = (entry: Obj) => {
    const line = JSON.stringify({ seq: log.length + 1, ...entry });
    log.push(line);
    if (options.logFile) appendFileSync(options.logFile, `${line}\n`);
  };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    serve(req, res, record, policy, options.latencyMs ?? 0).catch((err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      if (!res.headersSent) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', message } }));
      } else res.end();
    });
  };
  const server = createServer(handle);
  server.keepAliveTimeout = 1000;
  // HTTP/2 without TLS (h2c, prior knowledge) on the same port, as the AWS SDK's Bedrock client
  // speaks by default: a connection opening with the HTTP/2 preface goes to the HTTP/2 server
  // (its compatibility API gives `serve` the same request and response calls).
  const h2 = http2.createServer();
  h2.on('request', (req, res) => handle(req as unknown as IncomingMessage, res as unknown as ServerResponse));
  const sockets = new Set<Socket>();
  const door = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', (first: Buffer) => {
      socket.pause();
      if (first.subarray(0, 3).toString('latin1') !== 'PRI') {
        socket.unshift(first);
        server.emit('connection', socket);
        socket.resume();
        return;
      }
      // HTTP/2 reads a socket's handle directly, past what was unshifted: it gets a stream instead.
      h2.emit('connection', replayed(first, socket));
    });
  });
  await new Promise<void>((resolve) => door.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = door.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    log,
    clearLog() {
      log.length = 0;
      if (options.logFile) writeFileSync(options.logFile, '');
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => door.close(() => resolve()));
    },
  };
}

/** A duplex over `socket` that yields `first` before the rest of what the socket reads. */
function replayed(first: Buffer, socket: Socket): Duplex {
  const duplex = new Duplex({
    read: () => socket.resume(),
    write: (chunk, encoding, done) => socket.write(chunk, encoding, done),
    final: (done) => socket.end(done),
    destroy: (err, done) => {
      socket.destroy();
      done(err);
    },
  });
  duplex.push(first);
  socket.on('data', (data) => {
    if (!duplex.push(data)) socket.pause();
  });
  socket.on('end', () => duplex.push(null));
  socket.on('close', () => duplex.destroy());
  return duplex;
}

async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  record: (e: Obj) => void,
  policy: ScriptedPolicy,
  latency: number | (() => number),
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;
  if (req.method === 'GET' && path === '/health') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
    return;
  }
  const routed =
    req.method === 'POST' ? WIRES.map((wire) => ({ wire, route: wire.route(path) })).find((r) => r.route) : undefined;
  if (!routed?.route) {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { type: 'not_found_error', message: `no route for ${req.method} ${path}` } }));
    return;
  }
  const { wire, route } = routed;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = String(value);
  const refused = await wire.refuse?.({ method: 'POST', path, query: url.search, headers, raw: Buffer.concat(chunks) });
  if (refused !== undefined) {
    res.writeHead(403, { 'content-type': 'application/json', 'x-amzn-errortype': 'InvalidSignatureException' });
    res.end(JSON.stringify({ message: refused }));
    return;
  }
  const body = JSON.parse(raw) as Obj;
  const hash = createHash('sha256').update(raw).digest('hex').slice(0, 24);
  const stream = route.stream ?? (wire.streamsByDefault ? body.stream !== false : body.stream === true);
  const reply = wire.reply(body, { hash, path, policy });
  const api = wire.api;
  const latencyMs = typeof latency === 'function' ? latency() : latency;
  if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
  if (stream && reply.stream) {
    const { contentType, parts } = reply.stream();
    const text = parts.every((part) => typeof part === 'string') ? parts.join('') : undefined;
    const logged = text ?? Buffer.concat(parts.map((part) => Buffer.from(part))).toString('base64');
    record({ api, path, stream, request: body, response: { [text ? 'text' : 'base64']: logged }, meant: reply.meant });
    res.writeHead(200, { 'content-type': contentType });
    for (const part of parts) {
      res.write(part);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    res.end();
  } else if (stream) {
    const sse = reply.sse();
    record({ api, path, stream, request: body, response: { sse }, meant: reply.meant });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    // Write event by event, with a pause, so clients (and recorders) see real chunk boundaries
    // instead of one coalesced buffer.
    for (const event of sse.split(/(?<=\r?\n\r?\n)/)) {
      res.write(event);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    res.end();
  } else {
    const json = reply.json();
    record({ api, path, stream, request: body, response: json, meant: reply.meant });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(json));
  }
}
