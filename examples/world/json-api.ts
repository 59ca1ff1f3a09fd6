// The plumbing the example worlds' REST APIs share: a node:http server on 127.0.0.1 over a pg
// pool, JSON bodies in and out, and 4xx errors as `{ "error": { "code", "message" } }`.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

export type Json = Record<string, unknown>;

/** A request the API refuses: sent as `status` with `{ error: { code, message } }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface JsonApi {
  url: string;
  server: Server;
  pool: pg.Pool;
  close(): Promise<void>;
}

/** One route handler: the request and its URL in, `[status, body]` out (or an HttpError thrown). */
export type JsonHandler = (pool: pg.Pool, req: IncomingMessage, url: URL) => Promise<[number, Json]>;

/** Start an API on 127.0.0.1 (port 0 = any free port) against the database at `dbUrl`. */
export async function startJsonApi(options: { dbUrl: string; port?: number; handle: JsonHandler }): Promise<JsonApi> {
  const pool = new pg.Pool({ connectionString: options.dbUrl, max: 4 });
  // An idle connection the server drops (DROP DATABASE … FORCE on stop, a restart) is removed
  // from the pool; without a listener pg would throw it as an uncaught error.
  pool.on('error', () => {});
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    options
      .handle(pool, req, url)
      .then(([status, body]) => send(res, status, body))
      .catch((err: unknown) => {
        if (err instanceof HttpError) send(res, err.status, { error: { code: err.code, message: err.message } });
        else send(res, 500, { error: { code: 'internal', message: err instanceof Error ? err.message : String(err) } });
      });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    pool,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}

function send(res: ServerResponse, status: number, body: Json): void {
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The request's body as a JSON object, or a 400. */
export async function readJson(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new HttpError(400, 'invalid_body', 'expected a JSON body');
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
    return value as Json;
  } catch {
    throw new HttpError(400, 'invalid_body', 'the body is not a JSON object');
  }
}
