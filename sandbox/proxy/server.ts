// The sandbox's one door for HTTP(S): a forward proxy served by tapedeck outside the sandbox.
// Every request that reaches it — absolute-form HTTP (`GET http://host/…`, also `https://…`
// from tapedeck's own preloads), CONNECT tunnels carrying TLS (decrypted with a certificate for
// the host signed by the run's CA) or plain HTTP — is handed to ONE function,
// `answer(request) → response + provenance`, the same one the in-process preload's IPC path
// reaches. Answers may stream (an async iterable body is written chunk by chunk as it comes).
// Anything else through the door (a tunnel that is neither TLS nor HTTP/1.x, HTTP/2 prior
// knowledge, an Upgrade such as WebSocket) is refused and reported as an attempt, unless the
// caller's `passThrough` takes it (a replay's WebSocket answerer; a recording's upstream, which
// records the conversation: src/record/isolate-websocket.ts).
import { once } from 'node:events';
import http from 'node:http';
import type net from 'node:net';
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import type { RunCa } from './ca.js';

/** Header pairs in wire order; a name may repeat (three Set-Cookie stay three). */
export type HeaderPairs = Array<[string, string]>;

export interface ProxyRequest {
  method: string;
  /** Absolute URL: scheme, host, port as the client named them. */
  url: string;
  headers: HeaderPairs;
  body: Buffer;
  /** How it came in: a proxy request line, a CONNECT tunnel (TLS or plain), or a tapedeck preload. */
  via: 'proxy' | 'tunnel-tls' | 'tunnel-plain';
  /** The client's pid when the client said (tapedeck's preloads do, in Proxy-Authorization). */
  pid?: number;
  /**
   * The client presented a TLS client certificate in its tunnel (mTLS meant for the host): the
   * proxy asks every TLS client for one and never checks it, so a client configured with one says so.
   */
  clientCertificate?: true;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

export interface ProxyResponse {
  status: number;
  statusText?: string;
  headers: HeaderPairs;
  /** Bytes, or chunks as they come (a stream is written as it is produced). */
  body?: Uint8Array | string | AsyncIterable<Uint8Array | string>;
  /** Where the answer came from (recording, live, held back, …): carried into the replay. */
  provenance?: string;
  /** A network error instead of a response: the client's connection is cut. */
  error?: { code: string; message: string };
}

export type Answer = (request: ProxyRequest) => Promise<ProxyResponse>;

export interface ProxyAttempt {
  /** host:port or URL the client tried to reach. */
  target: string;
  reason: string;
  pid?: number;
}

export interface SandboxProxyOptions {
  ca: RunCa;
  answer: Answer;
  /** A way out that is not HTTP(S): refused, and reported here. */
  onRefused?: (attempt: ProxyAttempt) => void;
  /**
   * What cannot be answered as HTTP may be taken elsewhere instead (returns a socket that the
   * client's bytes go to, or undefined to refuse): non-HTTP tunnels and upgrades.
   */
  passThrough?: (target: PassTarget, kind: 'tunnel' | 'upgrade') => Promise<net.Socket | undefined>;
}

/** Where a tunnel or an upgrade goes; an upgrade's also names its URL and protocol. */
export interface PassTarget {
  host: string;
  port: number;
  /** An upgrade's URL (http: or https:, as the client reached it: a TLS tunnel's is https:). */
  url?: string;
  /** An upgrade's protocol, lower case (websocket). */
  protocol?: string;
  /** The client's pid when the client said. */
  pid?: number;
}

export interface SandboxProxy {
  /** Serves a listener (a port inside the sandbox, or a real loopback port). */
  serve(listener: net.Server): void;
  /**
   * Serves a listener that stands for `target` itself (the sandbox's own 10.0.3.7:8080): each
   * connection is taken as a client's CONNECT to it would be (TLS or HTTP/1.x answered, anything
   * else to `passThrough` or refused) — a program that reaches the address directly, without the proxy.
   */
  serveAs(listener: net.Server, target: { host: string; port: number }): void;
  /** Connections currently open through the proxy. */
  readonly open: number;
  close(): Promise<void>;
}

const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
const kTarget = Symbol('tapedeck.proxy.target');
/** Why a request's `signal` aborts: its client closed the connection before the answer was written whole. */
export const CLIENT_LEFT = 'the client went away';
/** The header a tapedeck preload names the real URL in when it hands a call to the proxy. */
export const TARGET_HEADER = 'x-tapedeck-target';

type Tagged = net.Socket & { [kTarget]?: { scheme: 'http' | 'https'; host: string; port: number; pid?: number } };

function pairsOf(raw: string[]): HeaderPairs {
  const out: HeaderPairs = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i] as string, raw[i + 1] as string]);
  return out;
}

/** The pid a tapedeck preload puts in Proxy-Authorization (`Basic base64("pid:<n>")`). */
function pidOf(headers: http.IncomingHttpHeaders): number | undefined {
  const auth = headers['proxy-authorization'];
  if (typeof auth !== 'string' || !auth.startsWith('Basic ')) return undefined;
  const m = /^pid:(\d+)/.exec(Buffer.from(auth.slice(6), 'base64').toString('latin1'));
  return m ? Number(m[1]) : undefined;
}

function splitHostPort(authority: string, defaultPort: number): { host: string; port: number } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(authority) ?? /^([^:]+)(?::(\d+))?$/.exec(authority);
  if (!m) return { host: authority, port: defaultPort };
  return { host: m[1] as string, port: m[2] ? Number(m[2]) : defaultPort };
}

const hostForUrl = (host: string): string => (host.includes(':') ? `[${host}]` : host);

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** `socket` as a plain duplex stream whose reading starts with `first` (already read from it). */
function replayable(socket: net.Socket, first: Buffer): Duplex {
  const duplex = new Duplex({
    read() {
      socket.resume();
    },
    write(chunk, encoding, callback) {
      socket.write(chunk, encoding, callback);
    },
    final(callback) {
      socket.end(callback);
    },
    destroy(error, callback) {
      socket.destroy(error ?? undefined);
      callback(error);
    },
  });
  duplex.push(first);
  socket.on('data', (data: Buffer) => {
    if (!duplex.push(data)) socket.pause();
  });
  socket.once('end', () => duplex.push(null));
  socket.once('close', () => duplex.destroy());
  socket.on('error', (error) => duplex.destroy(error));
  return duplex;
}

function isHttpStart(byte: number): boolean {
  // The first byte of an HTTP/1.x request line: an upper-case method letter.
  return byte >= 0x41 && byte <= 0x5a;
}

/** Writes `response` to `res`; streams an async-iterable body as it is produced. */
async function writeResponse(res: http.ServerResponse, response: ProxyResponse, head: boolean): Promise<void> {
  const raw: string[] = [];
  const { body } = response;
  const fixed = body === undefined || typeof body === 'string' || body instanceof Uint8Array;
  for (const [name, value] of response.headers) {
    const lower = name.toLowerCase();
    // The body is given decoded and whole (or as it streams): its length and coding are ours to state.
    if (HOP.has(lower) || lower === 'content-length' || lower === 'content-encoding') continue;
    raw.push(name, value);
  }
  const bytes = fixed ? Buffer.from((body as Uint8Array | string | undefined) ?? '') : undefined;
  const status = response.status >= 100 && response.status <= 999 ? response.status : 502;
  const noBody = head || status === 204 || status === 304 || (status >= 100 && status < 200);
  if (bytes && !noBody) raw.push('content-length', String(bytes.length));
  // The answer's own headers (a recorded Date among them), not the proxy's.
  res.sendDate = false;
  res.writeHead(status, response.statusText || http.STATUS_CODES[status] || '', raw);
  if (noBody) {
    res.end();
    return;
  }
  if (bytes) {
    res.end(bytes);
    return;
  }
  res.flushHeaders();
  for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
    if (res.destroyed) return;
    if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
  }
  res.end();
}

/**
 * Creates the proxy. `serve(listener)` attaches it to a listening socket (the sandbox hands
 * its in-namespace listener out; tests and the fallback give a real loopback one).
 * @example const proxy = createSandboxProxy({ ca, answer }); proxy.serve(server)
 */
export function createSandboxProxy(options: SandboxProxyOptions): SandboxProxy {
  const { ca, answer, onRefused } = options;
  const sockets = new Set<net.Socket>();
  const listeners = new Set<net.Server>();
  const refuse = (attempt: ProxyAttempt) => onRefused?.(attempt);

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const tag = (req.socket as Tagged)[kTarget];
    let url: string;
    let via: ProxyRequest['via'];
    if (tag) {
      url = `${tag.scheme}://${hostForUrl(tag.host)}${tag.port === (tag.scheme === 'https' ? 443 : 80) ? '' : `:${tag.port}`}${req.url ?? '/'}`;
      via = tag.scheme === 'https' ? 'tunnel-tls' : 'tunnel-plain';
    } else if (/^https?:\/\//i.test(req.url ?? '')) {
      url = req.url as string;
      via = 'proxy';
    } else if (typeof req.headers[TARGET_HEADER] === 'string' && /^https?:\/\//i.test(req.headers[TARGET_HEADER])) {
      // A tapedeck preload handing over a call it intercepted (record --isolate): the URL it was for.
      url = req.headers[TARGET_HEADER];
      via = 'proxy';
    } else {
      // Origin-form sent to the proxy itself: not a proxy request.
      refuse({ target: `${req.headers.host ?? '?'}${req.url ?? ''}`, reason: 'a request to the proxy itself' });
      res.writeHead(400, { 'content-type': 'text/plain' }).end('tapedeck sandbox proxy: send proxy requests\n');
      return;
    }
    const pid = tag?.pid ?? pidOf(req.headers);
    const presented =
      req.socket instanceof tls.TLSSocket && Object.keys(req.socket.getPeerCertificate() ?? {}).length > 0;
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort(new Error(CLIENT_LEFT));
    });
    try {
      const body = await readBody(req);
      const headers = pairsOf(req.rawHeaders).filter(
        ([name]) => !HOP.has(name.toLowerCase()) && name.toLowerCase() !== TARGET_HEADER,
      );
      const response = await answer({
        method: (req.method ?? 'GET').toUpperCase(),
        url,
        headers,
        body,
        via,
        ...(pid !== undefined ? { pid } : {}),
        ...(presented ? { clientCertificate: true as const } : {}),
        signal: abort.signal,
      });
      if (response.error) {
        res.destroy();
        return;
      }
      await writeResponse(res, response, req.method === 'HEAD');
    } catch (error) {
      if (res.headersSent) res.destroy(error as Error);
      else {
        res
          .writeHead(502, { 'content-type': 'text/plain', 'x-tapedeck-proxy-error': '1' })
          .end(`tapedeck sandbox proxy: ${(error as Error).message}\n`);
      }
    }
  };

  // Decrypted (or plain) traffic of CONNECT tunnels is parsed by a second server that never listens.
  const inner = http.createServer({ keepAlive: true }, (req, res) => void handle(req, res));
  const outer = http.createServer({ keepAlive: true }, (req, res) => void handle(req, res));
  for (const server of [inner, outer]) {
    server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      const tag = (req.socket as Tagged)[kTarget];
      const target = tag ? `${tag.host}:${tag.port}${req.url ?? ''}` : String(req.url);
      void upgrade(req, socket, target, head);
    });
    server.on('clientError', (_error, socket) => socket.destroy());
  }

  const upgrade = async (req: http.IncomingMessage, socket: net.Socket, target: string, head: Buffer) => {
    const tag = (req.socket as Tagged)[kTarget];
    const where = tag
      ? { host: tag.host, port: tag.port }
      : (() => {
          try {
            const u = new URL(String(req.url));
            return {
              host: u.hostname.replace(/^\[|\]$/g, ''),
              port: Number(u.port) || (u.protocol === 'https:' ? 443 : 80),
            };
          } catch {
            return undefined;
          }
        })();
    const pid = tag?.pid ?? pidOf(req.headers);
    const url = tag
      ? `${tag.scheme}://${hostForUrl(tag.host)}${tag.port === (tag.scheme === 'https' ? 443 : 80) ? '' : `:${tag.port}`}${req.url ?? '/'}`
      : String(req.url);
    const protocol = String(req.headers.upgrade ?? '').toLowerCase();
    const upstream =
      where && options.passThrough
        ? await options.passThrough({ ...where, url, protocol, ...(pid !== undefined ? { pid } : {}) }, 'upgrade')
        : undefined;
    if (!upstream) {
      refuse({
        target,
        reason: `${String(req.headers.upgrade ?? 'upgrade')} upgrade`,
        ...(pid !== undefined ? { pid } : {}),
      });
      socket.end('HTTP/1.1 502 Bad Gateway\r\nx-tapedeck-refused: upgrade\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    // The path with its query: a WebSocket's URL often carries its parameters there.
    const origin = tag ? req.url : (({ pathname, search }) => pathname + search)(new URL(String(req.url)));
    const lines = [`${req.method} ${origin} HTTP/1.1`];
    for (const [name, value] of pairsOf(req.rawHeaders)) {
      if (!/^proxy-/i.test(name)) lines.push(`${name}: ${value}`);
    }
    // What the client sent after its request (frames already) goes with it, in one write.
    upstream.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]));
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  };

  /** A tunnel to host:port (a CONNECT, or a connection to a door standing for the address), from its first bytes on. */
  const tunnel = (client: net.Socket, host: string, port: number, pid: number | undefined, head: Buffer) => {
    const start = async (first: Buffer) => {
      const byte = first[0] ?? 0;
      if (byte === 0x16) {
        // TLS: terminate it with a certificate for the host (SNI, else the CONNECT host), then
        // parse HTTP/1.1 inside. The bytes already read go in through a stream wrapper.
        let context: tls.SecureContext;
        try {
          context = await ca.contextFor(host);
        } catch {
          client.destroy();
          return;
        }
        const secure = new tls.TLSSocket(replayable(client, first), {
          isServer: true,
          secureContext: context,
          ALPNProtocols: ['http/1.1'],
          // Asked, never checked: a client configured with a certificate (curl --cert, requests'
          // cert=) presents it, and the request says so (ProxyRequest.clientCertificate).
          requestCert: true,
          rejectUnauthorized: false,
          SNICallback: (servername, cb) =>
            ca.contextFor(servername || host).then(
              (c) => cb(null, c),
              (error: Error) => cb(error),
            ),
        }) as Tagged;
        secure[kTarget] = { scheme: 'https', host, port, ...(pid !== undefined ? { pid } : {}) };
        secure.on('error', () => secure.destroy());
        inner.emit('connection', secure);
        return;
      }
      if (isHttpStart(byte) && !first.subarray(0, 24).toString('latin1').startsWith('PRI * HTTP/2')) {
        (client as Tagged)[kTarget] = { scheme: 'http', host, port, ...(pid !== undefined ? { pid } : {}) };
        client.unshift(first);
        inner.emit('connection', client);
        client.resume();
        return;
      }
      void rawTunnel(client, host, port, pid, first);
    };
    if (head.length > 0) void start(head);
    else
      client.once('data', (first: Buffer) => {
        client.pause();
        void start(first);
      });
  };

  outer.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const { host, port } = splitHostPort(String(req.url ?? ''), 443);
    client.on('error', () => client.destroy());
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    tunnel(client, host, port, pidOf(req.headers), head);
  });

  const rawTunnel = async (client: net.Socket, host: string, port: number, pid: number | undefined, first: Buffer) => {
    const upstream = options.passThrough ? await options.passThrough({ host, port }, 'tunnel') : undefined;
    if (!upstream) {
      const http2 = first.subarray(0, 24).toString('latin1').startsWith('PRI * HTTP/2');
      refuse({
        target: `${hostForUrl(host)}:${port}`,
        reason: http2 ? 'HTTP/2 (prior knowledge) tunnel' : 'a tunnel that is neither TLS nor HTTP',
        ...(pid !== undefined ? { pid } : {}),
      });
      client.destroy();
      return;
    }
    client.pipe(upstream).pipe(client);
    client.resume();
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  };

  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  outer.on('connection', track);

  return {
    serve(listener: net.Server) {
      listeners.add(listener);
      listener.on('connection', (socket: net.Socket) => outer.emit('connection', socket));
    },
    serveAs(listener: net.Server, target: { host: string; port: number }) {
      listeners.add(listener);
      listener.on('connection', (socket: net.Socket) => {
        track(socket);
        socket.on('error', () => socket.destroy());
        tunnel(socket, target.host, target.port, undefined, Buffer.alloc(0));
      });
    },
    get open() {
      return sockets.size;
    },
    async close() {
      for (const listener of listeners) listener.close();
      for (const socket of sockets) socket.destroy();
      inner.close();
      outer.close();
    },
  };
}
